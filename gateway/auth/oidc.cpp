#include "gateway/auth/oidc.hpp"

#include "gateway/clock.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/sigv4.hpp"

#include <boost/json/parse.hpp>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <chrono>
#include <stdexcept>

namespace gateway::auth {

namespace json = boost::json;
using upstream::aws::uri_encode;

namespace {

// Each call to the provider (connecting, its answer's head, each read of its body). The
// configuration has no setting for it: a provider that takes longer fails the sign-in, which
// the user starts again.
constexpr config::duration provider_timeout{10'000};

std::string base64(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

// The issuer without a trailing slash: the discovery document's path goes below it.
std::string without_trailing_slash(std::string text) {
    while (!text.empty() && text.back() == '/') text.pop_back();
    return text;
}

// Whether `o`'s list `key` holds `value`.
bool lists(const json::object& o, std::string_view key, std::string_view value) {
    const auto* v = o.if_contains(key);
    if (!v || !v->is_array()) return false;
    for (const auto& item : v->get_array())
        if (item.is_string() && item.get_string() == value) return true;
    return false;
}

}  // namespace

std::string pkce_challenge(std::string_view verifier) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
    return base64url_encode(std::string_view(reinterpret_cast<char*>(digest), sizeof digest));
}

pkce_pair make_pkce() {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw std::runtime_error("the system's random generator failed");
    auto verifier =
        base64url_encode(std::string_view(reinterpret_cast<char*>(bytes), sizeof bytes));
    auto challenge = pkce_challenge(verifier);
    return {std::move(verifier), std::move(challenge)};
}

oidc_client::oidc_client(const config::oidc_config& config) : config_(config) {}

net::awaitable<config::parsed<std::string>> oidc_client::get(const std::string& url,
                                                             std::string_view what) {
    using result = config::parsed<std::string>;
    auto service = upstream::credential_service("oidc", url, provider_timeout);
    if (!service) co_return result::fail(std::string(what) + " " + service.error);
    service.value->ca_file = config_.ca_file;
    auto head = upstream::credential_request_head("GET", *service.value, "",
                                                  "Accept: application/json\r\n", 0);
    auto answer = co_await upstream::call_credential_service(*service.value, head, {},
                                                             upstream::exchange_hooks{});
    if (!answer)
        co_return result::fail(std::string(what) + " at " + url +
                               " did not answer: " + answer.error);
    if (answer.value->status != 200)
        co_return result::fail(std::string(what) + " at " + url + " answered " +
                               std::to_string(answer.value->status) + ": " +
                               upstream::first_bytes(answer.value->body));
    co_return result{std::move(answer.value->body), {}};
}

net::awaitable<config::parsed<provider_metadata>> oidc_client::metadata() {
    using result = config::parsed<provider_metadata>;
    {
        std::lock_guard lock(mutex_);
        if (metadata_) co_return result{*metadata_, {}};
    }
    auto issuer = without_trailing_slash(config_.issuer);
    auto url = issuer + "/.well-known/openid-configuration";
    auto body = co_await get(url, "the identity provider's discovery document");
    if (!body) co_return result::fail(body.error);
    auto doc = parse_json(*body.value);
    if (!doc.is_object())
        co_return result::fail("the discovery document at " + url + " is not a JSON object");
    const auto& o = doc.get_object();
    provider_metadata m{string_of(o, "issuer"), string_of(o, "authorization_endpoint"),
                        string_of(o, "token_endpoint"), string_of(o, "jwks_uri")};
    // OpenID Connect Discovery 4.3: the document must name the issuer it was fetched for.
    if (m.issuer != config_.issuer)
        co_return result::fail("the discovery document at " + url + " is for the issuer `" +
                               m.issuer + "`, not `" + config_.issuer +
                               "` (auth.oidc.issuer must be written as the provider writes it)");
    for (auto [name, value] :
         {std::pair{"authorization_endpoint", &m.authorization_endpoint},
          std::pair{"token_endpoint", &m.token_endpoint}, std::pair{"jwks_uri", &m.jwks_uri}})
        if (value->empty())
            co_return result::fail("the discovery document at " + url + " has no `" + name + "`");
    m.secret_in_body = lists(o, "token_endpoint_auth_methods_supported", "client_secret_post") &&
                       !lists(o, "token_endpoint_auth_methods_supported", "client_secret_basic");
    std::lock_guard lock(mutex_);
    metadata_ = std::make_shared<provider_metadata>(m);
    co_return result{std::move(m), {}};
}

void oidc_client::forget_metadata() {
    std::lock_guard lock(mutex_);
    metadata_.reset();
}

std::string oidc_client::authorization_url(const provider_metadata& provider,
                                           std::string_view state, std::string_view nonce,
                                           std::string_view challenge) const {
    std::string scope;
    for (const auto& s : config_.scopes) scope += (scope.empty() ? "" : " ") + s;
    std::string url = provider.authorization_endpoint;
    url += url.find('?') == std::string::npos ? '?' : '&';
    url += "response_type=code&client_id=" + uri_encode(config_.client_id) +
           "&redirect_uri=" + uri_encode(config_.redirect_url) + "&scope=" + uri_encode(scope) +
           "&state=" + uri_encode(state) + "&nonce=" + uri_encode(nonce) +
           "&code_challenge=" + uri_encode(challenge) + "&code_challenge_method=S256";
    return url;
}

net::awaitable<config::parsed<std::string>> oidc_client::exchange(const provider_metadata& provider,
                                                                  const std::string& code,
                                                                  const std::string& verifier) {
    using result = config::parsed<std::string>;
    auto service = upstream::credential_service("oidc", provider.token_endpoint, provider_timeout);
    if (!service) co_return result::fail("the token endpoint " + service.error);
    service.value->ca_file = config_.ca_file;
    std::string form = "grant_type=authorization_code&code=" + uri_encode(code) +
                       "&redirect_uri=" + uri_encode(config_.redirect_url) +
                       "&code_verifier=" + uri_encode(verifier);
    std::string fields =
        "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n";
    // RFC 6749 2.3.1: client_secret_basic encodes both parts before joining them.
    if (config_.client_secret.empty() || provider.secret_in_body) {
        form += "&client_id=" + uri_encode(config_.client_id);
        if (!config_.client_secret.empty())
            form += "&client_secret=" + uri_encode(config_.client_secret);
    } else {
        fields += "Authorization: Basic " +
                  base64(uri_encode(config_.client_id) + ":" + uri_encode(config_.client_secret)) +
                  "\r\n";
    }
    auto head = upstream::credential_request_head("POST", *service.value, "", fields, form.size());
    auto answer = co_await upstream::call_credential_service(*service.value, head, form,
                                                             upstream::exchange_hooks{});
    if (!answer) {
        forget_metadata();  // the provider may have moved its endpoints
        co_return result::fail("the token endpoint at " + provider.token_endpoint +
                               " did not answer: " + answer.error);
    }
    auto doc = parse_json(answer.value->body);
    const json::object* o = doc.is_object() ? &doc.get_object() : nullptr;
    if (answer.value->status != 200) {
        std::string why = o ? string_of(*o, "error") : std::string();
        if (o && !string_of(*o, "error_description").empty())
            why += ": " + string_of(*o, "error_description");
        if (why.empty()) why = upstream::first_bytes(answer.value->body);
        co_return result::fail("the identity provider refused the code (" +
                               std::to_string(answer.value->status) + " " + why + ")");
    }
    auto id_token = o ? string_of(*o, "id_token") : std::string();
    if (id_token.empty())
        co_return result::fail(
            "the token endpoint's answer has no `id_token` (is `openid` "
            "among the scopes?)");
    co_return result{std::move(id_token), {}};
}

net::awaitable<config::parsed<std::shared_ptr<const key_set>>> oidc_client::fetch_keys(
    const provider_metadata& provider) {
    using result = config::parsed<std::shared_ptr<const key_set>>;
    auto body = co_await get(provider.jwks_uri, "the identity provider's keys (jwks_uri)");
    if (!body) co_return result::fail(body.error);
    auto keys = key_set::parse(*body.value);
    if (!keys) co_return result::fail(keys.error + " (" + provider.jwks_uri + ")");
    auto shared = std::make_shared<const key_set>(std::move(*keys.value));
    std::lock_guard lock(mutex_);
    keys_ = shared;
    co_return result{std::move(shared), {}};
}

net::awaitable<config::parsed<json::object>> oidc_client::redeem(std::string code,
                                                                 std::string verifier,
                                                                 std::string nonce) {
    using result = config::parsed<json::object>;
    auto provider = co_await metadata();
    if (!provider) co_return result::fail(provider.error);
    auto id_token = co_await exchange(*provider.value, code, verifier);
    if (!id_token) co_return result::fail(id_token.error);

    token_expectations expect{config_.issuer, config_.client_id, nonce, now_ms() / 1000};
    std::shared_ptr<const key_set> keys;
    {
        std::lock_guard lock(mutex_);
        keys = keys_;
    }
    bool fetched = false;
    if (!keys) {
        auto got = co_await fetch_keys(*provider.value);
        if (!got) co_return result::fail(got.error);
        keys = *got.value;
        fetched = true;
    }
    auto checked = verify_id_token(*id_token.value, *keys, expect);
    // A key the cached set lacks: the provider rotated its keys; fetched once more.
    if (checked.result == token_check::outcome::unknown_key && !fetched) {
        auto got = co_await fetch_keys(*provider.value);
        if (!got) co_return result::fail(got.error);
        checked = verify_id_token(*id_token.value, **got.value, expect);
    }
    if (checked.result != token_check::outcome::valid) co_return result::fail(checked.error);
    co_return result{std::move(checked.claims), {}};
}

}  // namespace gateway::auth
