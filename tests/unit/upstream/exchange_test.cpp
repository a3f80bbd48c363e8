#include "gateway/upstream/exchange.hpp"

#include "gateway/error.hpp"
#include "tests/unit/upstream/loopback.hpp"

#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

namespace upstream_exchange_test {

using namespace gateway::upstream;
namespace config = gateway::config;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(upstream_exchange)

BOOST_AUTO_TEST_CASE(a_gateways_own_post_has_its_fields_in_order) {
    config::upstream_config up;
    up.base_url = "http://127.0.0.1:9000/api/v1";
    up.endpoint = *config::parse_base_url(up.base_url).value;
    auto head = json_post_head(up, "/chat/completions", "gpt-4o", true,
                               "Authorization: Bearer k\r\n", "req-1", 42);
    BOOST_TEST(head ==
               "POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n"
               "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
               "Authorization: Bearer k\r\nx-request-id: req-1\r\n"
               "Content-Length: 42\r\n\r\n");
}

BOOST_AUTO_TEST_CASE(a_read_waits_no_longer_than_the_deadline_leaves) {
    auto now = std::chrono::steady_clock::now();
    BOOST_TEST((within(5s, std::nullopt) == config::duration(5s)));
    auto left = within(5s, now + 2s);
    BOOST_TEST((left > config::duration(1900ms) && left <= config::duration(2s)));
    BOOST_TEST((within(1s, now + 1h) == config::duration(1s)));
    // Past the deadline: a millisecond, so that the read ends rather than waits forever.
    BOOST_TEST((within(5s, now - 1s) == config::duration(1)));
}

BOOST_AUTO_TEST_CASE(an_idle_timeout_at_the_deadline_says_so) {
    failure idle{make_error_code(gateway::errc::upstream_idle_timeout), "read timed out"};
    auto now = std::chrono::steady_clock::now();
    BOOST_TEST(past_deadline(idle, now - 1ms).detail.find("deadline") != std::string::npos);
    BOOST_TEST(past_deadline(idle, now + 1h).detail == "read timed out");  // not yet
    BOOST_TEST(past_deadline(idle, std::nullopt).detail == "read timed out");
    failure reset{make_error_code(gateway::errc::upstream_reset), "reset"};
    BOOST_TEST(past_deadline(reset, now - 1ms).detail == "reset");  // another failure
}

namespace {

// An answer's head read from `server_side`'s bytes: what came after it stays in the
// connection's buffer, as it does on the request path.
struct answered {
    gateway::testing::loopback l;
    std::unique_ptr<connection> conn;
    tcp::socket server_side{l.io};
    std::optional<response_parser> parser;

    explicit answered(std::string_view bytes) {
        std::tie(conn, server_side) = l.open();
        net::write(server_side, net::buffer(bytes));
        parser.emplace();
        parser->body_limit(boost::none);
        bool got_bytes = false;
        auto read = net::co_spawn(l.io, conn->read_header(*parser, 5s, got_bytes), net::use_future);
        while (read.wait_for(0ms) != std::future_status::ready) l.io.run_one();
        BOOST_TEST_REQUIRE(!read.get(), "the head was not read");
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_answer_that_came_with_its_head_is_read_whole_without_waiting) {
    answered a("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
    std::string body;
    failure failed;
    BOOST_TEST(read_buffered_body(*a.conn, *a.parser, body, 1024, failed));
    BOOST_TEST(!failed);
    BOOST_TEST(body == "hello world");
    BOOST_TEST(a.parser->is_done());
}

BOOST_AUTO_TEST_CASE(the_rest_of_an_answer_is_left_to_read_body) {
    answered a("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello");
    std::string body;
    failure failed;
    BOOST_TEST(!read_buffered_body(*a.conn, *a.parser, body, 1024, failed));
    BOOST_TEST(!failed);
    BOOST_TEST(body == "hello");
    net::write(a.server_side, net::buffer(std::string_view(" world")));
    auto rest =
        net::co_spawn(a.l.io, read_body(*a.conn, *a.parser, body, 1024, 5s), net::use_future);
    while (rest.wait_for(0ms) != std::future_status::ready) a.l.io.run_one();
    BOOST_TEST(!rest.get());
    BOOST_TEST(body == "hello world");
}

BOOST_AUTO_TEST_CASE(a_buffered_answer_over_the_limit_is_a_bad_response) {
    answered a("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
    std::string body;
    failure failed;
    BOOST_TEST(read_buffered_body(*a.conn, *a.parser, body, 4, failed));
    BOOST_TEST((failed.ec == gateway::errc::upstream_bad_response));
    BOOST_TEST(failed.detail.find("exceeds 4 bytes") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_exchange_test
