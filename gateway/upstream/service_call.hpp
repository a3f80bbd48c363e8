#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <memory>
#include <optional>

#include <string>
#include <string_view>

// One HTTP call to a service that is no model upstream: a credential service (AWS STS and
// instance metadata, Google's token endpoint and metadata server, Entra ID, an OpenID provider)
// or a webhook (guardrails' policy checks, budget alerts), with the gateway's own upstream
// client: a new connection per call, closed after it, every step bounded by the service's
// timeout, the answer read whole (up to 64 KiB unless the caller says otherwise).
namespace gateway::upstream {

// A service as an upstream the connection code can reach: its address (`url`, whose
// path is the base the targets go below) and `timeout` for connecting, the answer's head and each
// read of its body. The error names the URL and what is wrong with it.
config::parsed<config::upstream_config> service_upstream(std::string name, const std::string& url,
                                                         config::duration timeout);
// The same for an address already read: a webhook's, checked with the configuration.
config::upstream_config service_upstream(std::string name, std::string url,
                                         config::upstream_endpoint endpoint,
                                         config::duration timeout);

// A request head to `service`: `method` `target` (below its base path), Host, User-Agent,
// `fields` ("Name: value\r\n" each), Content-Length `length`, Connection: close.
std::string service_request_head(std::string_view method, const config::upstream_config& service,
                                 std::string_view target, std::string_view fields,
                                 std::size_t length);

struct service_answer {
    unsigned status = 0;
    std::string body;
};

// How a call is bounded and watched beyond the service's per-step timeouts.
struct service_call_options {
    // in_use and abandoned as start_exchange takes them (the owner closes the connection in use
    // to stop the call).
    exchange_hooks hooks;
    // The TLS context for an https service, made once by the caller; null: made for this call.
    std::shared_ptr<boost::asio::ssl::context> tls;
    // When the whole call must have ended (the connection in use is closed then); none: only the
    // per-step timeouts bound it.
    std::optional<std::chrono::steady_clock::time_point> until;
    // The longest answer read.
    std::size_t answer_limit = 64 * 1024;
};

// Sends `head` and `body` to `service` and reads the whole answer. The error says what failed
// (connecting, a timeout, the deadline, an answer over the limit).
boost::asio::awaitable<config::parsed<service_answer>> call_service(
    const config::upstream_config& service, const std::string& head, std::string_view body,
    service_call_options options = {});

// The start of a body for an error message: one line, at most 200 bytes.
std::string first_bytes(std::string_view body);

}  // namespace gateway::upstream
