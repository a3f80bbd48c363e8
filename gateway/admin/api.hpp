#pragma once

#include "gateway/admin/key_ring.hpp"
#include "gateway/auth/roles.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/http/router.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <string>

namespace gateway::store {
class state_store;
}

namespace gateway::admin {

namespace net = boost::asio;
class limiter;
class team_book;
class usage_ledger;

// /admin: virtual keys and usage reports, for operators. Every request needs a principal
// (auth/sessions.hpp: `Authorization: Bearer <admin.api_key>` or a signed-in user's session;
// guard()); without an admin key or sign-in the routes do not exist.
//
//   POST   /admin/keys        {name, models?, rpm?, tpm?, max_parallel?,
//                             budget?: {usd, tokens, period: day | week | month},
//                             expires_at?, team? | user?} -> 201 with the key's view and `key`,
//                             the secret, once; `team` or `user` owns it (fixed from then on)
//   GET    /admin/keys        every live key the principal may see, with its usage (all time and
//                             in its budget period)
//   GET    /admin/keys/{id}
//   PATCH  /admin/keys/{id}   any of the fields above (declared keys cannot change: 409)
//   DELETE /admin/keys/{id}   revokes at once; its usage stays in the reports
//   GET    /admin/usage?key=&model=&upstream=&team=&from=&to=&group_by=day,key,model,upstream,
//          team&format=csv    usage and spend per the dimensions named (usage_report.hpp)
//   GET    /admin/teams, POST /admin/teams, PATCH|DELETE /admin/teams/{name}    (teams_api.cpp)
//                             {name, budget: {usd, period}, models: [globs]}
//   GET    /admin/users, PATCH /admin/users/{id} {role, team}                  (users_api.cpp)
//   GET    /admin/audit?actor=&action=&target=&from=&to=&limit=                (audit.cpp)
//   GET    /admin/health      every upstream's and route target's health (docs/routing.md)
//   GET    /admin/log         the access lines as they happen, as server-sent events
//
// What each role may do is asked once per request, in route() (auth/roles.hpp): a request its
// principal's role may not make is refused (403) before the handler runs; handlers list only
// what the principal may see. route() also writes every change that succeeded to the audit log.
// Thread-safe: one instance serves every worker.
class api {
public:
    // The routes and health of the configuration serving now (a reload switches them), held
    // while one request reads them.
    using routing_now = std::function<std::shared_ptr<upstream::routing>()>;
    api(key_ring& keys, team_book& teams, store::state_store& store, usage_ledger& ledger,
        limiter& limits, routing_now routing);

    using method = net::awaitable<http::reply> (api::*)(http::request_context&);
    using reply_handler = std::function<net::awaitable<http::reply>(http::request_context&)>;
    http::handler route(method m);
    // Any handler of an admin route (POST /admin/reload's is the server's), checked and audited
    // as the API's own are.
    http::handler route(reply_handler h);
    http::guard guard() const;

    net::awaitable<http::reply> create_key(http::request_context& ctx);
    net::awaitable<http::reply> list_keys(http::request_context& ctx);
    net::awaitable<http::reply> get_key(http::request_context& ctx);
    net::awaitable<http::reply> update_key(http::request_context& ctx);
    net::awaitable<http::reply> delete_key(http::request_context& ctx);
    net::awaitable<http::reply> usage(http::request_context& ctx);
    net::awaitable<http::reply> health(http::request_context& ctx);
    net::awaitable<http::reply> request_log(http::request_context& ctx);

    net::awaitable<http::reply> list_teams(http::request_context& ctx);
    net::awaitable<http::reply> create_team(http::request_context& ctx);
    net::awaitable<http::reply> update_team(http::request_context& ctx);
    net::awaitable<http::reply> delete_team(http::request_context& ctx);
    net::awaitable<http::reply> list_users(http::request_context& ctx);
    net::awaitable<http::reply> update_user(http::request_context& ctx);
    net::awaitable<http::reply> audit(http::request_context& ctx);

private:
    // The role check, the handler and the audit record of one request (route()).
    net::awaitable<http::reply> serve(http::request_context& ctx, const reply_handler& h);
    // Who owns the object the request names (auth::owner; nullopt: none, or no such object).
    net::awaitable<std::optional<auth::owner>> owner_of(const http::request_context& ctx);
    // Who owns `key`: its team, or its user and the user's team.
    net::awaitable<auth::owner> owner_of_key(const virtual_key& key);
    // Whether the principal may see an object `of` owns (what lists and reports keep).
    static bool sees(const auth::principal& who, const auth::owner& of);
    // The owner a POST /admin/keys body asks for (`team` or `user`); a member or viewer who names
    // none asks for a key of their own.
    static auth::owner key_owner_asked(const boost::json::object& body, const auth::principal& who);
    // Appends the change `ctx` made (answered `answer`) to the audit log.
    net::awaitable<void> record_change(const http::request_context& ctx,
                                       const std::optional<auth::owner>& of,
                                       const http::reply& answer);

    key_ring& keys_;
    team_book& teams_;
    store::state_store& store_;
    usage_ledger& ledger_;
    limiter& limits_;
    routing_now routing_;
};

// A USD amount as JSON gives it: a number (its shortest decimal form, which is what was
// written) or a string such as "25.00"; in nano-dollars. nullopt: not an amount.
std::optional<std::uint64_t> usd_of(const boost::json::value& v);

}  // namespace gateway::admin
