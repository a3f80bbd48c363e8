#pragma once

// Test harness: the real gateway (gateway::app::server) on 127.0.0.1:0 in this process, and a
// blocking HTTP client on a real socket whose every read is bounded in time.

#include "gateway/app/server.hpp"
#include "gateway/config/config.hpp"
#include "tests/support/fake_upstream.hpp"
#include "tests/support/test_postgres.hpp"

#include <boost/json/object.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace gateway::testing {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// A fresh folder under the system temp folder, removed when the test binary exits.
std::string temporary_folder();
// A gateway configuration with one upstream per URL, two workers and short timeouts, its own
// data_dir (a fresh temporary folder) and the shipped prompts.
config::gateway_config make_config(const std::vector<std::string>& upstream_urls);
config::gateway_config make_config(const fake_upstream& fake);
// The fake as three upstreams: OpenAI-compatible (gpt-*), Anthropic (claude-*, our key
// sk-ant-gateway) and Gemini (gemini-*, our key g-gateway, gemini-fast named gemini-3-flash
// there), the last two under `auth`.
config::gateway_config three_providers(const fake_upstream& fake, config::auth_mode auth);

// The gateway running in-process; stops and joins in the destructor.
class running_gateway {
public:
    explicit running_gateway(config::gateway_config config);
    std::uint16_t port() const { return server_.port(); }
    app::server& server() { return server_; }

private:
    app::server server_;
};

struct response {
    unsigned status = 0;
    std::string reason;
    std::vector<std::pair<std::string, std::string>> headers;  // as received, in order
    std::string body;                                          // de-chunked
    bool complete = false;  // the body ended as its framing said (length or last chunk)
    std::string header(std::string_view name) const;  // "" when absent
    std::size_t count(std::string_view name) const;
};

// A blocking client connection. Reads give up after `timeout` (SO_RCVTIMEO) so a hung gateway
// fails the test instead of hanging it.
class client {
public:
    explicit client(std::uint16_t port, std::chrono::milliseconds timeout = 10s);

    void send(std::string_view bytes);
    // Reads a whole response (status, headers, body).
    response read_response(bool head_request = false);
    // For streamed bodies: the header first, then body pieces as they arrive.
    bool read_header(response& r, bool head_request = false);
    // The next piece of body bytes; nullopt at the end of the body or on error/timeout.
    std::optional<std::string> read_piece(response& r);
    // Exactly n raw bytes (after a 101 the connection carries no HTTP); fewer on error/timeout.
    std::string read_exactly(std::size_t n);
    // True when the server closed the connection (EOF or reset) within the timeout.
    bool closed_by_peer();
    void close();

    response request(std::string_view raw) {
        send(raw);
        return read_response();
    }

private:
    boost::asio::io_context io_;
    boost::asio::ip::tcp::socket socket_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::response_parser<boost::beast::http::buffer_body>> parser_;
};

// An HTTP/1.1 request with Content-Length; `headers` lines end with "\r\n".
std::string make_request(std::string_view method, std::string_view target,
                         std::string_view body = {}, std::string_view headers = {});

std::string join(const std::vector<std::string>& parts);

// A TCP port on 127.0.0.1 with nothing listening (bound, then released).
std::uint16_t unused_port();

// The chat.completion.chunk events of a streamed Chat Completions answer, and the reply they
// assemble to; an `event: error` (a stream that broke) in `error`.
struct chat_stream {
    std::vector<boost::json::object> chunks;
    bool done = false;
    std::string text;
    std::vector<boost::json::object> calls;  // {id, name, arguments, extra_content?}
    std::string finish_reason;
    std::string error;
};

chat_stream read_chat_stream(const std::string& body);

}  // namespace gateway::testing
