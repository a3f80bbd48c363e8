// GET /admin/audit: the audit log that route() writes (access.cpp), read with filters.
#include "gateway/admin/api.hpp"

#include "gateway/config/config.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <map>

namespace gateway::admin {

namespace json = boost::json;

namespace {

constexpr std::int64_t max_audit_limit = 1000;

// The query `target` asks for; the error names the parameter ("" when it is good).
std::string audit_query_of(std::string_view target, store::audit_query& q) {
    q.actor = http::query_value(target, "actor");
    q.action = http::query_value(target, "action");
    q.target = http::query_value(target, "target");
    for (auto [name, into] :
         {std::pair<const char*, std::int64_t*>{"from", &q.from}, {"to", &q.to}}) {
        auto text = http::query_value(target, name);
        if (text.empty()) continue;
        auto at = config::parse_time(text);
        if (!at)
            return std::string("`") + name +
                   "` must be a time such as 2026-11-01 or 2026-11-01T12:00:00Z";
        *into = *at;
    }
    // A day given as `to` means the whole of it.
    if (auto text = http::query_value(target, "to"); text.size() == 10 && q.to)
        q.to += 86'400'000 - 1;
    if (auto text = http::query_value(target, "limit"); !text.empty()) {
        std::int64_t limit = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
        if (ec != std::errc() || end != text.data() + text.size() || limit < 1 ||
            limit > max_audit_limit)
            return "`limit` must be a whole number from 1 to " + std::to_string(max_audit_limit);
        q.limit = limit;
    }
    return {};
}

}  // namespace

net::awaitable<http::reply> api::audit(http::request_context& ctx) {
    store::audit_query q;
    if (auto error = audit_query_of(ctx.req.target(), q); !error.empty())
        co_return http::reply::error(errc::invalid_parameters, error);
    // A team admin reads their team's records only (roles.cpp lets no other role here but
    // admins); one of no team, none.
    const auto& who = *ctx.principal;
    if (who.as != auth::role::admin) q.team = who.team;
    std::vector<store::audit_record> records;
    if (who.as == auth::role::admin || !who.team.empty()) records = co_await store_.audit(q);
    // The people behind the user ids, by their email.
    std::map<std::string, std::string, std::less<>> emails;
    bool people = false;
    for (const auto& r : records) people = people || r.actor != "api-key";
    if (people) {
        auto users = co_await store_.users();
        for (const auto& u : users) emails[u.id] = u.email;
    }
    json::array data;
    for (const auto& r : records) {
        boost::system::error_code ec;
        auto detail = json::parse(r.detail, ec);
        auto email = emails.find(r.actor);
        data.push_back(json::object{
            {"id", r.id},
            {"at", config::format_time(r.at)},
            {"actor", r.actor},
            {"actor_email",
             email == emails.end() ? json::value(nullptr) : json::value(email->second)},
            {"actor_role", r.actor_role},
            {"action", r.action},
            {"target", r.target},
            {"team", r.team.empty() ? json::value(nullptr) : json::value(r.team)},
            {"detail", ec ? json::value(json::object{}) : detail},
            {"remote", r.remote},
        });
    }
    co_return http::reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

}  // namespace gateway::admin
