#include "gateway/upstream/service_call.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>

using namespace gateway;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(upstream_service_call)

// A credential service is an upstream of its own: its URL's address and base path, every step
// bounded by the one timeout.
BOOST_AUTO_TEST_CASE(a_service_is_an_upstream_bounded_by_its_timeout) {
    auto service = upstream::service_upstream("sts", "http://127.0.0.1:8080/base", 1500ms);
    BOOST_TEST_REQUIRE(bool(service), service.error);
    const auto& up = *service.value;
    BOOST_TEST(up.name == "sts");
    BOOST_TEST(!up.endpoint.tls);
    BOOST_TEST(up.endpoint.host == "127.0.0.1");
    BOOST_TEST(up.endpoint.port == 8080);
    BOOST_TEST(up.endpoint.base_path == "/base");
    BOOST_TEST(up.connect_timeout.count() == 1500);
    BOOST_TEST(up.first_byte_timeout.count() == 1500);
    BOOST_TEST(up.idle_timeout.count() == 1500);
}

// A URL that is none is refused, and the error names it.
BOOST_AUTO_TEST_CASE(a_broken_url_is_refused_by_name) {
    auto service = upstream::service_upstream("sts", "ftp://sts.example", 1s);
    BOOST_TEST(!service);
    BOOST_TEST(service.error.starts_with("`ftp://sts.example`: "), service.error);
}

// The head: the target below the base path, Host, the caller's fields, the length, and a
// connection that closes after the one call.
BOOST_AUTO_TEST_CASE(the_request_head_names_the_target_below_the_base_path) {
    auto service = upstream::service_upstream("entra", "http://127.0.0.1:8080/t/oauth2", 1s);
    BOOST_TEST_REQUIRE(bool(service), service.error);
    auto head = upstream::service_request_head("POST", *service.value, "/token",
                                               "Accept: application/json\r\n", 42);
    BOOST_TEST(head ==
               "POST /t/oauth2/token HTTP/1.1\r\n"
               "Host: 127.0.0.1:8080\r\n"
               "User-Agent: contextgate\r\n"
               "Accept: application/json\r\n"
               "Content-Length: 42\r\n"
               "Connection: close\r\n\r\n");
}

// What an error message quotes of an answer: one line of at most 200 bytes.
BOOST_AUTO_TEST_CASE(an_answer_is_quoted_on_one_short_line) {
    BOOST_TEST(upstream::first_bytes("<html>\r\n\tbusy\n</html>\n") == "<html>   busy </html>");
    auto quoted = upstream::first_bytes(std::string(500, 'x'));
    BOOST_TEST(quoted == std::string(200, 'x'));
    BOOST_TEST(upstream::first_bytes("") == "");
}

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// A service on 127.0.0.1 that reads one request head and answers `answer` (nothing when empty:
// it keeps the connection open without a word).
struct one_shot_service {
    net::io_context io;
    tcp::acceptor acceptor{io, {net::ip::make_address("127.0.0.1"), 0}};
    std::thread thread;
    explicit one_shot_service(std::string answer) {
        thread = std::thread([this, answer = std::move(answer)] {
            tcp::socket socket(io);
            boost::system::error_code ec;
            acceptor.accept(socket, ec);
            if (ec) return;
            net::streambuf head;
            net::read_until(socket, head, "\r\n\r\n", ec);
            if (!answer.empty()) net::write(socket, net::buffer(answer), ec);
            // Held open until the caller closes its end.
            char byte;
            socket.read_some(net::buffer(&byte, 1), ec);
        });
    }
    ~one_shot_service() { thread.join(); }
    std::string url() const {
        return "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
    }
};

config::parsed<upstream::service_answer> call(const std::string& url,
                                              upstream::service_call_options options) {
    auto service = upstream::service_upstream("hook", url, 10s);
    BOOST_REQUIRE(bool(service));
    auto head = upstream::service_request_head("POST", *service.value, "/check", "", 2);
    net::io_context io;
    auto done = net::co_spawn(io, upstream::call_service(*service.value, head, "{}", options),
                              net::use_future);
    io.run();
    return done.get();
}

}  // namespace

// The answer is read whole: its status and body.
BOOST_AUTO_TEST_CASE(a_call_reads_the_whole_answer) {
    one_shot_service service("HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nmade");
    auto answered = call(service.url(), {});
    BOOST_TEST_REQUIRE(bool(answered), answered.error);
    BOOST_TEST(answered.value->status == 201u);
    BOOST_TEST(answered.value->body == "made");
}

// A service that never answers is given up at the call's deadline, long before its 10 s steps.
BOOST_AUTO_TEST_CASE(a_call_ends_at_its_deadline) {
    one_shot_service service("");
    auto started = std::chrono::steady_clock::now();
    upstream::service_call_options options;
    options.until = started + 200ms;
    auto answered = call(service.url(), options);
    auto took = std::chrono::steady_clock::now() - started;
    BOOST_TEST(!answered);
    BOOST_TEST(answered.error == "no answer in time");
    BOOST_TEST((took < 5s));
}

// An answer over the caller's limit is refused, not read on.
BOOST_AUTO_TEST_CASE(an_answer_over_the_limit_is_refused) {
    one_shot_service service("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" +
                             std::string(100, 'x'));
    upstream::service_call_options options;
    options.answer_limit = 10;
    auto answered = call(service.url(), options);
    BOOST_TEST(!answered);
}

BOOST_AUTO_TEST_SUITE_END()
