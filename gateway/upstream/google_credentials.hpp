#pragma once

#include "gateway/config/config.hpp"
#include "gateway/config/google_key_file.hpp"
#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>
#include <string_view>

// Google access tokens for a Vertex AI upstream, the ways Google's own client libraries get them:
// a service account's key file (a JWT it signs, exchanged at its token_uri: OAuth 2.0 for server
// to server applications), gcloud's application default credentials (`authorized_user`: a refresh
// token exchanged at its token_uri), or the metadata server of the machine it runs on (Compute
// Engine, GKE, Cloud Run).
namespace gateway::upstream::google {

// The scope every token is asked for: Vertex AI takes cloud-platform.
inline constexpr std::string_view cloud_platform_scope =
    "https://www.googleapis.com/auth/cloud-platform";
// The key file is read with the configuration (config/google_key_file.hpp).
using config::google::default_token_uri;
using config::google::key_file;
using config::google::parse_key_file;
using config::google::read_key_file;

// The JWT a service account exchanges for a token, signed RS256 with its private key: header
// {alg RS256, typ JWT, kid private_key_id}; claims {iss client_email, scope cloud-platform, aud
// token_uri, iat now, exp now + 1 hour}. The error says why the key cannot sign.
config::parsed<std::string> service_account_assertion(const key_file& key,
                                                      std::chrono::system_clock::time_point now);

// One token from a key file: the assertion (service_account) or the refresh token
// (authorized_user) posted to its token_uri. Each step bounded by `timeout`; `hooks` as
// start_exchange takes them. The error says who refused what, with Google's own words.
boost::asio::awaitable<config::parsed<access_token>> token_from_key(const key_file& key,
                                                                    config::duration timeout,
                                                                    const exchange_hooks& hooks);

// One token of the default service account from the metadata server at `host` (host[:port], as
// GCE_METADATA_HOST gives it): GET /computeMetadata/v1/instance/service-accounts/default/token
// with `Metadata-Flavor: Google`.
boost::asio::awaitable<config::parsed<access_token>> token_from_metadata_server(
    const std::string& host, config::duration timeout, const exchange_hooks& hooks);

}  // namespace gateway::upstream::google
