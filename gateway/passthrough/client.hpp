#pragma once

#include "gateway/http/context.hpp"
#include "gateway/upstream/connection.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

namespace gateway::passthrough {

namespace net = boost::asio;

// Shared between the exchange and the client watcher of one request.
struct exchange_state {
    upstream::connection* upstream = nullptr;  // the connection in use, to close on disconnect
    bool client_gone = false;
};

// Reads from the client while the exchange runs. Bytes are kept as the start of the next
// (pipelined) request, up to header_limit; end of stream or an error means the client went
// away, and the upstream connection is closed at once so the upstream stops generating.
// Ends when cancelled (the exchange finished first).
net::awaitable<void> watch_client(http::request_context& ctx, exchange_state& state);

// Writes `data` to the client within the server's write timeout.
net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data);

}  // namespace gateway::passthrough
