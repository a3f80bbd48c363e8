#pragma once

#include "gateway/admin/key_ring.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/http/router.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>

namespace gateway::store {
class key_store;
}

namespace gateway::admin {

namespace net = boost::asio;
class limiter;
class usage_ledger;

// /admin: virtual keys and usage reports, for operators. Every request needs a principal
// (auth/sessions.hpp: `Authorization: Bearer <admin.api_key>` or a signed-in user's session;
// guard()); without an admin key or sign-in the routes do not exist.
//
//   POST   /admin/keys        {name, models?, rpm?, tpm?, max_parallel?,
//                             budget?: {usd, tokens, period: day | week | month},
//                             expires_at?} -> 201 with the key's view and `key`, the secret, once
//   GET    /admin/keys        every live key with its usage (all time and in its budget period)
//   GET    /admin/keys/{id}
//   PATCH  /admin/keys/{id}   any of the fields above (declared keys cannot change: 409)
//   DELETE /admin/keys/{id}   revokes at once; its usage stays in the reports
//   GET    /admin/usage?key=&model=&upstream=&from=&to=&group_by=day,key,model,upstream&format=csv
//                             usage and spend per the dimensions named (usage_report.hpp)
//   GET    /admin/health      every upstream's and route target's health (docs/routing.md)
//   GET    /admin/log         the access lines as they happen, as server-sent events
//
// Thread-safe: one instance serves every worker.
class api {
public:
    // The routes and health of the configuration serving now (a reload switches them), held
    // while one request reads them.
    using routing_now = std::function<std::shared_ptr<upstream::routing>()>;
    api(key_ring& keys, store::key_store& store, usage_ledger& ledger, limiter& limits,
        routing_now routing);

    using method = net::awaitable<http::reply> (api::*)(http::request_context&);
    http::handler route(method m);
    http::guard guard() const;

    net::awaitable<http::reply> create_key(http::request_context& ctx);
    net::awaitable<http::reply> list_keys(http::request_context& ctx);
    net::awaitable<http::reply> get_key(http::request_context& ctx);
    net::awaitable<http::reply> update_key(http::request_context& ctx);
    net::awaitable<http::reply> delete_key(http::request_context& ctx);
    net::awaitable<http::reply> usage(http::request_context& ctx);
    net::awaitable<http::reply> health(http::request_context& ctx);
    net::awaitable<http::reply> request_log(http::request_context& ctx);

private:
    key_ring& keys_;
    store::key_store& store_;
    usage_ledger& ledger_;
    limiter& limits_;
    routing_now routing_;
};

}  // namespace gateway::admin
