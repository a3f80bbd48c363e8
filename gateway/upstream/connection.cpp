#include "gateway/upstream/connection.hpp"

#include "gateway/append.hpp"
#include "gateway/error.hpp"
#include "gateway/io/socket_input.hpp"
#include "gateway/io/write_all.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

#include <array>
#include <charconv>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

namespace gateway::upstream {

void append_host_header(std::string& to, const config::upstream_endpoint& e) {
    // Written in place, in one append: a forwarded request asks for it every time.
    bool v6 = e.host.find(':') != std::string::npos;
    char port[8] = {':'};
    std::string_view named_port;
    if (e.port != (e.tls ? 443 : 80))
        named_port = {port, static_cast<std::size_t>(
                                std::to_chars(port + 1, port + sizeof port, e.port).ptr - port)};
    append(to, {v6 ? "[" : "", e.host, v6 ? "]" : "", named_port});
}

std::string host_header(const config::upstream_endpoint& e) {
    std::string host;
    host.reserve(e.host.size() + 8);
    append_host_header(host, e);
    return host;
}

namespace {

using tcp = net::ip::tcp;
using boost::system::error_code;
constexpr std::size_t read_capacity = 16 * 1024;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

bool is_ip_literal(const std::string& host) {
    error_code ec;
    net::ip::make_address(host, ec);
    return !ec;
}

// Maps a read or write error on an upstream connection to the failure the client sees.
failure classify(error_code ec, bool timed_out, errc on_timeout, std::string_view what) {
    if (timed_out) return {on_timeout, std::string(what) + " timed out"};
    if (ec.category() == make_error_code(http::error::bad_version).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message)
        return {errc::upstream_bad_response,
                "the upstream sent a malformed HTTP response: " + ec.message()};
    return {
        errc::upstream_reset,
        std::string(what) + " failed: the upstream closed the connection (" + ec.message() + ")"};
}

}  // namespace

connection::connection(net::any_io_executor executor,
                       std::shared_ptr<net::ssl::context> tls_context)
    : tls_context_(std::move(tls_context)) {
    if (tls_context_)
        secure_.emplace(executor, *tls_context_);
    else
        plain_.emplace(executor);
    // Beast sizes each read by the buffer's free capacity; the default 512 bytes would split
    // an ordinary response into several reads and as many client writes.
    buffer_.reserve(read_capacity);
    deadline_.emplace(executor, tcp());
}

connection::~connection() {
    close();
}

tcp::socket& connection::tcp() {
    return secure_ ? secure_->next_layer() : *plain_;
}

net::awaitable<resolution> resolve(net::any_io_executor executor,
                                   const config::upstream_config& upstream) {
    const auto& host = upstream.endpoint.host;
    const auto port = upstream.endpoint.port;
    resolution out;
    if (is_ip_literal(host)) {
        out.endpoints.emplace_back(net::ip::make_address(host), port);
        co_return out;
    }
    observability::metrics().upstream_resolutions.with({upstream.name}).inc();
    // The resolver has no deadline of its own: race it against a timer.
    using namespace net::experimental::awaitable_operators;
    tcp::resolver resolver(executor);
    net::steady_timer timer(executor, upstream.connect_timeout);
    auto raced = co_await (resolver.async_resolve(host, std::to_string(port), use_ec) ||
                           timer.async_wait(use_ec));
    if (raced.index() == 1) {
        out.failed = failure{errc::upstream_connect_timeout, "resolving " + host + " timed out"};
        co_return out;
    }
    auto [ec, results] = std::get<0>(raced);
    if (ec) {
        out.failed = failure{errc::upstream_unreachable,
                             "cannot resolve upstream host " + host + ": " + ec.message()};
        co_return out;
    }
    for (const auto& entry : results) out.endpoints.push_back(entry.endpoint());
    co_return out;
}

net::awaitable<failure> connection::open(const config::upstream_config& upstream) {
    auto resolved = co_await resolve(tcp().get_executor(), upstream);
    if (resolved.failed) co_return resolved.failed;
    co_return co_await open(upstream, resolved.endpoints);
}

net::awaitable<failure> connection::open(const config::upstream_config& upstream,
                                         const std::vector<tcp::endpoint>& endpoints) {
    const auto& host = upstream.endpoint.host;
    const auto port = upstream.endpoint.port;
    std::string where = host + ":" + std::to_string(port);

    deadline_->arm(upstream.connect_timeout);
    auto [connect_ec, endpoint] = co_await net::async_connect(tcp(), endpoints, use_ec);
    if (connect_ec && deadline_->expired())
        co_return failure{errc::upstream_connect_timeout, "connecting to " + where + " timed out"};
    if (connect_ec)
        co_return failure{errc::upstream_unreachable,
                          "cannot connect to upstream " + where + ": " + connect_ec.message()};
    tcp().set_option(tcp::no_delay(true));

    if (secure_) {
        if (!is_ip_literal(host)) SSL_set_tlsext_host_name(secure_->native_handle(), host.c_str());
        if (!upstream.tls_insecure)
            secure_->set_verify_callback(net::ssl::host_name_verification(host));
        deadline_->arm(upstream.connect_timeout);
        auto [ec] = co_await secure_->async_handshake(net::ssl::stream_base::client, use_ec);
        if (ec && deadline_->expired())
            co_return failure{errc::upstream_connect_timeout,
                              "TLS handshake with " + where + " timed out"};
        if (ec) {
            std::string why = ec.message();
            long verify = SSL_get_verify_result(secure_->native_handle());
            if (verify != X509_V_OK)
                why = std::string("certificate verification failed: ") +
                      X509_verify_cert_error_string(verify);
            co_return failure{errc::upstream_tls,
                              "TLS handshake with " + where + " failed: " + why};
        }
    }
    name_ = &upstream.name;
    open_gauge_ = &observability::metrics().upstream_open.with({upstream.name});
    open_gauge_->add(1);
    co_return failure{};
}

net::awaitable<failure> connection::write(std::string_view head, std::string_view body,
                                          config::duration deadline) {
    std::array<net::const_buffer, 2> buffers{net::buffer(head.data(), head.size()),
                                             net::buffer(body.data(), body.size())};
    error_code ec;
    if (secure_) {
        deadline_->arm(deadline);
        auto [e, n] = co_await net::async_write(*secure_, buffers, use_ec);
        ec = e;
    } else {
        ec = co_await io::write_all(*plain_, *deadline_, deadline, buffers);
    }
    if (ec)
        co_return classify(ec, deadline_->expired(), errc::upstream_first_byte_timeout,
                           "sending the request");
    co_return failure{};
}

net::awaitable<error_code> connection::fill() {
    auto space = buffer_.prepare(beast::read_size(buffer_, 64 * 1024));
    error_code ec;
    std::size_t n = 0;
    if (secure_) {
        auto [e, got] = co_await secure_->async_read_some(space, use_ec);
        ec = e;
        n = got;
    } else {
        auto [e, got] = co_await plain_->async_read_some(space, use_ec);
        ec = e;
        n = got;
    }
    buffer_.commit(n);
    co_return ec;
}

net::awaitable<failure> connection::read_header(response_parser& parser, config::duration deadline,
                                                bool& got_bytes) {
    deadline_->arm(deadline);
    error_code ec;
    for (;;) {
        if (buffer_.size() > 0) {
            std::size_t used = parser.put(buffer_.data(), ec);
            buffer_.consume(used);
            if (ec == http::error::need_more) ec = {};
            if (ec || parser.is_header_done()) break;
        }
        ec = co_await fill();
        // The connection ended before a whole header: nothing at all, or part of one.
        if (ec == net::error::eof)
            ec = parser.got_some() ? http::error::partial_message : http::error::end_of_stream;
        if (ec) break;
    }
    got_bytes = parser.got_some();
    if (ec)
        co_return classify(ec, deadline_->expired(), errc::upstream_first_byte_timeout,
                           "waiting for the response");
    co_return failure{};
}

net::awaitable<failure> connection::read_some(response_parser& parser, config::duration deadline) {
    deadline_->arm(deadline);
    failure failed;
    for (;;) {
        auto ec = co_await fill();
        if (ec == net::error::eof) {
            // The end of a body delimited by the close, or a truncated one (partial_message).
            ec = {};
            parser.put_eof(ec);
            if (!ec) co_return failure{};
        }
        if (ec)
            co_return classify(ec, deadline_->expired(), errc::upstream_idle_timeout,
                               "reading the response body");
        // Until the bytes read make progress: a read may end inside a chunk header.
        if (parse_buffered(parser, failed)) co_return failed;
    }
}

bool connection::parse_buffered(response_parser& parser, failure& failed) {
    if (buffer_.size() == 0) return false;
    error_code ec;
    std::size_t used = parser.put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_buffer) return true;  // the body buffer is full: drain it
    if (ec == http::error::need_more) return used > 0;
    if (ec)
        failed = classify(ec, deadline_->expired(), errc::upstream_idle_timeout,
                          "reading the response body");
    return true;
}

net::awaitable<std::pair<error_code, std::size_t>> connection::read_raw(net::mutable_buffer buffer,
                                                                        config::duration deadline) {
    if (buffer_.size() > 0) {
        std::size_t n = net::buffer_copy(buffer, buffer_.data());
        buffer_.consume(n);
        co_return std::pair{error_code{}, n};
    }
    deadline_->arm(deadline);
    error_code ec;
    std::size_t n = 0;
    if (secure_) {
        auto [e, got] = co_await secure_->async_read_some(buffer, use_ec);
        ec = e;
        n = got;
    } else {
        auto [e, got] = co_await plain_->async_read_some(buffer, use_ec);
        ec = e;
        n = got;
    }
    co_return std::pair{ec, n};
}

net::awaitable<error_code> connection::write_raw(net::const_buffer buffer,
                                                 config::duration deadline) {
    deadline_->arm(deadline);
    error_code ec;
    if (secure_) {
        auto [e, got] = co_await net::async_write(*secure_, buffer, use_ec);
        ec = e;
    } else {
        auto [e, got] = co_await net::async_write(*plain_, buffer, use_ec);
        ec = e;
    }
    co_return ec;
}

void connection::close() {
    if (open_gauge_) {
        open_gauge_->add(-1);
        open_gauge_ = nullptr;
    }
    error_code ignored;
    auto& socket = tcp();
    if (socket.is_open()) {
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
    }
}

bool connection::looks_alive(bool probe_socket) {
    auto& socket = tcp();
    if (!socket.is_open() || buffer_.size() != 0) return false;
    if (!probe_socket) return true;
    // Nothing arrived that the reactor saw (no byte, no end, no error) since the last read
    // emptied the socket: it is idle and open, as the recv below would say, one system call
    // per pooled POST cheaper.
    if (!io::may_have_input(socket)) return true;
    char probe;
    ssize_t n = ::recv(socket.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    // 0: the upstream closed; >0: bytes nobody asked for; only "would block" means idle and alive.
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace gateway::upstream
