#include "gateway/auth/sign_in.hpp"

#include "gateway/clock.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::auth {

namespace json = boost::json;

namespace {

// How long a sign-in may take at the provider (typing a password, a second factor).
constexpr std::int64_t login_lifetime_ms = 10 * 60'000;

// Answers under /auth are about one user: never kept by a cache.
http::reply private_reply(http::reply r) {
    r.header("Cache-Control", "no-store");
    return r;
}

http::reply redirect(std::string location) {
    http::reply r;
    r.status = 302;
    r.content_type = "text/plain";
    r.header("Location", std::move(location));
    return private_reply(std::move(r));
}

// The claim `name`: a claim of that very name (some providers name claims by URLs, dots and
// all), else the path its dots spell through nested objects (Keycloak's `realm_access.roles`,
// `resource_access.<client>.roles`); null when neither is there.
const json::value* claim(const json::object& claims, std::string_view name) {
    if (name.empty()) return nullptr;
    if (const auto* whole = claims.if_contains(name)) return whole;
    const json::object* in = &claims;
    for (auto dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.')) {
        const auto* next = in->if_contains(name.substr(0, dot));
        if (!next || !next->is_object()) return nullptr;
        in = &next->get_object();
        name.remove_prefix(dot + 1);
    }
    return in->if_contains(name);
}

// The claim's values: a string is one, a list its strings.
std::vector<std::string> claim_values(const json::object& claims, const std::string& name) {
    std::vector<std::string> out;
    const auto* v = claim(claims, name);
    if (!v) return out;
    if (v->is_string()) out.emplace_back(v->get_string());
    if (v->is_array())
        for (const auto& item : v->get_array())
            if (item.is_string()) out.emplace_back(item.get_string());
    return out;
}

}  // namespace

std::string safe_return(std::string_view wanted) {
    bool ok = wanted.starts_with('/') && !wanted.starts_with("//") && !wanted.starts_with("/\\");
    for (char c : wanted) ok = ok && static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
    return ok ? std::string(wanted) : std::string("/console/");
}

std::optional<std::string> role_from_claims(const json::object& claims,
                                            const config::oidc_config& config) {
    std::optional<role> widest;
    for (const auto& value : claim_values(claims, config.roles_claim))
        for (const auto& [mapped, name] : config.roles)
            if (mapped == value)
                if (auto r = role_of(name); r && (!widest || *r < *widest)) widest = r;
    if (!widest) return std::nullopt;
    return std::string(role_name(*widest));
}

std::optional<std::string> team_from_claims(const json::object& claims,
                                            const config::oidc_config& config) {
    auto values = claim_values(claims, config.team_claim);
    if (values.empty()) return std::nullopt;
    return values.front();
}

sign_in::sign_in(const config::auth_config& config, const sessions& sessions,
                 store::state_store& store)
    : config_(config), sessions_(sessions), store_(store), provider_(config.oidc) {}

net::awaitable<void> sign_in::record(const http::request_context& ctx, std::string action,
                                     const principal* user, json::object detail) {
    store::audit_record r;
    r.at = now_ms();
    r.action = std::move(action);
    if (user) {
        r.actor = user->user_id;
        r.actor_role = std::string(role_name(user->as));
        r.target = user->user_id;
        r.team = user->team;
        detail["email"] = user->email;
    }
    r.detail = json::serialize(detail);
    boost::system::error_code ec;
    auto remote = ctx.stream.remote_endpoint(ec);
    if (!ec) r.remote = remote.address().to_string();
    co_await store_.append_audit(std::move(r));
}

http::handler sign_in::route(method m) {
    return [this, m](http::request_context& ctx) -> net::awaitable<void> {
        auto answer = co_await (this->*m)(ctx);
        co_await http::write_reply(ctx, std::move(answer));
    };
}

net::awaitable<http::reply> sign_in::refuse(const http::request_context& ctx, std::string why) {
    observability::log_warn("sign-in refused: " + why);
    json::object detail;
    detail["reason"] = why;
    co_await record(ctx, "auth.refused", nullptr, std::move(detail));
    co_return private_reply(http::reply::error(errc::unauthorized, "Sign-in refused: " + why));
}

net::awaitable<http::reply> sign_in::settings(http::request_context&) {
    co_return private_reply(http::reply::json(200, json::object{{"oidc", enabled()}}));
}

net::awaitable<http::reply> sign_in::login(http::request_context& ctx) {
    if (!enabled())
        co_return http::reply::error(errc::not_found, "Sign-in is not configured (auth.oidc).");
    auto provider = co_await provider_.metadata();
    if (!provider) {
        observability::log_warn("sign-in: " + provider.error);
        co_return private_reply(
            http::reply::error(errc::upstream_bad_response,
                               "The identity provider cannot be reached: " + provider.error));
    }
    auto pkce = make_pkce();
    store::pending_login login{random_id("", 16), random_id("", 16), pkce.verifier,
                               safe_return(http::query_value(ctx.req.target(), "return")),
                               now_ms() + login_lifetime_ms};
    auto url =
        provider_.authorization_url(*provider.value, login.state, login.nonce, pkce.challenge);
    co_await store_.save_login(std::move(login));
    co_return redirect(std::move(url));
}

net::awaitable<http::reply> sign_in::callback(http::request_context& ctx) {
    if (!enabled())
        co_return http::reply::error(errc::not_found, "Sign-in is not configured (auth.oidc).");
    auto target = ctx.req.target();
    auto state = http::query_value(target, "state");
    std::optional<store::pending_login> login;
    if (!state.empty()) login = co_await store_.take_login(state, now_ms());
    if (!login) {
        // Anyone may call the callback with any state: logged, but not audited, since no
        // sign-in began here and the audit log is no place for strangers to write to.
        std::string why =
            "this sign-in's `state` is unknown, used already or expired; start again at "
            "/auth/login.";
        observability::log_warn("sign-in refused: " + why);
        co_return private_reply(http::reply::error(errc::unauthorized, "Sign-in refused: " + why));
    }
    if (auto error = http::query_value(target, "error"); !error.empty()) {
        auto description = http::query_value(target, "error_description");
        auto answer =
            co_await refuse(ctx, "the identity provider answered `" + error + "`" +
                                     (description.empty() ? "" : ": " + description) + ".");
        co_return answer;
    }
    auto code = http::query_value(target, "code");
    if (code.empty()) {
        auto answer = co_await refuse(ctx, "the identity provider sent no `code`.");
        co_return answer;
    }
    auto claims = co_await provider_.redeem(std::move(code), login->verifier, login->nonce);
    if (!claims) {
        auto answer = co_await refuse(ctx, claims.error + ".");
        co_return answer;
    }
    const auto& c = *claims.value;
    auto email = string_of(c, "email");
    if (email.empty()) email = string_of(c, "preferred_username");
    auto name = string_of(c, "name");
    if (name.empty()) name = email;
    store::user_sign_in who{config_.oidc.issuer,
                            string_of(c, "sub"),
                            std::move(email),
                            std::move(name),
                            role_from_claims(c, config_.oidc),
                            team_from_claims(c, config_.oidc),
                            config_.oidc.default_role};
    auto user = co_await store_.sign_in_user(std::move(who));
    auto session = co_await sessions_.start(user);
    observability::log_info("sign-in: " + user.email + " (" + user.id + ") as " + user.role);
    auto signed_in = principal_of_user(user, "", "");
    co_await record(ctx, "auth.sign_in", &signed_in, json::object{});
    auto answer = redirect(login->return_to);
    answer.header("Set-Cookie", std::move(session.set_cookie));
    co_return answer;
}

net::awaitable<http::reply> sign_in::logout(http::request_context& ctx) {
    auto cleared = co_await sessions_.end(ctx.req.base());
    if (ctx.principal && ctx.principal->from == principal::kind::session)
        co_await record(ctx, "auth.sign_out", &*ctx.principal, json::object{});
    auto answer = private_reply(http::reply::json(200, json::object{{"signed_out", true}}));
    answer.header("Set-Cookie", std::move(cleared));
    co_return answer;
}

net::awaitable<http::reply> sign_in::me(http::request_context& ctx) {
    const auto& who = ctx.principal;
    if (!who || who->from != principal::kind::session)
        co_return private_reply(
            http::reply::error(errc::unauthorized, "Not signed in: GET /auth/login."));
    json::object user{{"id", who->user_id}, {"email", who->email}, {"name", who->name}};
    co_return private_reply(http::reply::json(200, json::object{{"user", std::move(user)},
                                                                {"role", role_name(who->as)},
                                                                {"team", who->team},
                                                                {"csrf", who->csrf}}));
}

}  // namespace gateway::auth
