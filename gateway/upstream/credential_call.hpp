#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

// One HTTP call to a credential service (AWS STS and instance metadata, Google's token endpoint
// and metadata server, Entra ID) with the gateway's own upstream client: a new connection per
// call, closed after it, every step bounded by the service's timeout, the answer read whole up to
// 64 KiB.
namespace gateway::upstream {

// A credential service as an upstream the connection code can reach: its address (`url`, whose
// path is the base the targets go below) and `timeout` for connecting, the answer's head and each
// read of its body. The error names the URL and what is wrong with it.
config::parsed<config::upstream_config> credential_service(std::string name, const std::string& url,
                                                           config::duration timeout);

// A request head to `service`: `method` `target` (below its base path), Host, User-Agent,
// `fields` ("Name: value\r\n" each), Content-Length `length`, Connection: close.
std::string credential_request_head(std::string_view method, const config::upstream_config& service,
                                    std::string_view target, std::string_view fields,
                                    std::size_t length);

struct credential_answer {
    unsigned status = 0;
    std::string body;
};

// Sends `head` and `body` to `service` and reads the whole answer. `hooks`: in_use and abandoned
// as start_exchange takes them (the owner closes the connection in use to stop). The error says
// what failed (connecting, a timeout, an answer larger than 64 KiB).
boost::asio::awaitable<config::parsed<credential_answer>> call_credential_service(
    const config::upstream_config& service, const std::string& head, std::string_view body,
    const exchange_hooks& hooks);

// The start of a body for an error message: one line, at most 200 bytes.
std::string first_bytes(std::string_view body);

}  // namespace gateway::upstream
