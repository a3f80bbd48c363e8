#include "gateway/mcp/http_transport.hpp"

#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/sse/event_parser.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/pool.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <set>

namespace gateway::mcp {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr std::size_t max_message_bytes = 16 * 1024 * 1024;
constexpr int max_resumes = 5;  // an answer's stream resumed at most this often in a row

}  // namespace

config::upstream_config http_upstream(const config::mcp_server_config& server) {
    config::upstream_config up;
    up.name = "mcp:" + server.name;
    up.base_url = server.url;
    up.endpoint = server.endpoint;
    up.connect_timeout = server.connect_timeout;
    // The call's own deadline (the client's) decides how long an answer may take.
    up.first_byte_timeout = std::max(server.call_timeout, server.connect_timeout);
    up.idle_timeout = std::max<config::duration>(server.call_timeout, 300'000ms);
    up.max_idle_connections = 4;
    return up;
}

struct http_transport::state {
    state(net::any_io_executor executor, const config::mcp_server_config& server,
          std::shared_ptr<net::ssl::context> tls)
        : executor(executor),
          label(server.name),
          upstream(http_upstream(server)),
          headers(server.headers),
          pool(upstream, std::move(tls)) {}

    net::any_io_executor executor;
    std::string label;
    config::upstream_config upstream;  // before pool: the pool refers to it
    std::vector<std::pair<std::string, std::string>> headers;
    upstream::pool pool;
    std::string session_id, protocol_version;
    transport_events events;
    bool closed = false;
    std::set<upstream::connection*> in_use;  // closed by close()

    // The request head for `method` with our fields; `last_event_id` resumes a stream.
    std::string head(std::string_view method, std::string_view accept, std::size_t length,
                     std::string_view last_event_id = {}) const {
        std::string out(method);
        out += ' ';
        out += upstream.endpoint.base_path.empty() ? "/" : upstream.endpoint.base_path;
        out += " HTTP/1.1\r\nHost: ";
        upstream::append_host_header(out, upstream.endpoint);
        out += "\r\nAccept: ";
        out += accept;
        out += "\r\n";
        if (length > 0) out += "Content-Type: application/json\r\n";
        if (!session_id.empty()) out += "Mcp-Session-Id: " + session_id + "\r\n";
        if (!protocol_version.empty()) out += "MCP-Protocol-Version: " + protocol_version + "\r\n";
        if (!last_event_id.empty()) out += "Last-Event-ID: " + std::string(last_event_id) + "\r\n";
        for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
        out += "Content-Length: " + std::to_string(length) + "\r\n\r\n";
        return out;
    }

    // Hands one message (or a batch) to the client; true when it answers `request_id`.
    bool dispatch(std::string_view text, const json::value& request_id) {
        json::error_code ec;
        json::parse_options options;
        options.max_depth = 64;
        auto value = json::parse(text, ec, {}, options);
        if (ec) {
            observability::log_warn(
                "mcp " + label + ": not a JSON-RPC message: " + std::string(text.substr(0, 200)));
            return false;
        }
        bool answered = false;
        auto one = [&](json::value& v) {
            auto* o = v.if_object();
            if (!o || closed || !events.message) return;
            const auto* id = o->if_contains("id");
            if (id && !request_id.is_null() && *id == request_id && !o->contains("method"))
                answered = true;
            events.message(std::move(*o));
        };
        if (auto* batch = value.if_array())
            for (auto& v : *batch) one(v);
        else
            one(value);
        return answered;
    }

    void fail(const json::value& id, std::string why, bool session_gone = false) {
        if (closed || id.is_null() || !events.request_failed) return;
        events.request_failed(id, std::move(why), session_gone);
    }
};

namespace {

using state_ptr = std::shared_ptr<http_transport::state>;

// One exchange's connection, known to the state while in use so close() can end it.
struct tracked {
    http_transport::state& s;
    upstream::connection* current = nullptr;
    upstream::exchange_hooks hooks() {
        return {[this](upstream::connection* c) {
                    if (current) s.in_use.erase(current);
                    current = c;
                    if (c) s.in_use.insert(c);
                },
                [this] { return s.closed; }};
    }
    ~tracked() {
        if (current) s.in_use.erase(current);
    }
};

// Where an event stream stands: the last event id and the reconnection delay the server gave.
struct stream_position {
    std::string last_id;
    config::duration retry{1000};
};

// Reads an event stream to its end, dispatching each event's message. True when one of them
// answered `request_id`.
net::awaitable<bool> read_events(state_ptr s, upstream::connection& conn,
                                 upstream::response_parser& parser, const json::value& request_id,
                                 stream_position& position) {
    sse::event_parser events(max_message_bytes);
    std::vector<sse::event> got;
    io::relay_buffer buffer;
    bool answered = false;
    while (!parser.is_done()) {
        auto [n, failed] =
            co_await upstream::read_piece(conn, parser, buffer.buffer(), s->upstream.idle_timeout);
        if (s->closed) co_return answered;
        got.clear();
        if (!events.feed({buffer.data(), n}, got)) break;
        for (auto& e : got) {
            if (!e.id.empty()) position.last_id = e.id;
            if (e.retry) position.retry = config::duration(*e.retry);
            if (e.data.empty()) continue;  // a priming event: only its id matters
            answered = s->dispatch(e.data, request_id) || answered;
            if (s->closed) co_return answered;
            // The request's answer came: nothing more is read from its stream, which may be a
            // resumed GET stream the server keeps open (the connection is then dropped).
            if (answered && !request_id.is_null()) co_return true;
        }
        if (failed) break;
    }
    co_return answered;
}

// GET on the endpoint for an event stream, from `position` when it has an id. The status (0
// when unreachable) and whether the request's answer came.
net::awaitable<std::pair<unsigned, bool>> get_stream(state_ptr s, const json::value& request_id,
                                                     stream_position& position) {
    tracked track{*s};
    auto hooks = track.hooks();
    auto head = s->head("GET", "text/event-stream", 0, position.last_id);
    std::optional<upstream::response_parser> parser;
    auto started = co_await upstream::start_exchange(s->pool, s->executor, head, {}, parser, false,
                                                     false, hooks);
    if (!started.conn || s->closed) co_return std::pair{0u, false};
    auto status = parser->get().result_int();
    if (status != 200) co_return std::pair{status, false};
    auto answered = co_await read_events(s, *started.conn, *parser, request_id, position);
    co_return std::pair{status, answered};
}

net::awaitable<void> post(state_ptr s, json::object message) {
    json::value id;  // set for a request: the one message that expects an answer
    if (message.contains("method"))
        if (const auto* v = message.if_contains("id")) id = *v;
    auto body = json::serialize(message);
    auto head = s->head("POST", "application/json, text/event-stream", body.size());
    bool had_session = !s->session_id.empty();
    tracked track{*s};
    auto hooks = track.hooks();
    std::optional<upstream::response_parser> parser;
    auto started = co_await upstream::start_exchange(s->pool, s->executor, head, body, parser,
                                                     false, false, hooks);
    if (s->closed) co_return;
    if (!started.conn) {
        s->fail(id, "cannot reach " + s->upstream.base_url + ": " + started.failed.detail);
        co_return;
    }
    auto& res = parser->get();
    auto status = res.result_int();
    if (auto session = res["mcp-session-id"]; !session.empty())
        s->session_id = std::string(session);
    auto type = std::string(res[upstream::http::field::content_type]);
    std::transform(type.begin(), type.end(), type.begin(), ::tolower);
    if ((status == 404 || status == 400) && had_session) {
        // The protocol says 404; servers built on the TypeScript SDK's examples answer 400 with
        // "No valid session ID provided" after a restart. Either way: initialize again.
        std::string text;
        co_await upstream::read_body(*started.conn, *parser, text, 64 * 1024,
                                     s->upstream.idle_timeout);
        std::string lower = text;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (status == 404 || lower.find("session") != std::string::npos) {
            s->session_id.clear();
            s->fail(id,
                    "the server no longer knows this session (HTTP " + std::to_string(status) + ")",
                    true);
            co_return;
        }
        if (text.size() > 300) text.resize(300);
        s->fail(id,
                "HTTP " + std::to_string(status) + " from " + s->upstream.base_url + ": " + text);
        co_return;
    }
    if (status == 202 || status == 204) {
        std::string ignored;
        auto failed = co_await upstream::read_body(*started.conn, *parser, ignored, 64 * 1024,
                                                   s->upstream.idle_timeout);
        if (!failed && res.keep_alive()) s->pool.give_back(std::move(started.conn));
        s->fail(id, "the server accepted the request but sent no answer");
        co_return;
    }
    if (status < 200 || status >= 300 ||
        (!type.starts_with("application/json") && !type.starts_with("text/event-stream"))) {
        std::string text;
        co_await upstream::read_body(*started.conn, *parser, text, 64 * 1024,
                                     s->upstream.idle_timeout);
        if (text.size() > 300) text.resize(300);
        s->fail(id, "HTTP " + std::to_string(status) + " from " + s->upstream.base_url +
                        (text.empty() ? "" : ": " + text));
        co_return;
    }
    if (type.starts_with("application/json")) {
        std::string text;
        auto failed = co_await upstream::read_body(*started.conn, *parser, text, max_message_bytes,
                                                   s->upstream.idle_timeout);
        if (s->closed) co_return;
        if (failed) {
            s->fail(id, "the answer could not be read: " + failed.detail);
            co_return;
        }
        if (res.keep_alive()) s->pool.give_back(std::move(started.conn));
        if (!s->dispatch(text, id)) s->fail(id, "the server's answer did not answer the request");
        co_return;
    }
    stream_position position;
    bool answered = co_await read_events(s, *started.conn, *parser, id, position);
    started.conn.reset();
    // The stream ended without the answer: resume it where it stopped, as often as it progresses.
    for (int resumes = 0; !answered && !id.is_null() && !s->closed; ++resumes) {
        if (position.last_id.empty() || resumes == max_resumes) {
            s->fail(id, "the server's event stream ended before it answered");
            co_return;
        }
        net::steady_timer wait(s->executor, position.retry);
        co_await wait.async_wait(use_ec);
        if (s->closed) co_return;
        auto before = position.last_id;
        auto [got, answer] = co_await get_stream(s, id, position);
        answered = answer;
        if (got != 200) {
            s->fail(id,
                    "the server's event stream ended before it answered, and resuming it "
                    "failed (HTTP " +
                        std::to_string(got) + ")");
            co_return;
        }
        if (position.last_id != before) resumes = -1;  // it progressed: count afresh
    }
}

// The stream for what the server sends on its own, kept open until close().
net::awaitable<void> listen(state_ptr s) {
    stream_position position;
    auto backoff = 1000ms;
    while (!s->closed) {
        auto [status, answered] = co_await get_stream(s, json::value(), position);
        (void)answered;
        if (s->closed) co_return;
        if (status == 405 || status == 404 || (status >= 400 && status < 500)) co_return;
        backoff = status == 200 ? 1000ms : std::min<std::chrono::milliseconds>(backoff * 2, 30s);
        net::steady_timer wait(s->executor, status == 200
                                                ? std::max<config::duration>(position.retry, 100ms)
                                                : backoff);
        co_await wait.async_wait(use_ec);
    }
}

// Ends the session on the server (best effort, bounded by the connect timeout).
net::awaitable<void> terminate(state_ptr s, std::string session_id) {
    auto conn = s->pool.make(s->executor);
    auto opened = co_await conn->open(s->upstream);
    if (opened) co_return;
    std::string head = "DELETE " +
                       (s->upstream.endpoint.base_path.empty() ? std::string("/")
                                                               : s->upstream.endpoint.base_path) +
                       " HTTP/1.1\r\nHost: " + upstream::host_header(s->upstream.endpoint) +
                       "\r\nMcp-Session-Id: " + session_id + "\r\n";
    for (const auto& [name, value] : s->headers) head += name + ": " + value + "\r\n";
    head += "Content-Length: 0\r\nConnection: close\r\n\r\n";
    auto written = co_await conn->write(head, {}, s->upstream.connect_timeout);
    if (written) co_return;
    upstream::response_parser parser;
    bool got = false;
    co_await conn->read_header(parser, s->upstream.connect_timeout, got);
}

}  // namespace

http_transport::http_transport(io::task_group& tasks, const config::mcp_server_config& server,
                               std::shared_ptr<net::ssl::context> tls)
    : state_(std::make_shared<state>(tasks.executor(), server, std::move(tls))), tasks_(tasks) {}

http_transport::~http_transport() {
    close();
}

net::awaitable<std::string> http_transport::open(transport_events events) {
    state_->events = std::move(events);
    co_return std::string();  // the first POST (initialize) connects
}

void http_transport::send(json::object message) {
    if (state_->closed) return;
    tasks_.spawn("MCP server " + state_->upstream.name + ": a request",
                 post(state_, std::move(message)));
}

void http_transport::initialized(std::string protocol_version) {
    state_->protocol_version = std::move(protocol_version);
    if (!state_->closed)
        tasks_.spawn("MCP server " + state_->upstream.name + ": listening", listen(state_));
}

void http_transport::close() {
    auto& s = *state_;
    s.events = {};
    if (s.closed) return;
    s.closed = true;
    auto open = s.in_use;
    for (auto* c : open) c->close();
    s.pool.close_all();
    if (!s.session_id.empty())
        tasks_.spawn("MCP server " + s.upstream.name + ": ending its session",
                     terminate(state_, s.session_id));
}

}  // namespace gateway::mcp
