// A translated answer as the client's API says it (translated_answer.hpp).
#include "gateway/passthrough/translated_answer.hpp"

#include "gateway/error.hpp"
#include "gateway/guardrails/stream_guard.hpp"
#include "gateway/http/response.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>

namespace gateway::passthrough {

namespace json = boost::json;

std::vector<std::pair<std::string, std::string>> kept_fields(const upstream::response_parser& p,
                                                             const exchange_state& state) {
    auto out = state.fields.list();
    for (const auto& f : p.get()) {
        auto name = f.name_string();
        if (boost::beast::iequals(name, "retry-after") ||
            boost::beast::iequals(name, "retry-after-ms") ||
            (name.size() > 12 && boost::beast::iequals(name.substr(0, 12), "x-ratelimit-")) ||
            (name.size() > 18 && boost::beast::iequals(name.substr(0, 18), "anthropic-ratelimit")))
            out.emplace_back(std::string(name), std::string(f.value()));
    }
    return out;
}

namespace {

// One piece of a chunked body: size line, data, CRLF.
std::string chunk_of(std::string_view data) {
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string out = size;
    out.append(data);
    out += "\r\n";
    return out;
}

// The usage a finished stream reports, and the content it carried, for metrics and limits.
void note_usage(const std::vector<providers::stream_delta>& deltas, exchange_state& state) {
    for (const auto& d : deltas) {
        if (d.what == providers::stream_delta::kind::text ||
            d.what == providers::stream_delta::kind::call_arguments)
            state.delivered_bytes += d.text.size();
        if (d.what == providers::stream_delta::kind::finished && d.used.known) {
            state.used = d.used;
            state.usage_source = "stream";
        }
    }
}

bool is_content(const providers::stream_delta& d) {
    using kind = providers::stream_delta::kind;
    return d.what == kind::text || d.what == kind::call_started || d.what == kind::call_arguments;
}

}  // namespace

net::awaitable<relayed> relay_stream(http::request_context& ctx, upstream::connection& conn,
                                     upstream::response_parser& parser,
                                     const config::upstream_config& up,
                                     const providers::adapter& adapter,
                                     providers::event_writer& writer, bool hold,
                                     exchange_state& state, guardrails::stream_guard* guard) {
    auto head_bytes = [&] {
        http::response_head head(200);
        head.field("Content-Type", writer.content_type());
        head.field("Cache-Control", "no-cache");
        for (const auto& [name, value] : kept_fields(parser, state)) head.field(name, value);
        if (ctx.draining) ctx.keep_alive = false;
        ctx.status = 200;
        ctx.started();
        return head.finish(ctx.request_id, "Transfer-Encoding: chunked",
                           ctx.keep_alive ? "" : "close");
    };
    bool committed = !hold;
    if (committed) {
        auto bytes = head_bytes();
        if (auto ec = co_await write_client(ctx, net::buffer(bytes)); ec) {
            ctx.keep_alive = false;
            co_return relayed{};
        }
    }

    // A provider may send a whole call in one event (Gemini does): as large as a reply may be.
    providers::stream_reader reader(adapter, reply_limit);
    // The whole answer, assembled for the response cache when it may keep it.
    std::optional<providers::reply_builder> whole;
    if (state.keep_answer) whole.emplace();
    auto& res = parser.get();
    io::relay_buffer buffer;
    std::vector<providers::stream_delta> deltas;
    std::vector<providers::stream_delta> held;  // read before the first content
    std::string failure_message;
    // The answer's guardrails: the events as the client may see them now.
    auto screen = [guard](std::string& events) {
        if (!guard) return;
        std::string out;
        guard->feed(events, out);
        events.swap(out);
    };
    auto blocked = [guard] { return guard && guard->blocked(); };
    // Writes the frames of `deltas` as one chunk (after the head, at the first content, when
    // held); false when the client is gone.
    auto relay = [&]() -> net::awaitable<bool> {
        std::string out;
        if (!committed) {
            bool content = std::any_of(deltas.begin(), deltas.end(), is_content);
            held.insert(held.end(), std::make_move_iterator(deltas.begin()),
                        std::make_move_iterator(deltas.end()));
            if (!content) co_return true;
            committed = true;
            out = head_bytes();
            std::string events;
            for (const auto& d : held) writer.frames(d, events);
            screen(events);
            ctx.bytes_sent += events.size();
            if (!events.empty()) out += chunk_of(events);
        } else {
            std::string events;
            for (const auto& d : deltas) writer.frames(d, events);
            screen(events);
            if (events.empty()) co_return true;
            ctx.bytes_sent += events.size();
            out = chunk_of(events);
        }
        auto ec = co_await write_client(ctx, net::buffer(out));
        if (ec) ctx.keep_alive = false;
        co_return !ec;
    };
    while (!parser.is_done() && failure_message.empty()) {
        // Held back, no read waits past the route's deadline.
        auto idle =
            committed ? up.idle_timeout : upstream::within(up.idle_timeout, state.hold_until);
        auto [n, failed] = co_await upstream::read_piece(conn, parser, buffer.buffer(), idle);
        if (!committed) failed = upstream::past_deadline(failed, state.hold_until);
        deltas.clear();
        if (n > 0 && state.first_body == std::chrono::steady_clock::time_point{})
            state.first_body = std::chrono::steady_clock::now();
        reader.feed({buffer.data(), n}, deltas, failure_message);
        note_usage(deltas, state);
        if (whole)
            for (const auto& d : deltas) whole->add(d);
        bool written = co_await relay();
        if (!written) co_return relayed{};
        if (blocked()) break;  // the client's stream has ended: the rest is not read
        if (failed && state.client_gone) co_return relayed{};
        if (failed && failure_message.empty()) failure_message = failed.detail;
    }
    if (failure_message.empty() && !blocked()) {
        deltas.clear();
        if (reader.finish(deltas, failure_message)) {
            note_usage(deltas, state);
            if (whole)
                for (const auto& d : deltas) whole->add(d);
            bool written = co_await relay();
            if (!written) co_return relayed{};
        }
    }
    if (!committed) {
        // Nothing was written: the route tries its next target.
        state.used = {};
        state.usage_source = "none";
        state.delivered_bytes = 0;
        co_return relayed{
            false, upstream::failure{make_error_code(errc::upstream_bad_response),
                                     failure_message.empty() ? "its stream ended before any content"
                                                             : "its stream failed before any "
                                                               "content: " +
                                                                   failure_message}};
    }
    if (guard && !blocked()) {
        std::string rest;
        guard->finish(rest);
        ctx.bytes_sent += rest.size();
        if (!rest.empty()) {
            auto framed = chunk_of(rest);
            if (auto ec = co_await write_client(ctx, net::buffer(framed)); ec) {
                ctx.keep_alive = false;
                co_return relayed{};
            }
        }
    }
    if (!failure_message.empty() && !blocked()) {
        observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                "` stream failed: " + failure_message);
        std::string event;
        providers::provider_error broke;
        broke.message = failure_message;
        writer.failed(broke, event);
        ctx.bytes_sent += event.size();
        auto framed = chunk_of(event);
        auto ec = co_await write_client(ctx, net::buffer(framed));
        if (ec) ctx.keep_alive = false;
    }
    static constexpr std::string_view last_chunk = "0\r\n\r\n";
    auto ec = co_await write_client(ctx, net::buffer(last_chunk));
    if (ec) ctx.keep_alive = false;
    state.complete = failure_message.empty() && parser.is_done();
    if (whole && state.complete && whole->finished()) {
        std::string unreadable;
        auto assembled = whole->take(unreadable);
        if (unreadable.empty())
            state.translated_reply = std::make_unique<providers::reply>(std::move(assembled));
    }
    co_return relayed{failure_message.empty() && parser.is_done() && res.keep_alive(), {}};
}

std::vector<providers::stream_delta> deltas_of(const providers::reply& reply) {
    using providers::stream_delta;
    std::vector<stream_delta> out;
    stream_delta started;
    started.what = stream_delta::kind::started;
    started.id = reply.id;
    started.name = reply.model;
    out.push_back(std::move(started));
    std::size_t calls = 0;
    for (const auto& p : reply.content.parts) {
        if (p.what == providers::part::kind::reasoning && !p.text.empty()) {
            stream_delta reasoning;
            reasoning.what = stream_delta::kind::reasoning;
            reasoning.text = p.text;
            out.push_back(std::move(reasoning));
        } else if (p.what == providers::part::kind::text && !p.text.empty()) {
            stream_delta text;
            text.what = stream_delta::kind::text;
            text.text = p.text;
            out.push_back(std::move(text));
        } else if (p.what == providers::part::kind::tool_call) {
            stream_delta call;
            call.what = stream_delta::kind::call_started;
            call.index = calls;
            call.id = p.call.id;
            call.name = p.call.name;
            call.provider_meta = p.call.provider_meta;
            out.push_back(std::move(call));
            stream_delta arguments;
            arguments.what = stream_delta::kind::call_arguments;
            arguments.index = calls++;
            arguments.text = json::serialize(p.call.arguments);
            out.push_back(std::move(arguments));
        }
    }
    stream_delta finished;
    finished.what = stream_delta::kind::finished;
    finished.why = reply.why;
    finished.used = reply.used;
    out.push_back(std::move(finished));
    return out;
}

net::awaitable<void> write_reply_as_stream(
    http::request_context& ctx, const providers::reply& reply, providers::event_writer& writer,
    const std::vector<std::pair<std::string, std::string>>& kept, guardrails::stream_guard* guard) {
    http::response_head head(200);
    head.field("Content-Type", writer.content_type());
    head.field("Cache-Control", "no-cache");
    for (const auto& [name, value] : kept) head.field(name, value);
    if (ctx.draining) ctx.keep_alive = false;
    auto bytes =
        head.finish(ctx.request_id, "Transfer-Encoding: chunked", ctx.keep_alive ? "" : "close");
    std::string events;
    for (const auto& d : deltas_of(reply)) writer.frames(d, events);
    if (guard) {
        std::string screened;
        guard->feed(events, screened);
        guard->finish(screened);
        events.swap(screened);
    }
    ctx.bytes_sent += events.size();
    bytes += chunk_of(events);
    bytes += "0\r\n\r\n";
    ctx.status = 200;
    ctx.started();
    if (auto ec = co_await write_client(ctx, net::buffer(bytes)); ec) ctx.keep_alive = false;
}

}  // namespace gateway::passthrough
