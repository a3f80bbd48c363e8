#pragma once

#include "gateway/http/context.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::http {

// A response whose body is written as it is produced (an SSE stream): chunked on HTTP/1.1, raw
// on HTTP/1.0 (where closing the connection ends the body). begin() writes the head; write()
// one piece; end() the last chunk. Each returns false when the client is gone (the connection is
// then closed after the handler).
class body_stream {
public:
    explicit body_stream(request_context& ctx) : ctx_(ctx), chunked_(ctx.req.version() >= 11) {}

    net::awaitable<bool> begin(unsigned status,
                               const std::vector<std::pair<std::string, std::string>>& fields);
    net::awaitable<bool> write(std::string_view bytes);
    net::awaitable<bool> end();

private:
    request_context& ctx_;
    bool chunked_;
};

// Reads the client while a streamed response runs: bytes are kept as the start of a next request
// (up to header_limit). Returns when the client hangs up (end of stream or an error); meant to be
// raced against the stream (`||`), which cancels it when the stream ends first.
net::awaitable<void> client_leaves(request_context& ctx);

// Whether the calling coroutine's operation was cancelled: its side of an `||` lost (the client
// left). For coroutines that ran `throw_if_cancelled(false)` and check between steps.
net::awaitable<bool> cancelled();

// How often a stream with nothing to say sends a keep-alive: server.sse_heartbeat, else 15 s.
config::duration heartbeat(const config::server_config& server);

}  // namespace gateway::http
