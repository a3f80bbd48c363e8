#include "tests/integration/harness.hpp"

#include "gateway/sse/event_parser.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace gateway::testing {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

std::string temporary_folder() {
    // Removed when the test binary exits; every gateway gets its own store.
    static struct cleanup {
        std::mutex mutex;
        std::vector<std::string> folders;
        ~cleanup() {
            for (const auto& f : folders) std::filesystem::remove_all(f);
        }
    } made;
    std::string pattern =
        (std::filesystem::temp_directory_path() / "contextgate-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    std::lock_guard lock(made.mutex);
    made.folders.push_back(pattern);
    return pattern;
}

config::gateway_config make_config(const std::vector<std::string>& upstream_urls) {
    config::gateway_config c;
    c.source = "test";
    c.server.listen = {"127.0.0.1", 0};
    c.server.workers = 2;
    c.server.drain_time = 2s;
    c.logging.access_log = false;
    c.context.data_dir = temporary_folder();
    // CONTEXTGATE_TEST_STORE=postgres: the Context API keeps its state in a fresh schema of the
    // test cluster (tests/support/postgres.sh), with a short lease so takeovers are quick.
    if (const char* store = std::getenv("CONTEXTGATE_TEST_STORE");
        store && std::string_view(store) == "postgres") {
        c.context.store.type = config::store_type::postgres;
        c.context.store.dsn = fresh_postgres_schema();
        c.context.store.lease_timeout = 3s;
    }
    c.context.prompts_dir = CONTEXTGATE_SOURCE_DIR "/prompts";
    c.context.workflows_dir = CONTEXTGATE_SOURCE_DIR "/workflows";
    for (std::size_t i = 0; i < upstream_urls.size(); ++i) {
        config::upstream_config u;
        u.name = "up" + std::to_string(i);
        u.base_url = upstream_urls[i];
        u.endpoint = *config::parse_base_url(u.base_url).value;
        u.connect_timeout = 2s;
        u.first_byte_timeout = 5s;
        u.idle_timeout = 5s;
        c.upstreams.push_back(u);
    }
    return c;
}

config::gateway_config make_config(const fake_upstream& fake) {
    return make_config({fake.base_url()});
}

running_gateway::running_gateway(config::gateway_config config) : server_(std::move(config)) {
    auto error = server_.start();
    BOOST_TEST_REQUIRE(error.empty(), error);
}

std::string response::header(std::string_view name) const {
    for (const auto& [n, v] : headers)
        if (boost::beast::iequals(n, name)) return v;
    return {};
}

std::size_t response::count(std::string_view name) const {
    std::size_t n = 0;
    for (const auto& h : headers) n += boost::beast::iequals(h.first, name);
    return n;
}

client::client(std::uint16_t port, std::chrono::milliseconds timeout) : socket_(io_) {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void client::send(std::string_view bytes) {
    boost::system::error_code ec;
    net::write(socket_, net::buffer(bytes.data(), bytes.size()), ec);
}

bool client::read_header(response& r, bool head_request) {
    parser_.emplace();
    parser_->body_limit(boost::none);
    if (head_request) parser_->skip(true);
    boost::system::error_code ec;
    http::read_header(socket_, buffer_, *parser_, ec);
    if (ec) return false;
    auto& m = parser_->get();
    r.status = m.result_int();
    r.reason = std::string(m.reason());
    r.headers.clear();
    for (const auto& f : m)
        r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.complete = parser_->is_done();
    return true;
}

std::optional<std::string> client::read_piece(response& r) {
    while (parser_ && !parser_->is_done()) {
        char buffer[65536];
        parser_->get().body().data = buffer;
        parser_->get().body().size = sizeof buffer;
        boost::system::error_code ec;
        http::read_some(socket_, buffer_, *parser_, ec);
        if (ec == http::error::need_buffer) ec = {};
        std::size_t n = sizeof buffer - parser_->get().body().size;
        r.complete = parser_->is_done() && !ec;
        if (n > 0) {
            std::string piece(buffer, n);
            r.body += piece;
            return piece;
        }
        if (ec) return std::nullopt;
    }
    return std::nullopt;
}

response client::read_response(bool head_request) {
    response r;
    if (!read_header(r, head_request)) return r;
    while (read_piece(r)) {
    }
    return r;
}

std::string client::read_exactly(std::size_t n) {
    std::string out;
    auto buffered = std::min(n, buffer_.size());
    out.append(static_cast<const char*>(buffer_.data().data()), buffered);
    buffer_.consume(buffered);
    while (out.size() < n) {
        char chunk[4096];
        boost::system::error_code ec;
        auto got =
            socket_.read_some(net::buffer(chunk, std::min(sizeof chunk, n - out.size())), ec);
        if (ec) break;
        out.append(chunk, got);
    }
    return out;
}

bool client::closed_by_peer() {
    char c;
    boost::system::error_code ec;
    // Bytes the parser left (a chunk's trailing CRLF before EOF) say nothing about the socket.
    buffer_.consume(buffer_.size());
    socket_.read_some(net::buffer(&c, 1), ec);
    if (ec == net::error::eof || ec == net::error::connection_reset) return true;
    BOOST_TEST_MESSAGE("connection still open: " << (ec ? ec.message() : "a byte arrived"));
    return false;
}

void client::close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
}

std::string make_request(std::string_view method, std::string_view target, std::string_view body,
                         std::string_view headers) {
    std::string r;
    r += method;
    r += ' ';
    r += target;
    r += " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    r += headers;
    if (!body.empty() || method == "POST")
        r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    r += "\r\n";
    r += body;
    return r;
}

std::string join(const std::vector<std::string>& parts) {
    std::string all;
    for (const auto& p : parts) all += p;
    return all;
}

std::uint16_t unused_port() {
    net::io_context io;
    tcp::acceptor a(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

chat_stream read_chat_stream(const std::string& body) {
    namespace json = boost::json;
    chat_stream out;
    gateway::sse::event_parser parser;
    std::vector<gateway::sse::event> events;
    parser.feed(body, events);
    for (const auto& e : events) {
        if (e.data == "[DONE]") {
            out.done = true;
            continue;
        }
        if (e.type == "error") {
            out.error = e.data;
            continue;
        }
        auto chunk = json::parse(e.data).as_object();
        out.chunks.push_back(chunk);
        auto& choices = chunk["choices"].as_array();
        if (choices.empty()) continue;
        auto& choice = choices[0].as_object();
        if (choice["finish_reason"].is_string())
            out.finish_reason = std::string(choice["finish_reason"].as_string());
        auto& delta = choice["delta"].as_object();
        if (auto* c = delta.if_contains("content"); c && c->is_string()) out.text += c->as_string();
        if (auto* calls = delta.if_contains("tool_calls"))
            for (auto& cv : calls->as_array()) {
                auto& call = cv.as_object();
                auto index = static_cast<std::size_t>(call["index"].as_int64());
                if (out.calls.size() <= index) out.calls.resize(index + 1);
                auto& mine = out.calls[index];
                if (call.contains("id")) mine["id"] = call["id"];
                if (call.contains("extra_content")) mine["extra_content"] = call["extra_content"];
                auto& fn = call["function"].as_object();
                if (fn.contains("name")) mine["name"] = fn["name"];
                std::string args =
                    mine.contains("arguments") ? std::string(mine["arguments"].as_string()) : "";
                if (auto* a = fn.if_contains("arguments")) args += a->as_string();
                mine["arguments"] = args;
            }
    }
    return out;
}

config::gateway_config three_providers(const fake_upstream& fake, config::auth_mode auth) {
    auto root = "http://127.0.0.1:" + std::to_string(fake.port());
    auto c = make_config({fake.base_url(), root, root + "/v1beta"});
    c.upstreams[0].models = {"gpt-*"};
    c.upstreams[1].provider = config::provider_kind::anthropic;
    c.upstreams[1].models = {"claude-*"};
    c.upstreams[1].api_key = "sk-ant-gateway";
    c.upstreams[1].auth = auth;
    c.upstreams[2].provider = config::provider_kind::gemini;
    c.upstreams[2].models = {"gemini-*"};
    c.upstreams[2].api_key = "g-gateway";
    c.upstreams[2].auth = auth;
    c.upstreams[2].model_map = {{"gemini-fast", "gemini-3-flash"}};
    return c;
}

}  // namespace gateway::testing
