#include "gateway/auth/sessions.hpp"

#include "gateway/clock.hpp"
#include "gateway/ids.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>

#include <openssl/crypto.h>

namespace gateway::auth {

namespace bhttp = boost::beast::http;

namespace {

bool equal_secrets(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The bearer token of `head`'s Authorization header ("": none).
std::string_view bearer_token(const bhttp::request_header<>& head) {
    std::string_view header = head[bhttp::field::authorization];
    if (header.size() < 8 || !boost::beast::iequals(header.substr(0, 7), "bearer ")) return {};
    auto token = header.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    return token;
}

std::int64_t ms(config::duration d) {
    return static_cast<std::int64_t>(d.count());
}

}  // namespace

std::string_view cookie_value(const bhttp::request_header<>& head, std::string_view name) {
    auto [first, last] = head.equal_range(bhttp::field::cookie);
    for (auto field = first; field != last; ++field) {
        std::string_view rest = field->value();
        while (!rest.empty()) {
            auto end = rest.find(';');
            auto pair = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
            while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
            auto eq = pair.find('=');
            if (eq != std::string_view::npos && pair.substr(0, eq) == name)
                return pair.substr(eq + 1);
        }
    }
    return {};
}

bool csrf_satisfied(const bhttp::request_header<>& head, const principal* who) {
    if (!who || who->from != principal::kind::session) return true;
    auto verb = head.method();
    if (verb == bhttp::verb::get || verb == bhttp::verb::head || verb == bhttp::verb::options)
        return true;
    auto presented = head[csrf_header];
    return !presented.empty() && equal_secrets(presented, who->csrf);
}

principal principal_of_user(const store::user_record& user, std::string session_digest,
                            std::string csrf) {
    principal p;
    p.from = principal::kind::session;
    // A role this build does not know (a newer one's, or edited by hand) gets the least.
    p.as = role_of(user.role).value_or(role::viewer);
    p.user_id = user.id;
    p.email = user.email;
    p.name = user.name;
    p.team = user.team;
    p.session_id = std::move(session_digest);
    p.csrf = std::move(csrf);
    return p;
}

sessions::sessions(const config::auth_config& config, std::string admin_key, bool secure,
                   store::identity_store& store)
    : config_(config),
      admin_digest_(admin_key.empty() ? std::string() : config::hashed_key(admin_key)),
      secure_(secure),
      store_(store) {}

net::awaitable<std::optional<principal>> sessions::principal_of(
    const bhttp::request_header<>& head) const {
    if (auto token = bearer_token(head); !token.empty()) {
        if (admin_digest_.empty() || !equal_secrets(config::key_digest(token), admin_digest_))
            co_return std::nullopt;
        co_return principal{};  // the automation admin
    }
    auto id = cookie_value(head, session_cookie);
    if (id.empty()) co_return std::nullopt;
    auto digest = config::key_digest(id);
    std::optional<store::signed_in_user> found;
    try {
        found = co_await store_.user_session(digest, now_ms(), ms(config_.session_idle));
    } catch (const store::store_error& e) {
        observability::log_error(std::string("a session could not be looked up: ") + e.what());
    }
    if (!found) co_return std::nullopt;
    co_return principal_of_user(found->user, std::move(digest), std::move(found->session.csrf));
}

net::awaitable<new_session> sessions::start(const store::user_record& user) const {
    auto id = random_id("", 32);
    auto now = now_ms();
    store::user_session_record session{config::key_digest(id),
                                       user.id,
                                       random_id("", 16),
                                       now,
                                       now,
                                       now + ms(config_.session_absolute)};
    auto csrf = session.csrf;
    co_await store_.start_user_session(std::move(session));
    co_return new_session{cookie(id, ms(config_.session_absolute) / 1000), std::move(csrf)};
}

net::awaitable<std::string> sessions::end(const bhttp::request_header<>& head) const {
    if (auto id = cookie_value(head, session_cookie); !id.empty())
        co_await store_.end_user_session(config::key_digest(id));
    co_return cookie("", 0);
}

std::string sessions::cookie(std::string_view value, std::int64_t max_age_s) const {
    std::string out(session_cookie);
    out += '=';
    out += value;
    out += "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age_s);
    if (secure_) out += "; Secure";
    return out;
}

}  // namespace gateway::auth
