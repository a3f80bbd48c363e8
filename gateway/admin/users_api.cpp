// /admin/users: the people who signed in (auth/), with the role and team an admin gives them.
#include "gateway/admin/api.hpp"

#include "gateway/admin/teams.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/json.hpp>

namespace gateway::admin {

namespace json = boost::json;

namespace {

json::object user_json(const store::user_record& u) {
    return json::object{
        {"object", "user"},
        {"id", u.id},
        {"email", u.email},
        {"name", u.name},
        {"role", u.role},
        {"team", u.team.empty() ? json::value(nullptr) : json::value(u.team)},
        {"created_at", config::format_time(u.created_at)},
        {"signed_in_at",
         u.signed_in_at ? json::value(config::format_time(u.signed_in_at)) : nullptr},
    };
}

bool personal(std::string_view role) {
    return role == auth::role_name(auth::role::member) ||
           role == auth::role_name(auth::role::viewer);
}

// Whether `who` is a team admin who may take `u` into their team: a member or viewer of no team.
// The only users outside their team a team admin sees, so that a newcomer can be found.
bool takes_in(const auth::principal& who, const store::user_record& u) {
    return who.as == auth::role::team_admin && !who.team.empty() && u.team.empty() &&
           personal(u.role);
}

}  // namespace

net::awaitable<http::reply> api::list_users(http::request_context& ctx) {
    const auto& who = *ctx.principal;
    auto users = co_await store_.users();
    json::array data;
    for (const auto& u : users)
        if (sees(who, {u.team, u.id}) || takes_in(who, u)) data.push_back(user_json(u));
    co_return http::reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<http::reply> api::update_user(http::request_context& ctx) {
    const auto& who = *ctx.principal;
    auto user = co_await store_.user(ctx.path_params.at(0));
    if (!user) co_return http::reply::error(errc::not_found, "No such user.");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    if (!body) co_return http::reply::error(errc::invalid_parameters, error);
    std::optional<std::string> role, team;
    for (const auto& [name, value] : *body) {
        if (name != "role" && name != "team")
            co_return http::reply::error(errc::invalid_parameters,
                                         "unknown member `" + std::string(name) + "`");
    }
    if (const auto* v = body->if_contains("role")) {
        if (!v->is_string() || !auth::role_of(v->get_string()))
            co_return http::reply::error(errc::invalid_parameters,
                                         "`role` must be admin, team_admin, member or viewer");
        role = std::string(v->get_string());
    }
    if (const auto* v = body->if_contains("team")) {
        if (v->is_null()) {
            team = std::string();
        } else if (!v->is_string() || !teams_.by_name(v->get_string())) {
            co_return http::reply::error(errc::invalid_parameters,
                                         "`team` must name a team (GET /admin/teams), or be null");
        } else {
            team = std::string(v->get_string());
        }
    }
    // A team admin manages their members and takes newcomers in (a user of no team is the team's
    // the change names, access.cpp): roles up to member, and their own team only.
    if (who.as == auth::role::team_admin) {
        if (!personal(user->role) || (role && !personal(*role)) || (team && *team != who.team))
            co_return http::reply::error(
                errc::forbidden, "The role `team_admin` may make a member of team `" + who.team +
                                     "` a member or a viewer of that team, nothing more.");
    }
    co_await store_.update_user(user->id, role, team);
    if (role) user->role = *role;
    if (team) user->team = *team;
    co_return http::reply::json(200, user_json(*user));
}

}  // namespace gateway::admin
