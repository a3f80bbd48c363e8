#pragma once

#include "gateway/http/context.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/upstream/connection.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <memory>

namespace gateway::passthrough {

namespace net = boost::asio;

// Shared between the exchange and the client watcher of one request.
struct exchange_state {
    upstream::connection* upstream = nullptr;  // the connection in use, to close on disconnect
    bool client_gone = false;
    // What the answer showed, for metrics, limits and usage: its first body bytes (time to first
    // token of a stream), whether it streamed, the usage it reported and where that came from.
    std::chrono::steady_clock::time_point first_body{};
    bool streamed = false;
    providers::usage used;
    std::string_view usage_source = "none";  // body | stream | none
    bool answered = false;                   // the upstream answered with a status (2xx or not)
};

// Reads from the client while the exchange runs. Bytes are kept as the start of the next
// (pipelined) request, up to header_limit; end of stream or an error means the client went
// away: `state.client_gone` is set and the upstream connection is closed at once, so the upstream
// stops generating and the exchange ends on its next upstream read or write.
//
// A plain completion handler rather than a coroutine raced against the exchange: the race cost a
// parallel group per request (two spawned coroutines, their frames and cancellation state). The
// exchange runs alone; `stop()` ends the read when it is done.
class client_watch {
public:
    client_watch(http::request_context& ctx, exchange_state& state);
    ~client_watch();
    client_watch(const client_watch&) = delete;
    client_watch& operator=(const client_watch&) = delete;

    // Cancels the read if it is still pending and returns once its handler has run, so the
    // bytes it read are in the buffer and nothing refers to this request any more.
    net::awaitable<void> stop();

private:
    struct reader;
    std::shared_ptr<reader> reader_;
};

// Writes `data` to the client within the server's write timeout.
net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data);

}  // namespace gateway::passthrough
