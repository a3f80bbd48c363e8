#pragma once

#include "gateway/http/context.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/upstream/connection.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace gateway::providers {
class ingress;
}
namespace gateway::guardrails {
class stream_guard;
enum class stream_api : std::uint8_t;
}  // namespace gateway::guardrails

namespace gateway::passthrough {

// Status line and headers for the client: the upstream's status, reason and end-to-end fields,
// plus what this hop needs: `hop_line` ("Content-Length: n", "Transfer-Encoding: chunked",
// "Upgrade: websocket" or "") and the Connection value ("" for none). The upstream's own
// x-request-id wins (SDKs surface it); otherwise the client gets ours.
std::string response_head(const boost::beast::http::response_header<>& res,
                          const http::request_context& ctx, std::string_view hop_line,
                          std::string_view connection, const route_fields& route = {});

// The stream a client of `in` (a model call's API) reads, as the answer's guardrails read it.
guardrails::stream_api stream_api_of(const providers::ingress& in);

// Relays the upstream's response (its header already read into `parser`) to the client, event
// by event as it arrives: the head with the body bytes that came with it, then one client write
// per upstream read, SSE heartbeats while the upstream is silent, the usage the answer reports
// into `state`, and an honest end when the upstream fails mid-response. Returns true when the
// upstream connection ended cleanly and may be pooled. `prefetched`: body bytes the attempt loop
// read (and held back) before it committed to this answer; they go out first. `state.fields`
// are added to the head (the route's x-contextgate-* fields). `guard`: the answer's guardrails
// over an event stream (its events written again, chunked, as the guard releases them; a block
// ends the client's stream and the upstream's is not read on); ignored for other answers.
net::awaitable<bool> relay_response(http::request_context& ctx, upstream::connection& conn,
                                    upstream::response_parser& parser,
                                    const config::upstream_config& up, exchange_state& state,
                                    std::string_view prefetched = {},
                                    guardrails::stream_guard* guard = nullptr);

}  // namespace gateway::passthrough
