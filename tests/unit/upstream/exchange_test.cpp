#include "gateway/upstream/exchange.hpp"

#include "gateway/error.hpp"

#include <boost/test/unit_test.hpp>

using namespace gateway::upstream;
namespace config = gateway::config;
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

BOOST_AUTO_TEST_SUITE_END()
