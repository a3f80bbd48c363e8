#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/deadline.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace gateway::upstream {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// An expected upstream failure: a gateway::errc code plus a human detail for the client and logs.
struct failure {
    boost::system::error_code ec;
    std::string detail;
    explicit operator bool() const { return static_cast<bool>(ec); }
};

using response_parser = http::response_parser<http::buffer_body>;

// An upstream's addresses (an IP literal's one, or what the resolver gave within the upstream's
// connect_timeout), or why there are none.
struct resolution {
    std::vector<net::ip::tcp::endpoint> endpoints;
    failure failed;
};
net::awaitable<resolution> resolve(net::any_io_executor executor,
                                   const config::upstream_config& upstream);

// The Host header value for an upstream: IPv6 literals bracketed, the port only when it is not
// the scheme's default.
std::string host_header(const config::upstream_endpoint& e);
// host_header(e) appended to `to` (a request head being written), without a string of its own.
void append_host_header(std::string& to, const config::upstream_endpoint& e);

// One HTTP/1.1 connection to an upstream, plain or TLS, behind one interface so that the Beast
// templates for both are instantiated once, in connection.cpp. Every operation takes its deadline;
// a deadline that passes closes the connection. Not thread-safe: owned by one worker at a time.
class connection {
public:
    // `tls_context` non-null: the connection speaks TLS with SNI and host name verification.
    connection(net::any_io_executor executor, std::shared_ptr<net::ssl::context> tls_context);
    ~connection();

    // Resolves, connects and handshakes under the upstream's connect_timeout.
    net::awaitable<failure> open(const config::upstream_config& upstream);
    // The same at addresses already resolved (upstream::pool::resolve keeps them).
    net::awaitable<failure> open(const config::upstream_config& upstream,
                                 const std::vector<net::ip::tcp::endpoint>& endpoints);

    // Sends a request: its head (request line and headers, already serialized) and its body.
    net::awaitable<failure> write(std::string_view head, std::string_view body,
                                  config::duration deadline);

    // Reads up to the end of the response header. `got_bytes` tells whether the upstream sent
    // anything at all (a pooled connection that died before answering can be retried safely).
    net::awaitable<failure> read_header(response_parser& parser, config::duration deadline,
                                        bool& got_bytes);

    // Reads some body bytes into the parser's buffer_body; returns after one upstream read.
    net::awaitable<failure> read_some(response_parser& parser, config::duration deadline);

    // Parses body bytes already buffered (they usually arrive with the header) into the
    // parser's buffer_body, without I/O. Returns false when the buffer held nothing usable and
    // the caller should read_some; `failed` is set when the bytes are malformed.
    bool parse_buffered(response_parser& parser, failure& failed);

    // Raw bytes, for a tunnelled connection after 101 Switching Protocols.
    net::awaitable<std::pair<boost::system::error_code, std::size_t>> read_raw(
        net::mutable_buffer buffer, config::duration deadline);
    net::awaitable<boost::system::error_code> write_raw(net::const_buffer buffer,
                                                        config::duration deadline);

    // Bytes read past the response header (the start of the body, or tunnelled bytes).
    beast::flat_buffer& buffer() { return buffer_; }

    // Closes the socket now; pending operations complete with an error. Safe to call twice.
    void close();

    // Called when the connection goes idle into a pool: no deadline applies there.
    void park() { deadline_->disarm(); }

    // For a pooled connection: true when the upstream has neither closed it nor sent stray bytes.
    // `probe`: ask the socket — the reactor first (with the gateway's Asio patch it knows
    // whether anything arrived since the last read emptied the socket), then, only when it saw
    // something, the socket itself (a system call); otherwise only what is known without one. A
    // connection the upstream closed unnoticed is met by start_exchange's retry (a reused
    // connection that got no byte back), as one closed just after a probe would be.
    bool looks_alive(bool probe);

    std::chrono::steady_clock::time_point idle_since;

    // The upstream's name once open() succeeded ("" before), for metrics.
    std::string_view upstream_name() const { return name_ ? std::string_view(*name_) : ""; }

private:
    net::ip::tcp::socket& tcp();
    // One read from the upstream into buffer_.
    net::awaitable<boost::system::error_code> fill();

    const std::string* name_ = nullptr;
    observability::gauge* open_gauge_ = nullptr;  // counted while open

    std::shared_ptr<net::ssl::context> tls_context_;
    // Read and written directly, parsed with Beast's parser fed from buffer_: Beast's composed
    // read operations and tcp_stream add a layer of operation (and executor copies) per read.
    std::optional<net::ip::tcp::socket> plain_;
    std::optional<beast::ssl_stream<net::ip::tcp::socket>> secure_;
    std::optional<io::deadline> deadline_;  // the streams have no expiry of their own
    beast::flat_buffer buffer_;
};

}  // namespace gateway::upstream
