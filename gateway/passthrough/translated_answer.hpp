#pragma once

// A translated answer as the client's API says it: the upstream's fields it keeps, the provider's
// event stream relayed as the client's events (relay_stream), and a whole reply written as the
// stream it would have been (write_reply_as_stream: an upstream that ignored `stream: true`, or
// a response cache hit). Used by translate() (translator.cpp).

#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/upstream/connection.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gateway::guardrails {
class stream_guard;
}

namespace gateway::passthrough {

// Replies larger than this are a bad response (a whole chat completion is far smaller); a
// stream's event may be as large (a provider may send a whole call in one event, as Gemini does).
inline constexpr std::size_t reply_limit = 64 * 1024 * 1024;

// The upstream's fields a client of OpenAI's API acts on: retry-after and the rate limits; and
// the route's fields (`state.fields`).
std::vector<std::pair<std::string, std::string>> kept_fields(const upstream::response_parser& p,
                                                             const exchange_state& state);

// How a relayed stream ended: whether its connection may be pooled, and, for a stream held back
// until its first content (`hold`), the failure that came before any (nothing was written then).
struct relayed {
    bool reusable = false;
    std::optional<upstream::failure> before_content;
};

// Relays the provider's event stream as chat.completion.chunk events, each write as soon as the
// upstream read that completed it. With `hold` (a route's attempt) nothing is written before
// the first content: an error or an end before it is handed back, and the next target is tried.
// `guard`: the answer's guardrails over the client's events (null: none). The usage the stream
// reports goes to `state`, and with state.keep_answer the reply it assembles.
net::awaitable<relayed> relay_stream(http::request_context& ctx, upstream::connection& conn,
                                     upstream::response_parser& parser,
                                     const config::upstream_config& up,
                                     const providers::adapter& adapter,
                                     providers::event_writer& writer, bool hold,
                                     exchange_state& state, guardrails::stream_guard* guard);

// The deltas a stream of `reply` would have carried: its start, its reasoning and text, each
// call (its start, then its arguments whole), the end with its usage.
std::vector<providers::stream_delta> deltas_of(const providers::reply& reply);

// A whole reply to a client that asked for a stream: the events a stream of it would have given
// (through `guard` when there is one), in one write; `kept` go in the head.
net::awaitable<void> write_reply_as_stream(
    http::request_context& ctx, const providers::reply& reply, providers::event_writer& writer,
    const std::vector<std::pair<std::string, std::string>>& kept,
    guardrails::stream_guard* guard = nullptr);

}  // namespace gateway::passthrough
