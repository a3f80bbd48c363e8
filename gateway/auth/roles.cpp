#include "gateway/auth/roles.hpp"

namespace gateway::auth {

namespace {

reach reach_of(const route_rule& r, role as) {
    switch (as) {
        case role::admin:
            return r.admin;
        case role::team_admin:
            return r.team_admin;
        case role::member:
            return r.member;
        case role::viewer:
            break;
    }
    return r.viewer;
}

std::string named(const principal& who) {
    std::string text = "the role `" + std::string(role_name(who.as)) + "`";
    if (who.as == role::team_admin)
        text += who.team.empty() ? " (of no team)" : " (of team `" + who.team + "`)";
    return text;
}

}  // namespace

const std::vector<route_rule>& admin_rules() {
    using enum reach;
    // clang-format off
    static const std::vector<route_rule> rules{
        // method   route                   admin team_admin member viewer
        {"GET",    "/admin/keys",          any,  team,      own,   own},
        {"POST",   "/admin/keys",          any,  team,      own,   none},
        {"GET",    "/admin/keys/{id}",     any,  team,      own,   own},
        {"PATCH",  "/admin/keys/{id}",     any,  team,      own,   none},
        {"DELETE", "/admin/keys/{id}",     any,  team,      own,   none},
        {"GET",    "/admin/usage",         any,  team,      own,   own},
        {"GET",    "/admin/teams",         any,  team,      none,  none},
        {"POST",   "/admin/teams",         any,  none,      none,  none},
        {"PATCH",  "/admin/teams/{name}",  any,  none,      none,  none},
        {"DELETE", "/admin/teams/{name}",  any,  none,      none,  none},
        {"GET",    "/admin/users",         any,  team,      none,  none},
        {"PATCH",  "/admin/users/{id}",    any,  team,      none,  none},
        {"GET",    "/admin/audit",         any,  team,      none,  none},
        {"GET",    "/admin/health",        any,  none,      none,  none},
        {"GET",    "/admin/log",           any,  none,      none,  none},
        {"POST",   "/admin/reload",        any,  none,      none,  none},
    };
    // clang-format on
    return rules;
}

std::string admin_refusal(const principal& who, std::string_view method, std::string_view route,
                          const std::optional<owner>& of) {
    auto granted = who.as == role::admin ? reach::any : reach::none;
    for (const auto& r : admin_rules())
        if (r.method == method && r.route == route) granted = reach_of(r, who.as);
    auto what = std::string(method) + " " + std::string(route);
    switch (granted) {
        case reach::any:
            return {};
        case reach::none:
            return "The admin API refuses " + what + " to " + named(who) + ".";
        case reach::team:
            // A team admin's own team's objects, its members' included; never a team-less one.
            if (!of || (!who.team.empty() && of->team == who.team)) return {};
            return named(who) + " may " + what + " only for objects of their own team.";
        case reach::own:
            if (!of || (!who.user_id.empty() && of->user == who.user_id)) return {};
            return named(who) + " may " + what + " only for their own objects.";
    }
    return "The admin API refuses " + what + ".";
}

std::string context_refusal(const principal& who, std::string_view method) {
    if (who.as != role::viewer || method == "GET" || method == "HEAD") return {};
    return "The Context API is read-only for " + named(who) + ": " + std::string(method) +
           " is refused.";
}

}  // namespace gateway::auth
