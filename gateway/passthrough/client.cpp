#include "gateway/passthrough/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace gateway::passthrough {

namespace {
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr auto use_awaitable = net::use_awaitable;
}  // namespace

net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data) {
    ctx.deadline.arm(ctx.server.write_timeout);
    auto [ec, n] = co_await net::async_write(ctx.stream, data, use_ec);
    co_return ec;
}

// Shared with the pending read's handler, which may run after the request ended when something
// threw between start and stop (the socket is closed then): `detached` makes it a no-op.
struct client_watch::reader : std::enable_shared_from_this<reader> {
    http::request_context* ctx;
    exchange_state* state;
    bool pending = false;
    bool stopping = false;
    bool detached = false;

    void read() {
        pending = true;
        ctx->stream.async_read_some(
            ctx->buffer.prepare(4096),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                self->done(ec, n);
            });
    }

    void done(boost::system::error_code ec, std::size_t n) {
        pending = false;
        if (detached) return;
        auto& socket = ctx->stream;
        if (!ec) {
            ctx->buffer.commit(n);
            // Enough pipelined bytes buffered: stop reading until the next request is parsed.
            if (!stopping && ctx->buffer.size() < ctx->server.header_limit) read();
            return;
        }
        // Aborted with the socket still open: stopped after the exchange. Closed: drain did it.
        if (ec == net::error::operation_aborted && socket.is_open()) return;
        state->client_gone = true;
        if (state->upstream) state->upstream->close();
    }
};

client_watch::client_watch(http::request_context& ctx, exchange_state& state)
    : reader_(std::allocate_shared<reader>(net::recycling_allocator<reader>())) {
    reader_->ctx = &ctx;
    reader_->state = &state;
    if (ctx.buffer.size() < ctx.server.header_limit) reader_->read();
}

client_watch::~client_watch() {
    reader_->detached = true;
}

net::awaitable<void> client_watch::stop() {
    reader_->stopping = true;
    if (!reader_->pending) co_return;
    boost::system::error_code ignored;
    reader_->ctx->stream.cancel(ignored);
    // The aborted (or already completed) handler is queued; on this one-thread io_context a
    // posted continuation runs after it. (The executor is a named local: GCC 12 mishandles
    // temporaries inside co_await expressions.)
    auto executor = co_await net::this_coro::executor;
    while (reader_->pending) co_await net::post(executor, use_awaitable);
}

}  // namespace gateway::passthrough
