#include "gateway/passthrough/client.hpp"

#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/io/write_all.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace gateway::passthrough {

namespace {
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr auto use_awaitable = net::use_awaitable;
}  // namespace

upstream::failure stopped_by_shutdown() {
    return {make_error_code(errc::shutting_down),
            "the gateway is shutting down and stopped this request before it was answered; "
            "send it again"};
}

net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data) {
    auto ec = co_await io::write_all(ctx.stream, ctx.deadline, ctx.server.write_timeout, data);
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
        if (state->backoff) state->backoff->cancel();
    }
};

client_watch::client_watch(http::request_context& ctx, exchange_state& state, watch_list& list)
    : ctx_(ctx), state_(state), list_(list), since_(coarse_now()) {
    list_.add(*this, ctx.stream.get_executor());
}

client_watch::~client_watch() {
    if (waiting_) list_.remove(*this);
    if (reader_) reader_->detached = true;
}

void client_watch::start_reading() {
    reader_ = std::allocate_shared<reader>(net::recycling_allocator<reader>());
    reader_->ctx = &ctx_;
    reader_->state = &state_;
    if (ctx_.buffer.size() < ctx_.server.header_limit) reader_->read();
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

void watch_list::add(client_watch& watch, const net::any_io_executor& executor) {
    watch.waiting_ = true;
    watch.prev_ = last_;
    watch.next_ = nullptr;
    (last_ ? last_->next_ : first_) = &watch;
    last_ = &watch;
    if (!timer_) timer_.emplace(executor);
    if (!armed_) arm(watch.since_ + delay);
}

void watch_list::remove(client_watch& watch) {
    (watch.prev_ ? watch.prev_->next_ : first_) = watch.next_;
    (watch.next_ ? watch.next_->prev_ : last_) = watch.prev_;
    watch.prev_ = watch.next_ = nullptr;
    watch.waiting_ = false;
}

// Not cancelled when the list empties: it fires once and finds nothing to start, which is
// cheaper than cancelling and re-arming it around every short exchange.
void watch_list::arm(std::chrono::steady_clock::time_point at) {
    armed_ = true;
    timer_->expires_at(at);
    timer_->async_wait([alive = std::weak_ptr<watch_list*>(alive_)](boost::system::error_code ec) {
        auto list = alive.lock();
        if (ec || !list) return;  // cancelled, or the list is gone
        (*list)->tick();
    });
}

// Starts the watches that have waited `delay` (the list is in arrival order) and re-arms for
// the oldest of the rest.
void watch_list::tick() {
    armed_ = false;
    auto now = std::chrono::steady_clock::now();
    while (first_ && first_->since_ + delay <= now) {
        auto& watch = *first_;
        remove(watch);
        watch.start_reading();
    }
    if (first_) arm(first_->since_ + delay);
}

}  // namespace gateway::passthrough
