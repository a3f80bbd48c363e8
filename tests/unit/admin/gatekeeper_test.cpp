#include "gateway/admin/gatekeeper.hpp"

#include "gateway/admin/budget_alerts.hpp"

#include <boost/test/unit_test.hpp>

namespace admin_gatekeeper_test {

using namespace gateway::admin;
namespace config = gateway::config;
namespace passthrough = gateway::passthrough;

namespace {

config::price_entry price(double input, double output) {
    config::price_entry p;
    p.model = "m";
    p.rates.input = input;
    p.rates.output = output;
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gatekeeper_estimates)

BOOST_AUTO_TEST_CASE(the_estimate_splits_input_from_the_output_cap) {
    auto none = estimate_of(R"({"model":"m"})");
    BOOST_TEST(none.input == 4u);  // 14 bytes
    BOOST_TEST(!none.output_cap);
    auto capped = estimate_of(R"({"model":"m","max_output_tokens":300})");
    BOOST_TEST(capped.output_cap.value() == 300u);
    // A cap past 32 bits is no provider's: taken as none.
    BOOST_TEST(!estimate_of(R"({"max_tokens":18446744073709551615})").output_cap);
}

// $2 input and $8 output per 1M tokens: 1,000 input tokens ($0.002) and 500 output ($0.004).
BOOST_AUTO_TEST_CASE(a_usd_estimate_is_the_most_expensive_target_in_nano_dollars) {
    auto cheap = price(2.0, 8.0);
    auto dear = price(3.0, 15.0);
    token_estimate e{1000, 500};
    std::vector<passthrough::target_price> one{{"a", "m", &cheap}};
    BOOST_TEST(estimate_usd_nano(e, 4096, one).value() == 6'000'000u);
    std::vector<passthrough::target_price> two{{"a", "m", &cheap}, {"b", "n", &dear}};
    BOOST_TEST(estimate_usd_nano(e, 4096, two).value() == 10'500'000u);  // 0.003 + 0.0075
    // No cap: the default output is reserved.
    token_estimate uncapped{1000, std::nullopt};
    BOOST_TEST(estimate_usd_nano(uncapped, 1000, one).value() == 10'000'000u);
    // A target without a price makes the whole request unpriceable.
    std::vector<passthrough::target_price> unpriced{{"a", "m", &cheap}, {"b", "x", nullptr}};
    BOOST_TEST(!estimate_usd_nano(e, 4096, unpriced));
    // Nothing to reach (a listing, counting tokens) costs nothing.
    BOOST_TEST(estimate_usd_nano(e, 4096, {}).value() == 0u);
}

BOOST_AUTO_TEST_CASE(thresholds_are_crossed_once_by_the_spend_that_reaches_them) {
    std::vector<unsigned> t{50, 80, 100};
    using v = std::vector<unsigned>;
    BOOST_TEST(crossed_thresholds(t, 1000, 0, 499) == v{});
    BOOST_TEST(crossed_thresholds(t, 1000, 499, 500) == v{50});
    BOOST_TEST(crossed_thresholds(t, 1000, 500, 799) == v{});  // 50 was crossed before
    BOOST_TEST((crossed_thresholds(t, 1000, 700, 1200) == v{80, 100}));
    BOOST_TEST(crossed_thresholds(t, 1000, 1000, 2000) == v{});
    // Rounded up: 50 % of 3 nano-dollars is reached at 2, not 1.
    BOOST_TEST(crossed_thresholds(t, 3, 0, 1) == v{});
    BOOST_TEST(crossed_thresholds(t, 3, 1, 2) == v{50});
    // The largest budget, without overflowing.
    std::uint64_t most = 1'000'000'000'000'000;
    BOOST_TEST(crossed_thresholds(t, most, most / 2 - 1, most / 2) == v{50});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_gatekeeper_test
