#pragma once

#include "gateway/config/config.hpp"
#include "gateway/principal.hpp"
#include "gateway/store/records.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gateway::store {
class identity_store;
}

namespace gateway::auth {

namespace net = boost::asio;

// The cookie that carries a signed-in user's session id.
inline constexpr std::string_view session_cookie = "contextgate_session";
// The header a state-changing request authenticated by that cookie must carry, equal to the
// session's `csrf` (GET /auth/me tells it): a cross-site page can make the browser send the
// cookie, never this header.
inline constexpr std::string_view csrf_header = "X-CSRF-Token";

// A new session: the Set-Cookie value that hands its id to the browser, and its CSRF value.
struct new_session {
    std::string set_cookie;
    std::string csrf;
};

// Who is asking, and the sessions of signed-in users (kept in the store, so every replica
// serves them; the store holds only the digest of an id). `admin_key` is admin.api_key ("":
// none; hashed or not); `secure` marks the cookie Secure (the browser reaches the gateway over
// https). Holds references to `config` and `store`; thread-safe.
class sessions {
public:
    sessions(const config::auth_config& config, std::string admin_key, bool secure,
             store::identity_store& store);

    // The principal `head` names: `Authorization: Bearer <admin.api_key>` is the automation
    // admin; a cookie of a live session is that session's user, with the role and team stored
    // for them; anything else is nobody. A store failure is logged and reads as nobody.
    net::awaitable<std::optional<principal>> principal_of(
        const boost::beast::http::request_header<>& head) const;

    // Starts a session for `user` (after a sign-in).
    net::awaitable<new_session> start(const store::user_record& user) const;
    // Ends the session `head`'s cookie names, if any; the Set-Cookie value clearing the cookie.
    net::awaitable<std::string> end(const boost::beast::http::request_header<>& head) const;

private:
    std::string cookie(std::string_view value, std::int64_t max_age_s) const;

    const config::auth_config& config_;
    const std::string admin_digest_;  // "" without an admin key
    const bool secure_;
    store::identity_store& store_;
};

// The value of the cookie `name` in `head`'s Cookie headers ("": none).
std::string_view cookie_value(const boost::beast::http::request_header<>& head,
                              std::string_view name);

// Whether `head` from `who` may go on as far as CSRF goes: a state-changing method (POST, PUT,
// PATCH, DELETE) authenticated by a session cookie must carry X-CSRF-Token equal to the
// session's csrf; anything else (a GET, a bearer key, nobody) is not this rule's to refuse.
bool csrf_satisfied(const boost::beast::http::request_header<>& head, const principal* who);

// The principal of `user`, signed in on the session whose id has the digest `session_digest`.
principal principal_of_user(const store::user_record& user, std::string session_digest,
                            std::string csrf);

}  // namespace gateway::auth
