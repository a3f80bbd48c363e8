// Who may do what on /admin, asked once per request (auth/roles.hpp), and the audit record of
// every change that succeeded.
#include "gateway/admin/api.hpp"

#include "gateway/admin/teams.hpp"
#include "gateway/clock.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/json.hpp>

namespace gateway::admin {

namespace json = boost::json;

namespace {

// What a change is called in the audit log; a route without a name here is recorded by its
// method and pattern.
std::string action_of(std::string_view method, std::string_view route) {
    // clang-format off
    static constexpr std::pair<std::string_view, std::string_view> names[] = {
        {"POST /admin/keys",           "key.create"},
        {"PATCH /admin/keys/{id}",     "key.update"},
        {"DELETE /admin/keys/{id}",    "key.revoke"},
        {"POST /admin/teams",          "team.create"},
        {"PATCH /admin/teams/{name}",  "team.update"},
        {"DELETE /admin/teams/{name}", "team.delete"},
        {"PATCH /admin/users/{id}",    "user.update"},
        {"POST /admin/reload",         "config.reload"},
    };
    // clang-format on
    auto asked = std::string(method) + " " + std::string(route);
    for (const auto& [route_of, name] : names)
        if (route_of == asked) return std::string(name);
    return asked;
}

// The members of a request body never written to the log, whatever route takes them.
bool secret_member(std::string_view name) {
    for (std::string_view s : {"key", "secret", "api_key", "client_secret", "password", "token"})
        if (name == s) return true;
    return false;
}

std::string text_member(const json::object& o, std::string_view name) {
    const auto* v = o.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

http::handler api::route(method m) {
    return route([this, m](http::request_context& ctx) { return (this->*m)(ctx); });
}

http::handler api::route(reply_handler h) {
    return [this, h = std::move(h)](http::request_context& ctx) -> net::awaitable<void> {
        auto answer = co_await serve(ctx, h);
        co_await http::write_reply(ctx, std::move(answer));
    };
}

net::awaitable<http::reply> api::serve(http::request_context& ctx, const reply_handler& h) {
    // The guard let nobody in without a principal; this holds if a route is ever mounted
    // without it.
    if (!ctx.principal)
        co_return http::reply::error(errc::unauthorized, "The admin API needs a principal.");
    std::string_view method = ctx.req.method_string();
    auto of = co_await owner_of(ctx);
    if (auto why = auth::admin_refusal(*ctx.principal, method, ctx.route, of); !why.empty())
        co_return http::reply::error(errc::forbidden, why);
    auto answer = co_await h(ctx);
    if (method != "GET" && method != "HEAD" && answer.status < 300)
        co_await record_change(ctx, of, answer);
    co_return answer;
}

auth::owner api::key_owner_asked(const json::object& body, const auth::principal& who) {
    auth::owner asked{text_member(body, "team"), text_member(body, "user")};
    bool personal = who.as == auth::role::member || who.as == auth::role::viewer;
    if (asked.team.empty() && asked.user.empty() && personal) asked.user = who.user_id;
    return asked;
}

net::awaitable<auth::owner> api::owner_of_key(const virtual_key& key) {
    if (!key.team.empty() || key.user.empty()) co_return auth::owner{key.team, key.user};
    auto user = co_await store_.user(key.user);
    co_return auth::owner{user ? user->team : std::string(), key.user};
}

net::awaitable<std::optional<auth::owner>> api::owner_of(const http::request_context& ctx) {
    const auto& params = ctx.path_params;
    if (ctx.route == "/admin/keys/{id}") {
        auto key = keys_.by_id(params.at(0));
        if (!key) co_return std::nullopt;
        auto of = co_await owner_of_key(*key);
        co_return of;
    }
    if (ctx.route == "/admin/teams/{name}") co_return auth::owner{params.at(0), ""};
    if (ctx.route == "/admin/users/{id}") {
        auto user = co_await store_.user(params.at(0));
        if (!user) co_return std::nullopt;
        // A user of no team is, as far as a team admin goes, the team a change takes them into:
        // how a team admin takes a newcomer in (users_api.cpp).
        if (user->team.empty() && ctx.req.method() == boost::beast::http::verb::patch) {
            std::string error;
            if (auto body = http::body_object(ctx.req.body(), error))
                co_return auth::owner{text_member(*body, "team"), user->id};
        }
        co_return auth::owner{user->team, user->id};
    }
    if (ctx.route == "/admin/keys" && ctx.req.method() == boost::beast::http::verb::post) {
        std::string error;
        auto body = http::body_object(ctx.req.body(), error);
        if (!body) co_return std::nullopt;  // the handler answers the bad body
        auto asked = key_owner_asked(*body, *ctx.principal);
        // A key for a user is their team's as far as a team admin goes.
        if (asked.team.empty() && !asked.user.empty()) {
            auto user = co_await store_.user(asked.user);
            if (user) asked.team = user->team;
        }
        co_return asked;
    }
    co_return std::nullopt;
}

bool api::sees(const auth::principal& who, const auth::owner& of) {
    switch (who.as) {
        case auth::role::admin:
            return true;
        case auth::role::team_admin:
            return !who.team.empty() && of.team == who.team;
        case auth::role::member:
        case auth::role::viewer:
            break;
    }
    return !who.user_id.empty() && of.user == who.user_id;
}

net::awaitable<void> api::record_change(const http::request_context& ctx,
                                        const std::optional<auth::owner>& of,
                                        const http::reply& answer) {
    const auto& who = *ctx.principal;
    store::audit_record r;
    r.at = now_ms();
    r.actor = who.from == auth::principal::kind::automation ? "api-key" : who.user_id;
    r.actor_role = std::string(auth::role_name(who.as));
    r.action = action_of(ctx.req.method_string(), ctx.route);
    // The fields the request changed, as it sent them (no admin body carries a secret; a member
    // that might is dropped all the same).
    json::object changed;
    std::string error;
    if (auto body = http::body_object(ctx.req.body(), error))
        for (const auto& [name, value] : *body)
            if (!secret_member(name)) changed[name] = value;
    r.detail = json::serialize(changed);
    // The object: the path's, or the one made (its id or name as the answer gives it).
    json::object made;
    boost::system::error_code ec;
    if (auto parsed = json::parse(answer.body, ec); !ec && parsed.is_object())
        made = parsed.get_object();
    r.target = !ctx.path_params.empty() ? ctx.path_params.front() : text_member(made, "id");
    if (r.target.empty()) r.target = text_member(made, "name");
    r.team = of ? of->team : text_member(made, "team");
    if (r.action.starts_with("team.")) r.team = r.target;
    auto remote = ctx.stream.remote_endpoint(ec);
    if (!ec) r.remote = remote.address().to_string();
    co_await store_.append_audit(std::move(r));
}

}  // namespace gateway::admin
