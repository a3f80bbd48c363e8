#include "gateway/passthrough/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace gateway::passthrough {

namespace {
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
}

net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data) {
    ctx.deadline.arm(ctx.server.write_timeout);
    auto [ec, n] = co_await net::async_write(ctx.stream, data, use_ec);
    co_return ec;
}

net::awaitable<void> watch_client(http::request_context& ctx, exchange_state& state) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto& socket = ctx.stream.socket();
    while (ctx.buffer.size() < ctx.server.header_limit) {
        auto [ec, n] = co_await socket.async_read_some(ctx.buffer.prepare(4096), use_ec);
        // Aborted with the socket still open: the exchange finished first. Closed: drain did it.
        if (ec == net::error::operation_aborted && socket.is_open()) co_return;
        if (ec) {
            state.client_gone = true;
            if (state.upstream) state.upstream->close();
            co_return;
        }
        ctx.buffer.commit(n);
    }
    // Enough pipelined bytes buffered: stop reading and wait to be cancelled.
    net::steady_timer never(socket.get_executor(), std::chrono::steady_clock::time_point::max());
    co_await never.async_wait(use_ec);
}

}  // namespace gateway::passthrough
