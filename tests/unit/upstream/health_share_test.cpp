#include "gateway/upstream/health_share.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_health_share_test {

using namespace gateway::upstream;
namespace config = gateway::config;
using namespace std::chrono_literals;

namespace {

std::vector<config::upstream_config> one_upstream() {
    config::upstream_config u;
    u.name = "up0";
    u.base_url = "http://127.0.0.1:9/v1";
    u.api_key = "sk-gateway";
    return {u};
}

// Nothing listens there: the share's own connection fails, and its messages are read offline.
gateway::io::redis_address nowhere() {
    gateway::io::redis_address a;
    a.port = "1";
    return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_health_share)

// A refused key travels with its end, like a cooldown, so that it ends on every replica too.
BOOST_AUTO_TEST_CASE(a_refused_key_is_shared_with_its_end) {
    auto ups = one_upstream();
    health_board board_a({1s, 60s}, {"up0"}), board_b({1s, 60s}, {"up0"});
    health_share a(nowhere(), board_a, ups, "replica-a");
    health_share b(nowhere(), board_b, ups, "replica-b");
    auto now = clock::now();
    health_board::change refused{0, "m", health_board::state::unusable, now + 60s, 0};
    auto told = b.read(a.message(refused));
    BOOST_TEST_REQUIRE(told.has_value());
    BOOST_TEST((told->now == health_board::state::unusable));
    BOOST_TEST((told->until - now > 59s && told->until - now <= 61s));
    board_b.apply(*told);
    BOOST_TEST(!board_b.available(0, "m", now + 30s));
    BOOST_TEST(board_b.available(0, "m", now + 61s));  // then probed, as on the replica that saw it
    // A message without its end is not taken: nothing is out for good.
    auto text = a.message(refused);
    auto at = text.find("\"until\"");
    BOOST_TEST_REQUIRE(at != std::string::npos);
    text.replace(at, 7, "\"later\"");
    BOOST_TEST(!b.read(text).has_value());
    a.stop();
    b.stop();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_health_share_test
