#pragma once

#include "gateway/auth/oidc.hpp"
#include "gateway/auth/sessions.hpp"
#include "gateway/config/config.hpp"
#include "gateway/http/reply.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <optional>
#include <string>

namespace gateway::store {
class state_store;
}

namespace gateway::auth {

namespace net = boost::asio;

// /auth: sign-in with the identity provider (docs/operations.md "Sign-in (OIDC)").
//
//   GET  /auth/config                 {"oidc": true|false}: whether the console offers sign-in
//   GET  /auth/login?return=/console/ a redirect to the provider; `return` must be a path on
//                                     this gateway (same origin), else /console/
//   GET  /auth/callback?code&state    the provider's answer: the state taken (once), the code
//                                     exchanged, the ID token verified, the user made or
//                                     refreshed, a session cookie set, a redirect to `return`
//   POST /auth/logout                 ends the session (X-CSRF-Token required), clears the cookie
//   GET  /auth/me                     {"user": {id, email, name}, role, team, csrf}; 401 without
//                                     a session
//
// A user's role comes from `roles_claim` through `roles` when a value maps (the widest wins), and
// their team from `team_claim` when the token carries it; otherwise the stored ones stay (an
// admin's change), and a new user gets `default_role` and no team. Every sign-in, sign-out and
// refused callback is written to the audit log (auth.sign_in, auth.sign_out, auth.refused: who,
// from where, and why a callback was refused; never a code or a token). Thread-safe.
class sign_in {
public:
    sign_in(const config::auth_config& config, const sessions& sessions, store::state_store& store);

    bool enabled() const { return !config_.oidc.issuer.empty(); }

    using method = net::awaitable<http::reply> (sign_in::*)(http::request_context&);
    http::handler route(method m);

    net::awaitable<http::reply> settings(http::request_context& ctx);
    net::awaitable<http::reply> login(http::request_context& ctx);
    net::awaitable<http::reply> callback(http::request_context& ctx);
    net::awaitable<http::reply> logout(http::request_context& ctx);
    net::awaitable<http::reply> me(http::request_context& ctx);

private:
    // Appends to the audit log what `action` did to `user` ("": the callback named nobody), with
    // `detail` (a JSON object) and the client's address.
    net::awaitable<void> record(const http::request_context& ctx, std::string action,
                                const principal* user, boost::json::object detail);
    // The callback of a sign-in that began here refused for `why` (the provider's words, never
    // the code or a token): the answer, a log line and the audit record.
    net::awaitable<http::reply> refuse(const http::request_context& ctx, std::string why);

    const config::auth_config& config_;
    const sessions& sessions_;
    store::state_store& store_;
    oidc_client provider_;
};

// `wanted` when it is a path on this gateway ("/…", not "//…" nor "/\…", no control
// characters), else "/console/": a sign-in never sends the browser to another site.
std::string safe_return(std::string_view wanted);

// What the ID token's `claims` say of the user, through `config`: their role (the widest that
// `roles_claim`'s values map to; nullopt: none maps) and team (`team_claim`; nullopt: absent).
std::optional<std::string> role_from_claims(const boost::json::object& claims,
                                            const config::oidc_config& config);
std::optional<std::string> team_from_claims(const boost::json::object& claims,
                                            const config::oidc_config& config);

}  // namespace gateway::auth
