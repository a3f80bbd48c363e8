#include "gateway/upstream/exchange.hpp"

#include "gateway/error.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/providers/azure.hpp"
#include "gateway/providers/vertex.hpp"
#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/authorize.hpp"

#include <algorithm>
#include <array>

namespace gateway::upstream {

void append_wire_target(std::string& head, const config::upstream_config& up,
                        std::string_view model, std::string_view target) {
    if (up.host == config::hosting::azure)
        head += providers::azure::target(up, model, target);
    else if (up.host == config::hosting::vertex)
        head += providers::vertex::wire_target(up, target);
    else
        head += target;
}

std::string json_post_head(const config::upstream_config& up, std::string_view target,
                           std::string_view model, bool stream, std::string_view fields,
                           std::string_view request_id, std::size_t length) {
    std::string head;
    head.reserve(256 + fields.size());
    head += "POST ";
    head += up.endpoint.base_path;
    append_wire_target(head, up, model, target);
    head += " HTTP/1.1\r\nHost: ";
    append_host_header(head, up.endpoint);
    head += stream ? "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
                   : "\r\nContent-Type: application/json\r\nAccept: application/json\r\n";
    head += fields;
    head += "x-request-id: ";
    head += request_id;
    head += "\r\nContent-Length: ";
    head += std::to_string(length);
    head += "\r\n\r\n";
    return head;
}

namespace {

void count_connect_failure(const std::string& upstream, boost::system::error_code ec) {
    auto& m = observability::metrics();
    std::string_view reason = ec == errc::upstream_connect_timeout ? "timeout"
                              : ec == errc::upstream_tls           ? "tls"
                                                                   : "refused";
    m.upstream_connect_failures.with({upstream, reason}).inc();
    if (ec == errc::upstream_connect_timeout) m.upstream_timeouts.with({upstream, "connect"}).inc();
}

// The failure of a body past `limit` bytes.
failure too_long(std::size_t limit) {
    return {make_error_code(errc::upstream_bad_response),
            "the upstream's reply exceeds " + std::to_string(limit) + " bytes"};
}

}  // namespace

net::awaitable<started_exchange> start_exchange(pool& pool, net::any_io_executor executor,
                                                std::string_view head, std::string_view body,
                                                std::optional<response_parser>& parser,
                                                bool head_request, bool fresh_only,
                                                const exchange_hooks& hooks) {
    const auto& up = pool.upstream();
    auto abandoned = [&] { return hooks.abandoned && hooks.abandoned(); };
    auto use = [&](connection* c) {
        if (hooks.in_use) hooks.in_use(c);
    };
    // GET, HEAD and OPTIONS change nothing upstream: sending one twice is harmless.
    std::string_view method = head.substr(0, head.find(' '));
    bool safe = method == "GET" || method == "HEAD" || method == "OPTIONS";
    started_exchange out;
    for (int attempt = 0; attempt < 2; ++attempt) {
        // Any other request asks the socket first, so that one sent again is rare.
        auto conn = fresh_only || attempt > 0 ? nullptr : pool.take(!safe);
        bool reused = conn != nullptr;
        if (!conn) {
            conn = pool.make(executor);
            use(conn.get());
            auto addresses = co_await pool.resolve(executor);
            // (Not a conditional around the co_await: GCC 12 destroys its temporary twice.)
            if (addresses.failed)
                out.failed = addresses.failed;
            else
                out.failed = co_await conn->open(up, addresses.endpoints);
            if (out.failed) count_connect_failure(up.name, out.failed.ec);
            if (out.failed || abandoned()) {
                use(nullptr);
                co_return out;
            }
        }
        use(conn.get());
        parser.emplace();
        parser->body_limit(boost::none);
        if (head_request) parser->skip(true);
        bool got_bytes = false;
        auto first_byte =
            hooks.first_byte_timeout.count() ? hooks.first_byte_timeout : up.first_byte_timeout;
        out.failed = co_await conn->write(head, body, first_byte);
        if (!out.failed) out.failed = co_await conn->read_header(*parser, first_byte, got_bytes);
        if (out.failed.ec == errc::upstream_first_byte_timeout)
            observability::metrics().upstream_timeouts.with({up.name, "first_byte"}).inc();
        if (abandoned()) {
            use(nullptr);
            co_return out;
        }
        if (!out.failed) {
            // A Vertex AI or Entra ID Azure upstream that refuses the gateway's token (revoked,
            // or forgotten before its expiry) is not sent it again: the next attempt fetches one.
            if (auto* tokens = pool.tokens(); tokens && parser->get().result_int() == 401)
                tokens->invalidate(bearer_token_in(head));
            out.conn = std::move(conn);
            co_return out;
        }
        if (!(reused && !got_bytes && out.failed.ec == errc::upstream_reset)) break;
        // The upstream may have taken the request before the reset: sent again when that is
        // harmless, or else only when its owner counts it as an attempt.
        if (!safe && !(hooks.resend && hooks.resend())) break;
        out.failed = {};
    }
    use(nullptr);
    co_return out;
}

net::awaitable<piece> read_piece(connection& conn, response_parser& parser,
                                 net::mutable_buffer buffer, config::duration idle) {
    auto& res = parser.get();
    res.body().data = buffer.data();
    res.body().size = buffer.size();
    piece out;
    if (!conn.parse_buffered(parser, out.failed))
        out.failed = co_await conn.read_some(parser, idle);
    if (out.failed.ec == errc::upstream_idle_timeout)
        observability::metrics().upstream_timeouts.with({conn.upstream_name(), "idle"}).inc();
    out.size = buffer.size() - res.body().size;
    co_return out;
}

config::duration within(config::duration idle,
                        std::optional<std::chrono::steady_clock::time_point> until) {
    if (!until) return idle;
    auto left = std::chrono::ceil<config::duration>(*until - std::chrono::steady_clock::now());
    return std::clamp(left, config::duration(1), std::max(idle, config::duration(1)));
}

failure past_deadline(const failure& f,
                      std::optional<std::chrono::steady_clock::time_point> until) {
    if (!until || f.ec != errc::upstream_idle_timeout || std::chrono::steady_clock::now() < *until)
        return f;
    return {f.ec, "the route's deadline passed before the answer could be committed to"};
}

bool read_buffered_body(connection& conn, response_parser& parser, std::string& body,
                        std::size_t limit, failure& failed) {
    io::relay_buffer buffer;
    auto& res = parser.get();
    while (!parser.is_done()) {
        res.body().data = buffer.data();
        res.body().size = buffer.size();
        if (!conn.parse_buffered(parser, failed)) return false;
        body.append(buffer.data(), buffer.size() - res.body().size);
        if (!failed && body.size() > limit) failed = too_long(limit);
        if (failed) return true;
    }
    return true;
}

net::awaitable<failure> read_body(connection& conn, response_parser& parser, std::string& body,
                                  std::size_t limit, config::duration idle,
                                  std::optional<std::chrono::steady_clock::time_point> until) {
    io::relay_buffer buffer;
    while (!parser.is_done()) {
        auto [n, failed] = co_await read_piece(conn, parser, buffer.buffer(), within(idle, until));
        failed = past_deadline(failed, until);
        body.append(buffer.data(), n);
        if (!failed && body.size() > limit) failed = too_long(limit);
        if (failed) co_return failed;
    }
    co_return failure{};
}

}  // namespace gateway::upstream
