#include "gateway/passthrough/relay.hpp"

#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/guardrails/stream_guard.hpp"
#include "gateway/http/response.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/io/write_all.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/providers/bedrock_invoke.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/usage_observer.hpp"
#include "gateway/sse/boundary_tracker.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_cat.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>

#include <array>
#include <memory>
#include <optional>

namespace gateway::passthrough {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using boost::system::error_code;
using namespace net::experimental::awaitable_operators;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);

// The largest event-stream message a rewritten stream takes: AWS's own bound on one message.
constexpr std::size_t aws_message_limit = 16 << 20;

// Writes a response to the client: the head, then the body as chunks or raw bytes. The relay and
// the heartbeat ticker both write through it; `busy` keeps their writes from interleaving. A head
// given to the constructor is held back and sent with the first body bytes in one gather write
// (the caller does that only when those bytes are already buffered, so nothing waits for it).
class body_writer {
public:
    body_writer(http::request_context& ctx, bool chunked, std::string held_head)
        : ctx_(ctx), chunked_(chunked), head_(std::move(held_head)) {}

    // `last`: these are the body's final bytes; a chunked body's end goes in the same write.
    net::awaitable<error_code> data(net::const_buffer bytes, bool last = false) {
        // Only a heartbeat meeting a write waits: no coroutine frame for the common case.
        if (busy_) co_await wait_turn();
        if (ended_) co_return error_code{};  // nothing may follow the end of the body
        busy_ = true;
        error_code ec;
        if (chunked_ && last) {
            auto chunks = beast::buffers_cat(net::buffer(head_), bhttp::make_chunk(bytes),
                                             bhttp::make_chunk_last());
            ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout,
                                        chunks);
            ended_ = true;
        } else if (chunked_) {
            auto chunk = beast::buffers_cat(net::buffer(head_), bhttp::make_chunk(bytes));
            ec = co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout,
                                        chunk);
        } else {
            std::array<net::const_buffer, 2> both{net::buffer(head_), bytes};
            ec =
                co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, both);
        }
        head_.clear();
        release();
        co_return ec;
    }

    // The end of a chunked body (with the head, if it is still held back).
    net::awaitable<error_code> last() {
        if (busy_) co_await wait_turn();
        busy_ = true;
        auto end = beast::buffers_cat(net::buffer(head_), bhttp::make_chunk_last());
        auto ec =
            co_await io::write_all(ctx_.stream, ctx_.deadline, ctx_.server.write_timeout, end);
        head_.clear();
        ended_ = true;
        release();
        co_return ec;
    }

    bool head_pending() const { return !head_.empty(); }
    bool ended() const { return ended_; }  // the chunked body's end was written
    bool chunked() const { return chunked_; }
    bool busy() const { return busy_; }
    std::chrono::steady_clock::time_point last_write() const { return last_write_; }

private:
    net::awaitable<void> wait_turn() {
        while (busy_) {
            // Made on first use: only a heartbeat meeting a write waits, and making a timer
            // looks its service up under the io_context's lock.
            if (!done_) done_.emplace(ctx_.stream.get_executor());
            done_->expires_at(std::chrono::steady_clock::time_point::max());
            co_await done_->async_wait(use_ec);  // cancelled by release()
        }
    }
    void release() {
        busy_ = false;
        last_write_ = coarse_now();  // for the heartbeats: a tick early is nothing
        if (done_) done_->cancel();
    }

    http::request_context& ctx_;
    bool chunked_;
    std::string head_;
    bool busy_ = false;
    bool ended_ = false;
    std::chrono::steady_clock::time_point last_write_ = coarse_now();
    std::optional<net::steady_timer> done_;
};

// While the upstream is silent for `interval`, sends an SSE comment, only at an event boundary
// so no event is split. Runs until cancelled by the end of the relay.
net::awaitable<void> send_heartbeats(body_writer& writer, const sse::boundary_tracker& tracker,
                                     config::duration interval) {
    co_await net::this_coro::throw_if_cancelled(false);
    static constexpr std::string_view comment = ": keep-alive\n\n";
    net::steady_timer timer(co_await net::this_coro::executor);
    for (;;) {
        timer.expires_at(writer.last_write() + interval);
        auto [ec] = co_await timer.async_wait(use_ec);
        if (ec) co_return;  // the relay finished
        auto silent = std::chrono::steady_clock::now() - writer.last_write();
        if (writer.busy() || !tracker.at_boundary() || silent < interval) {
            // Mid-event, or written meanwhile: look again one interval after the last write.
            if (!tracker.at_boundary()) timer.expires_after(interval);
            continue;
        }
        auto write_ec = co_await writer.data(net::buffer(comment));
        if (write_ec) {
            // The client is gone; the relay notices on its next write. Wait to be cancelled.
            timer.expires_at(std::chrono::steady_clock::time_point::max());
            co_await timer.async_wait(use_ec);
            co_return;
        }
    }
}

// The body loop of relay_response: one upstream read, one client write, until the end.
net::awaitable<bool> relay_body(http::request_context& ctx, upstream::connection& conn,
                                upstream::response_parser& parser,
                                const config::upstream_config& up, exchange_state& state,
                                body_writer& writer, sse::boundary_tracker& tracker, bool sse,
                                providers::usage_observer* observer, std::string_view prefetched,
                                providers::bedrock::messages_events* rewrite,
                                guardrails::stream_guard* guard) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto& res = parser.get();
    // The response cache keeps a copy, up to its limit.
    auto keep = [&state](std::string_view bytes) {
        if (!state.keep_answer || !state.kept_whole) return;
        state.kept_whole = state.kept_body.size() + bytes.size() <= state.kept_limit;
        if (state.kept_whole)
            state.kept_body.append(bytes);
        else
            state.kept_body = {};
    };
    // The answer's guardrails: what the client may see of the stream so far (the upstream's
    // bytes still go to the usage observer as they came).
    std::string guarded;
    auto checked = [&](std::string_view piece, bool last) {
        guarded.clear();
        guard->feed(piece, guarded);
        if (last) guard->finish(guarded);
        return std::string_view(guarded);
    };
    if (!prefetched.empty()) {
        auto out = guard ? checked(prefetched, parser.is_done()) : prefetched;
        keep(out);
        if (sse) tracker.feed(out);
        if (observer) observer->feed(prefetched);
        ctx.bytes_sent += out.size();
        bool ended = guard && guard->blocked();
        if (auto ec = co_await writer.data(net::buffer(out), ended); ec) {
            ctx.keep_alive = false;
            co_return false;
        }
        if (ended) co_return false;
    }
    io::relay_buffer buffer;
    std::string rewritten;
    // Each read takes every body byte already buffered, across the upstream's chunks: events
    // that arrived together leave in one client write, as nginx relays them, not one write (and
    // one wake-up of the client) per upstream chunk. Chunk boundaries are not the body's bytes.
    parser.eager(true);
    while (!parser.is_done()) {
        auto [n, failed] =
            co_await upstream::read_piece(conn, parser, buffer.buffer(), up.idle_timeout);
        std::string_view piece(buffer.data(), n);
        // A stream the client hears in another framing ends with its own error event.
        bool rewrite_ended = false;
        if (rewrite) {
            rewritten.clear();
            rewrite_ended = !rewrite->feed(piece, rewritten) ||
                            (parser.is_done() && !rewrite->finish(rewritten));
            piece = rewritten;
        }
        std::string_view heard = piece;
        if (guard) {
            piece = checked(piece, parser.is_done());
            // A block ended the client's stream: the rest of the answer is not read.
            rewrite_ended = rewrite_ended || guard->blocked();
        }
        if (!heard.empty()) {
            if (state.first_body == std::chrono::steady_clock::time_point{})
                state.first_body = std::chrono::steady_clock::now();
            if (observer) observer->feed(heard);
        }
        // Nothing to write is not written (an empty chunk would end the body).
        if (!piece.empty()) {
            keep(piece);
            if (sse) tracker.feed(piece);
            ctx.bytes_sent += piece.size();
            auto ec = co_await writer.data(net::buffer(piece), parser.is_done() || rewrite_ended);
            if (ec) {
                ctx.keep_alive = false;  // the client is gone or too slow
                co_return false;
            }
        }
        if (rewrite_ended) co_return false;  // the upstream's connection is not read to its end
        if (failed && state.client_gone) co_return false;  // we closed the upstream ourselves
        if (failed) {
            observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                    "` failed mid-response: " + failed.detail);
            if (!writer.head_pending())
                observability::metrics().midstream_failures.with({up.name}).inc();
            if (writer.head_pending()) {
                // Nothing reached the client yet: it gets a proper error response instead.
                ctx.response_started = false;
                co_await http::write_error(ctx, failed.ec, failed.detail);
            } else if (writer.chunked() && sse && tracker.at_boundary()) {
                // A clean end the client can act on: OpenAI's error JSON as a final event.
                std::string event =
                    "event: error\ndata: " + error_json(failed.ec, failed.detail) + "\n\n";
                auto ec = co_await writer.data(net::buffer(event));
                if (!ec) ec = co_await writer.last();
                if (ec) ctx.keep_alive = false;
            } else {
                // No way to end this body honestly: close, so the truncation is visible.
                ctx.keep_alive = false;
            }
            co_return false;
        }
    }
    if (writer.chunked() && !writer.ended()) {
        if (auto ec = co_await writer.last(); ec) ctx.keep_alive = false;
    }
    co_return res.keep_alive();
}

// relay_body for an event stream beside its heartbeats (send_heartbeats), until the relay ends;
// whether the connection may be reused. A coroutine of its own: the pair's state stays out of
// relay_response's frame.
net::awaitable<bool> relay_with_heartbeats(http::request_context& ctx, upstream::connection& conn,
                                           upstream::response_parser& parser,
                                           const config::upstream_config& up, exchange_state& state,
                                           body_writer& writer, sse::boundary_tracker& tracker,
                                           providers::usage_observer* watching,
                                           std::string_view prefetched,
                                           providers::bedrock::messages_events* rewrite,
                                           guardrails::stream_guard* guard) {
    auto winner = co_await (relay_body(ctx, conn, parser, up, state, writer, tracker, true,
                                       watching, prefetched, rewrite, guard) ||
                            send_heartbeats(writer, tracker, ctx.server.sse_heartbeat));
    co_return winner.index() == 0 && std::get<0>(winner);
}

}  // namespace

guardrails::stream_api stream_api_of(const providers::ingress& in) {
    if (&in == &providers::messages()) return guardrails::stream_api::messages;
    if (&in == &providers::responses()) return guardrails::stream_api::responses;
    if (&in == &providers::generate_content()) return guardrails::stream_api::generate_content;
    return guardrails::stream_api::chat_completions;
}

std::string response_head(const bhttp::response_header<>& res, const http::request_context& ctx,
                          std::string_view hop_line, std::string_view connection,
                          const route_fields& route) {
    http::response_head head(res.result_int(), res.reason());
    for_each_end_to_end(res, [&](bhttp::field, std::string_view name, std::string_view value) {
        head.field(name, value);
    });
    if (route.attempts > 0) {
        head.field("x-contextgate-upstream", route.upstream);
        head.field("x-contextgate-attempts", std::to_string(route.attempts));
    }
    if (!route.cache.empty()) head.field("x-contextgate-cache", route.cache);
    if (!route.cost.empty()) head.field("x-contextgate-cost-usd", route.cost);
    return head.finish(ctx.request_id, hop_line, connection);
}

net::awaitable<bool> relay_response(http::request_context& ctx, upstream::connection& conn,
                                    upstream::response_parser& parser,
                                    const config::upstream_config& up, exchange_state& state,
                                    std::string_view prefetched, guardrails::stream_guard* guard) {
    auto& res = parser.get();
    ctx.status = res.result_int();
    state.answered = true;
    bool head_request = ctx.req.method() == bhttp::verb::head;
    bool body_follows = !parser.is_done() || !prefetched.empty();
    // Beast's content_length() is what remains to be read: with the bytes read already.
    auto length = parser.content_length();
    if (!prefetched.empty() && parser.is_done()) length = prefetched.size();
    if (length && !prefetched.empty() && !parser.is_done()) *length += prefetched.size();
    bool sse = is_event_stream(res);
    // Bedrock's streams are binary frames: relayed as they come, read for usage frame by frame.
    bool aws_stream = up.provider == config::provider_kind::bedrock && is_aws_event_stream(res);
    // InvokeModel's stream to a /v1/messages client: relayed as Anthropic's SSE, its length
    // unknown until it ends.
    // (Every local of a coroutine is in its frame: what only some answers need is allocated.)
    std::unique_ptr<providers::bedrock::messages_events> rewrite;
    if (aws_stream && state.messages_by_invoke) {
        rewrite = std::make_unique<providers::bedrock::messages_events>(aws_message_limit);
        res.set(bhttp::field::content_type, "text/event-stream; charset=utf-8");
        aws_stream = false;
        sse = true;
        length.reset();
    }
    // A guarded stream's events are written again: its length is known only at its end.
    if (!sse) guard = nullptr;
    if (guard) length.reset();

    // Framing towards the client: the upstream's Content-Length when it gave one, otherwise
    // chunked (our own chunks, one per upstream read); an HTTP/1.0 client gets a close-delimited
    // body instead.
    bool chunked = false;
    std::string framing;
    if (length && (body_follows || head_request || *length == 0)) {
        framing = "Content-Length: " + std::to_string(*length);
    } else if (body_follows) {
        if (ctx.req.version() >= 11) {
            chunked = true;
            framing = "Transfer-Encoding: chunked";
        } else {
            ctx.keep_alive = false;
        }
    } else if (res.result_int() >= 200 && res.result_int() != 204 && res.result_int() != 304) {
        framing = "Content-Length: 0";
    }
    if (ctx.draining) ctx.keep_alive = false;
    // Only successful answers report usage; the observer reads a copy of what is relayed.
    std::unique_ptr<providers::usage_observer> observer;
    using answer = providers::usage_observer::framing;
    if (res.result_int() / 100 == 2 && body_follows)
        observer =
            std::make_unique<providers::usage_observer>(sse          ? answer::sse
                                                        : aws_stream ? answer::aws_event_stream
                                                                     : answer::json);
    auto* watching = observer.get();
    if (observer && !sse && !aws_stream && parser.is_done() && state.price) {
        // A whole JSON answer (read before the commit): its cost is known, and goes in the head.
        cost_in_head(ctx, state, observer->finish_whole(prefetched), observer->delivered_bytes());
        watching = nullptr;  // read whole; nothing more comes
    }
    auto head = response_head(res, ctx, framing, ctx.keep_alive ? "" : "close", state.fields);
    ctx.started();
    // Body bytes that came with the header go out with it, in one write.
    bool hold_head = body_follows && (conn.buffer().size() > 0 || !prefetched.empty());
    if (!hold_head) {
        if (auto ec = co_await write_client(ctx, net::buffer(head)); ec) {
            ctx.keep_alive = false;
            co_return false;
        }
        head.clear();
    }

    body_writer writer(ctx, chunked, std::move(head));
    sse::boundary_tracker tracker;
    state.streamed = sse || aws_stream;
    bool reusable = false;
    if (sse && chunked && ctx.server.sse_heartbeat.count() > 0)
        reusable = co_await relay_with_heartbeats(ctx, conn, parser, up, state, writer, tracker,
                                                  watching, prefetched, rewrite.get(), guard);
    else
        reusable = co_await relay_body(ctx, conn, parser, up, state, writer, tracker, sse, watching,
                                       prefetched, rewrite.get(), guard);
    if (observer) {
        state.complete = parser.is_done() && !state.client_gone;
        state.used = observer->finish(state.complete);
        if (state.used.known) state.usage_source = sse || aws_stream ? "stream" : "body";
        state.delivered_bytes = observer->delivered_bytes();
    }
    co_return reusable;
}

}  // namespace gateway::passthrough
