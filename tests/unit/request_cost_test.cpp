#include "gateway/request_cost.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace request_cost_test {

using namespace gateway;

BOOST_AUTO_TEST_SUITE(request_cost_suite)

// A cost in nano-dollars is rounded to the nearest, halves away from zero as std::llround does;
// what no int64 holds, or no number at all, is clamped rather than undefined.
BOOST_AUTO_TEST_CASE(nano_dollars_round_to_the_nearest) {
    BOOST_TEST(nano_usd(0.0) == 0);
    BOOST_TEST(nano_usd(0.000000001) == 1);
    BOOST_TEST(nano_usd(0.0000000014) == 1);
    BOOST_TEST(nano_usd(0.0000000016) == 2);
    BOOST_TEST(nano_usd(-0.0000000014) == -1);
    BOOST_TEST(nano_usd(1.5) == 1'500'000'000);
    BOOST_TEST(nano_usd(12.345678901) == 12'345'678'901);
    // An exact half (0.5e-9 dollars is half a nano-dollar once multiplied back) goes up, and
    // every other value as llround rounds it.
    BOOST_TEST(nano_usd(0.5 / 1e9) == 1);
    BOOST_TEST(nano_usd(-0.5 / 1e9) == -1);
    for (double usd : {0.000123, 0.4567891234, 3.0000000005, 98765.4321, -7.25, 1.0000000015,
                       -2.0000000025, 0.0000000035})
        BOOST_TEST(nano_usd(usd) == std::llround(usd * 1e9), usd);
    BOOST_TEST(nano_usd(1e12) == std::numeric_limits<std::int64_t>::max());
    BOOST_TEST(nano_usd(-1e12) == std::numeric_limits<std::int64_t>::min());
    BOOST_TEST(nano_usd(std::numeric_limits<double>::quiet_NaN()) == 0);
    BOOST_TEST(nano_usd(std::numeric_limits<double>::infinity()) ==
               std::numeric_limits<std::int64_t>::max());
}

// The cost header's text: whole nano-dollars without trailing zeros, "unpriced" for no price;
// a cost past a billion dollars is written in full.
BOOST_AUTO_TEST_CASE(cost_text_writes_nano_dollars_without_trailing_zeros) {
    auto text = [](double usd) {
        request_cost c;
        c.priced = true;
        c.usd = usd;
        return cost_text(c);
    };
    BOOST_TEST(text(0.0) == "0");
    BOOST_TEST(text(0.00015) == "0.00015");
    BOOST_TEST(text(2.5) == "2.5");
    BOOST_TEST(text(1234.000000001) == "1234.000000001");
    BOOST_TEST(text(2e9) == "2000000000");
    BOOST_TEST(cost_text(request_cost{}) == "unpriced");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace request_cost_test
