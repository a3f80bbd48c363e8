#pragma once

#include "gateway/config/config.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

// The one place an attempt to an upstream whose credentials the gateway holds is authorised:
// a Bedrock upstream's SigV4 signature (or Bedrock API key), a Vertex AI upstream's Google access
// token, an Azure upstream's Entra ID token. The /v1 face (translated and forwarded requests),
// the native cloud paths and the agent's model calls all go through it.
namespace gateway::upstream {

class pool;

// Whether the gateway authorises the requests to `up` with credentials of its own: Bedrock;
// Vertex AI; Azure with an `azure:` Entra ID application. Such an upstream never hears the
// client's own Authorization, x-api-key, api-key or x-goog-api-key.
bool authorized_by_gateway(const config::upstream_config& up);

// What authorises one attempt, or why nothing can.
struct gateway_authorization {
    // Each "Name: value\r\n": `Authorization: Bearer <token>`, or SigV4's fields.
    std::string fields;
    // Set: no credentials could be had; says why, naming the upstream and where they were to
    // come from (the client is answered 502 errc::upstream_credentials with it).
    std::string error;
};

// The fields that authorise POST `target` (below the upstream's base path) with `body` to
// `pool`'s upstream, which holds_credentials(): signed over the final body (call it per attempt),
// or its current access token. Waits at most as long as its credentials' source allows; never
// throws.
boost::asio::awaitable<gateway_authorization> authorize(pool& pool, std::string_view target,
                                                        std::string_view body);

// The access token a request head authorise() authorised carries ("" for none), so that the one
// an upstream refuses is known (start_exchange tells its pool's token_source).
std::string_view bearer_token_in(std::string_view head);

}  // namespace gateway::upstream
