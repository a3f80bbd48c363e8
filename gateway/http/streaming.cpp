#include "gateway/http/streaming.hpp"

#include "gateway/http/response.hpp"
#include "gateway/io/write_all.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/chunk_encode.hpp>

namespace gateway::http {

namespace {
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
}

net::awaitable<bool> body_stream::begin(
    unsigned status, const std::vector<std::pair<std::string, std::string>>& fields) {
    if (!chunked_ || ctx_.draining) ctx_.keep_alive = false;
    response_head h(status);
    for (const auto& [name, value] : fields) h.field(name, value);
    auto head = h.finish(ctx_.request_id, chunked_ ? "Transfer-Encoding: chunked" : "",
                         ctx_.keep_alive ? "" : "close");
    ctx_.started();
    ctx_.status = status;
    auto whole = net::buffer(head);
    auto ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, whole);
    if (ec) ctx_.keep_alive = false;
    co_return !ec;
}

net::awaitable<bool> body_stream::write(std::string_view bytes) {
    ctx_.bytes_sent += bytes.size();
    boost::system::error_code ec;
    if (chunked_) {
        auto chunk = beast::http::make_chunk(net::buffer(bytes));
        ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, chunk);
    } else {
        auto whole = net::buffer(bytes);
        ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, whole);
    }
    if (ec) ctx_.keep_alive = false;
    co_return !ec;
}

net::awaitable<bool> body_stream::end() {
    if (!chunked_) co_return true;
    auto last = beast::http::make_chunk_last();
    auto ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, last);
    if (ec) ctx_.keep_alive = false;
    co_return !ec;
}

net::awaitable<void> client_leaves(request_context& ctx) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto& socket = ctx.stream;
    while (ctx.buffer.size() < ctx.server.header_limit) {
        auto [ec, n] = co_await socket.async_read_some(ctx.buffer.prepare(4096), use_ec);
        if (ec) co_return;
        ctx.buffer.commit(n);
    }
    net::steady_timer never(socket.get_executor(), std::chrono::steady_clock::time_point::max());
    co_await never.async_wait(use_ec);
}

net::awaitable<bool> cancelled() {
    auto state = co_await net::this_coro::cancellation_state;
    co_return state.cancelled() != net::cancellation_type::none;
}

config::duration heartbeat(const config::server_config& server) {
    using namespace std::chrono_literals;
    return server.sse_heartbeat.count() > 0 ? server.sse_heartbeat : config::duration(15s);
}

}  // namespace gateway::http
