#include "gateway/http/session.hpp"

#include "gateway/error.hpp"
#include "gateway/http/listener.hpp"
#include "gateway/http/request_head.hpp"
#include "gateway/http/response.hpp"
#include "gateway/ids.hpp"
#include "gateway/io/write_all.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/request_cost.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <array>
#include <chrono>
#include <random>

namespace gateway::http {

namespace {

namespace bhttp = beast::http;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr std::size_t read_chunk = 16 * 1024;

// The labels of a request's duration: bounded sets (unlike paths), numbered so that each thread
// finds its series in an array instead of the family's map.
constexpr std::string_view route_names[] = {"context", "passthrough", "console", "admin", "other"};
constexpr std::string_view method_names[] = {"GET",    "POST", "PUT",     "PATCH",
                                             "DELETE", "HEAD", "OPTIONS", "other"};

std::size_t route_class(std::string_view target) {
    auto path = target.substr(0, target.find('?'));
    auto under = [&](std::string_view prefix) {
        return path.starts_with(prefix) &&
               (path.size() == prefix.size() || path[prefix.size()] == '/');
    };
    if (under("/v1/system-prompts") || under("/context")) return 0;
    if (under("/v1") || under("/v1beta") || under("/bedrock") || under("/vertex")) return 1;
    if (under("/console")) return 2;
    if (under("/admin")) return 3;
    return 4;
}

std::size_t method_class(bhttp::verb verb) {
    switch (verb) {
        case bhttp::verb::get:
            return 0;
        case bhttp::verb::post:
            return 1;
        case bhttp::verb::put:
            return 2;
        case bhttp::verb::patch:
            return 3;
        case bhttp::verb::delete_:
            return 4;
        case bhttp::verb::head:
            return 5;
        case bhttp::verb::options:
            return 6;
        default:
            return 7;
    }
}

observability::histogram& duration_of(const request_context& ctx) {
    auto route = route_class(ctx.req.target());
    auto method = method_class(ctx.req.method());
    // 1xx..5xx, then "other" (observability::status_class names them).
    constexpr std::size_t status_classes = 6;
    std::size_t status = ctx.status >= 100 && ctx.status <= 599 ? ctx.status / 100 - 1 : 5;
    thread_local std::array<observability::histogram*,
                            std::size(route_names) * std::size(method_names) * status_classes>
        known{};
    auto& slot = known[(route * std::size(method_names) + method) * status_classes + status];
    if (!slot)
        slot = &observability::metrics().http_duration.with(
            {route_names[route], method_names[method], observability::status_class(ctx.status)});
    return *slot;
}

// The request's SERVER span: under the client's traceparent when it sent one. Named by method
// until the router (or the handler) knows the route.
observability::span server_span(const request& req) {
    auto parent = observability::parse_traceparent(req["traceparent"], req["tracestate"]);
    if (!parent) {
        // Probes and scrapes come every few seconds from machines: they start no trace of their
        // own (a caller's traceparent still has them recorded).
        std::string_view target = req.target();
        auto path = target.substr(0, target.find('?'));
        if (path == "/healthz" || path == "/readyz" || path == "/metrics") return {};
    }
    return observability::start_span(std::string(req.method_string()),
                                     observability::span_kind::server, parent ? &*parent : nullptr);
}

// What the SERVER span says of the finished request (HTTP semantic conventions).
void end_server_span(request_context& ctx) {
    auto& s = ctx.trace;
    std::string_view target = ctx.req.target();
    auto method = std::string(ctx.req.method_string());
    if (!ctx.route.empty()) {
        s.rename(method + " " + std::string(ctx.route));
        s.set("http.route", ctx.route);
    }
    s.set("http.request.method", method);
    s.set("url.path", observability::redacted_target(target.substr(0, target.find('?'))));
    s.set("http.response.status_code", static_cast<std::int64_t>(ctx.status));
    s.set("contextgate.request_id", ctx.request_id);
    if (!ctx.key_id.empty()) s.set("contextgate.key_id", ctx.key_id);
    if (!ctx.cache.empty()) s.set("contextgate.cache", ctx.cache);
    if (ctx.status >= 500 || ctx.status == 0 || ctx.status == 499)
        s.fail(ctx.status == 499 ? "client_gone" : std::to_string(ctx.status));
    s.end();
}

// The request's access line and duration metric.
void finished(const request_context& ctx, std::chrono::steady_clock::time_point started,
              bool access_log) {
    auto now = std::chrono::steady_clock::now();
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - started).count();
    if (observability::metrics().on) duration_of(ctx).observe(static_cast<double>(micros) / 1e6);
    if (!access_log && !observability::access_followed()) return;
    observability::access_entry entry;
    entry.request_id = ctx.request_id;
    entry.method = ctx.req.method_string();
    entry.path = ctx.req.target();
    entry.status = ctx.status;
    entry.bytes = ctx.bytes_sent;
    entry.duration_us = micros;
    if (ctx.response_started)
        entry.first_byte_us =
            std::chrono::duration_cast<std::chrono::microseconds>(ctx.first_byte - started).count();
    entry.upstream = ctx.upstream;
    entry.attempts = ctx.attempts;
    entry.cache = ctx.cache;
    entry.model = ctx.model;
    entry.key_id = ctx.key_id;
    entry.input_tokens = ctx.input_tokens;
    entry.output_tokens = ctx.output_tokens;
    std::string cost;
    if (ctx.cost) {
        cost = cost_text(*ctx.cost);
        entry.cost = cost;
        entry.cost_estimated = ctx.cost->estimated;
    }
    if (access_log) observability::log_access(entry);
    observability::feed_access(entry);
}

// A malformed request (answered 400), as opposed to the connection ending or timing out.
bool is_parse_error(boost::system::error_code ec) {
    return ec.category() == make_error_code(bhttp::error::bad_version).category() &&
           ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

// Feeds the bytes already buffered to the parser, so a request that arrived whole is parsed
// without an asynchronous read that would complete at once (each costs a trip through the
// event loop). Returns the parse error, or need_more when the parser wants more input.
boost::system::error_code parse_buffered(bhttp::request_parser<bhttp::string_body>& parser,
                                         beast::flat_buffer& buffer, bool until_done) {
    boost::system::error_code ec = bhttp::error::need_more;
    while (buffer.size() > 0 && !(until_done ? parser.is_done() : parser.is_header_done())) {
        std::size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec) return ec;
    }
    if (until_done ? parser.is_done() : parser.is_header_done()) return {};
    return bhttp::error::need_more;
}

using request_parser = bhttp::request_parser<bhttp::string_body>;

// Why a request is answered with an error instead of being served.
struct refusal {
    errc code;
    std::string message;
};

// Reads one request into `parser`. Its head is checked (framing, Host, target; see
// check_request_head) and passed through the router's guards before any body byte is read.
// Returns true when a whole request was read; false on close or timeout, or with `refused` set
// when the client must be answered with an error (and the connection closed).
//
// The parser lives in the session and the refusals are answered by the caller: this coroutine
// runs on every request, and its frame stays small enough for the allocator's per-thread cache.
net::awaitable<bool> read_request(net::ip::tcp::socket& stream, io::deadline& deadline,
                                  beast::flat_buffer& buffer, const config::server_config& server,
                                  const router& routes, std::optional<request_parser>& parsing,
                                  std::string& request_id, std::optional<refusal>& refused,
                                  std::size_t& header_fields, std::optional<auth::principal>& who) {
    auto& parser = parsing.emplace();
    parser.header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(server.header_limit, std::numeric_limits<std::uint32_t>::max())));
    parser.body_limit(server.body_limit);

    // Not eager until the head has been checked: no body byte is parsed (and no trailer merged)
    // before the guards have seen the head.
    auto header_ec = parse_buffered(parser, buffer, false);
    if (header_ec == bhttp::error::need_more) {
        deadline.arm(server.header_timeout);
        auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, use_ec);
        header_ec = ec;
    }
    if (header_ec == bhttp::error::body_limit) {  // a declared Content-Length over the limit
        refused = refusal{errc::body_too_large, {}};
        co_return false;
    }
    if (header_ec == bhttp::error::header_limit) {
        refused = refusal{errc::header_too_large, {}};
        co_return false;
    }
    if (header_ec && !is_parse_error(header_ec)) co_return false;  // closed, reset, timed out
    if (header_ec) {
        refused =
            refusal{errc::bad_request, "Malformed HTTP request: " + header_ec.message() + "."};
        co_return false;
    }

    auto& header = parser.get();
    if (auto id = header["x-request-id"]; !id.empty() && id.size() <= 200) request_id = id;
    if (auto head_refused = check_request_head(header)) {
        refused = refusal{head_refused->code, std::move(head_refused->message)};
        co_return false;
    }
    if (routes.identifies(header)) who = co_await routes.identify(header);
    if (const auto* refusing = routes.refusing_guard(header, who ? &*who : nullptr)) {
        refused = refusal{refusing->refusal, refusing->message};
        co_return false;
    }
    // A chunked body's trailer fields are merged after these; the caller drops them.
    header_fields = static_cast<std::size_t>(std::distance(header.begin(), header.end()));
    if (beast::iequals(header[bhttp::field::expect], "100-continue") && !parser.is_done()) {
        static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
        auto bytes = net::buffer(go_on);
        auto ec = co_await io::write_all(stream, deadline, server.write_timeout, bytes);
        if (ec) co_return false;
    }

    parser.eager(true);
    auto body_ec = parse_buffered(parser, buffer, true);
    if (body_ec == bhttp::error::need_more) {
        deadline.arm(server.body_timeout);
        auto [ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_ec);
        body_ec = ec;
    }
    if (body_ec == bhttp::error::body_limit) {
        refused = refusal{errc::body_too_large, {}};
        co_return false;
    }
    if (body_ec && !is_parse_error(body_ec)) co_return false;  // closed, reset, timed out
    if (body_ec) {
        refused =
            refusal{errc::bad_request, "Malformed HTTP request body: " + body_ec.message() + "."};
        co_return false;
    }
    co_return true;
}

// Answers a request that could not be read or was refused before routing; the connection is
// not reused afterwards.
net::awaitable<void> answer_refusal(net::ip::tcp::socket& stream, io::deadline& deadline,
                                    beast::flat_buffer& buffer, const config::server_config& server,
                                    request_parser& parser, std::string& request_id,
                                    const bool& draining, const refusal& refused) {
    request empty;
    request_context ctx{
        stream,     deadline, buffer,   parser.is_header_done() ? parser.get() : empty,
        request_id, server,   draining, false};
    co_await write_error(ctx, refused.code, refused.message);
}

}  // namespace

net::awaitable<void> run_session(net::ip::tcp::socket socket, worker& owner) {
    auto& stream = socket;
    // Deregisters even when a bug throws, so drain() never touches a dead stream.
    struct registration {
        worker& owner;
        std::list<session_entry>::iterator entry;
        ~registration() { owner.remove_session(entry); }
    } registered{owner, owner.add_session(stream)};
    auto entry = registered.entry;
    const auto& server = owner.server();
    io::deadline deadline(stream.get_executor(), stream);
    beast::flat_buffer buffer;
    std::optional<request_parser> parser;  // emplaced for each request

    for (std::size_t served = 0; served < server.max_requests_per_connection; ++served) {
        if (owner.draining()) break;
        if (buffer.size() == 0) {
            // Idle between requests: the keep-alive timeout applies until the first byte.
            deadline.arm(served == 0 ? server.header_timeout : server.keep_alive_timeout);
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(read_chunk), use_ec);
            if (ec) break;
            buffer.commit(n);
        }
        entry->busy = true;
        auto started = std::chrono::steady_clock::now();
        std::string request_id = correlation_id();
        std::optional<refusal> refused;
        std::size_t header_fields = 0;
        std::optional<auth::principal> who;
        bool ok = co_await read_request(stream, deadline, buffer, server, owner.routes(), parser,
                                        request_id, refused, header_fields, who);
        if (!ok) {
            if (refused)
                co_await answer_refusal(stream, deadline, buffer, server, *parser, request_id,
                                        owner.draining(), *refused);
            break;
        }
        // Trailer fields of a chunked body were merged after the head's: dropped, never
        // forwarded.
        request req = parser->release();
        if (req.chunked()) drop_trailer_fields(req, header_fields);

        // The read deadlines bound the reads; what the handler waits for next (an upstream slow
        // to answer) is bounded by its own timeouts, and each client write arms its own.
        deadline.disarm();
        request_context ctx{stream, deadline,        buffer, req, std::move(request_id),
                            server, owner.draining()};
        ctx.keep_alive = req.keep_alive();
        ctx.principal = std::move(who);
        if (observability::tracing()) ctx.trace = server_span(req);
        co_await owner.routes().dispatch(ctx);
        if (ctx.trace.recording()) end_server_span(ctx);
        finished(ctx, started, owner.access_log());
        entry->busy = false;
        if (!ctx.keep_alive) break;
    }

    boost::system::error_code ignored;
    stream.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    stream.close(ignored);
}

}  // namespace gateway::http
