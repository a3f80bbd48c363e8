#pragma once

#include "gateway/auth/jwt.hpp"
#include "gateway/config/config.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

// The gateway as an OpenID Connect client (authorization code flow with PKCE, RFC 7636): the
// provider's endpoints from its discovery document, the authorization request, the code's
// exchange at the token endpoint and the ID token's verification with the provider's keys.
// Every call to the provider goes out through the gateway's own upstream client (TLS verified
// against `ca_file` or the system's CA store), on a new connection, bounded in time.
namespace gateway::auth {

namespace net = boost::asio;

// What the discovery document (<issuer>/.well-known/openid-configuration) says.
struct provider_metadata {
    std::string issuer;
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string jwks_uri;
    // The token endpoint takes the client's secret in the form body only (its
    // token_endpoint_auth_methods_supported lists client_secret_post, not client_secret_basic).
    bool secret_in_body = false;
};

// A verifier and its S256 challenge.
struct pkce_pair {
    std::string verifier;
    std::string challenge;
};
pkce_pair make_pkce();
// base64url(SHA-256(verifier)).
std::string pkce_challenge(std::string_view verifier);

// Thread-safe: the discovery document and the keys are cached under a lock, fetched when missing
// (a failed fetch is not cached: the next sign-in tries again), the keys again when a token names
// a key they lack (the provider rotated them).
class oidc_client {
public:
    explicit oidc_client(const config::oidc_config& config);

    // The provider's metadata, discovered once.
    net::awaitable<config::parsed<provider_metadata>> metadata();

    // The address the browser is sent to, to sign in.
    std::string authorization_url(const provider_metadata& provider, std::string_view state,
                                  std::string_view nonce, std::string_view challenge) const;

    // The code exchanged at the token endpoint: the ID token's claims, verified (signature,
    // issuer, audience, expiry, `nonce`). The error says which step refused and why.
    net::awaitable<config::parsed<boost::json::object>> redeem(std::string code,
                                                               std::string verifier,
                                                               std::string nonce);

private:
    net::awaitable<config::parsed<std::string>> exchange(const provider_metadata& provider,
                                                         const std::string& code,
                                                         const std::string& verifier);
    net::awaitable<config::parsed<std::shared_ptr<const key_set>>> fetch_keys(
        const provider_metadata& provider);
    // GET `url`: its body when it answered 200.
    net::awaitable<config::parsed<std::string>> get(const std::string& url, std::string_view what);
    void forget_metadata();

    const config::oidc_config& config_;
    std::mutex mutex_;
    std::shared_ptr<const provider_metadata> metadata_;
    std::shared_ptr<const key_set> keys_;
};

}  // namespace gateway::auth
