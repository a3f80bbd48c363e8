#include "gateway/upstream/usage_sink.hpp"

#include "gateway/providers/conversation.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_usage_sink_test {

using namespace gateway;

BOOST_AUTO_TEST_SUITE(upstream_usage_sink)

// A provider's usage as the ledger counts it: the cache writes of both lifetimes together, every
// other figure as reported, with the cost and the time the call was made.
BOOST_AUTO_TEST_CASE(a_record_splits_the_usage_as_pricing_charges_it) {
    providers::usage used;
    used.known = true;
    used.input = 1200;
    used.output = 340;
    used.cache_read = 800;
    used.cache_write = 100;
    used.cache_write_1h = 50;
    used.reasoning = 90;
    request_cost cost{0.0125, true, false};
    auto r = upstream::usage_record_of("key-1", "claude-x", "anthropic", used, cost, 1'700'000);
    BOOST_TEST(r.key_id == "key-1");
    BOOST_TEST(r.model == "claude-x");
    BOOST_TEST(r.upstream == "anthropic");
    BOOST_TEST(r.input_tokens == 1200);
    BOOST_TEST(r.output_tokens == 340);
    BOOST_TEST(r.cache_read_tokens == 800);
    BOOST_TEST(r.cache_write_tokens == 150);
    BOOST_TEST(r.reasoning_tokens == 90);
    BOOST_TEST_REQUIRE(r.cost.has_value());
    BOOST_TEST(r.cost->usd == 0.0125);
    BOOST_TEST(r.cost->priced);
    BOOST_TEST(r.now_ms == 1'700'000);
    // Not a cache hit: that is the response cache's to say, with what it saved.
    BOOST_TEST(!r.cache_hit);
    BOOST_TEST(!r.saved.has_value());
}

// A call nothing priced keeps no cost (not $0), and an unknown usage counts nothing.
BOOST_AUTO_TEST_CASE(an_unpriced_call_has_no_cost) {
    auto r = upstream::usage_record_of("", "m", "up", providers::usage{}, std::nullopt, 5);
    BOOST_TEST(!r.cost.has_value());
    BOOST_TEST(r.input_tokens == 0);
    BOOST_TEST(r.output_tokens == 0);
    BOOST_TEST(r.cache_write_tokens == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_usage_sink_test
