#include "gateway/json_fields.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

namespace json_fields_test {

namespace json = boost::json;
using gateway::integer_of;

BOOST_AUTO_TEST_SUITE(json_fields)

// Every number from outside goes through integer_of before it becomes an integer: the edge values
// that reached undefined float-to-integer conversions (run under UBSan in CI) read as nothing.
BOOST_AUTO_TEST_CASE(integers_from_outside_are_range_checked_before_they_are_converted) {
    auto read = [](std::string_view text,
                   std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
        auto v = json::parse(text);
        return integer_of(&v, min, max);
    };
    BOOST_TEST(read("7").value() == 7);
    BOOST_TEST(read("2.0").value() == 2);
    BOOST_TEST(read("1e3").value() == 1000);
    BOOST_TEST(read("-1").value() == -1);
    BOOST_TEST(read("9223372036854775807").value() == std::numeric_limits<std::int64_t>::max());
    BOOST_TEST(read("-9223372036854775808").value() == std::numeric_limits<std::int64_t>::min());
    BOOST_TEST(read("-9223372036854775808.0").value() == std::numeric_limits<std::int64_t>::min());
    for (auto bad : {"1.5", "1e300", "-1e300", "9223372036854775808", "18446744073709551615",
                     "9223372036854775808.0", "1e19", "\"5\"", "null", "true", "[]"})
        BOOST_TEST(!read(bad), bad);
    // Boost.JSON reads a number past double's range as infinity (and would write `Infinity`).
    auto inf = json::parse("1e309");
    BOOST_TEST_REQUIRE(inf.is_double());
    BOOST_TEST(std::isinf(inf.get_double()));
    BOOST_TEST(!integer_of(&inf));
    BOOST_TEST(!integer_of(std::numeric_limits<double>::quiet_NaN()));
    BOOST_TEST(!integer_of(-std::numeric_limits<double>::infinity()));
    BOOST_TEST(!integer_of(nullptr));
    // Within the caller's range, or nothing.
    BOOST_TEST(!read("-1", 0, 10));
    BOOST_TEST(!read("11", 0, 10));
    BOOST_TEST(!read("10.5", 0, 10));
    BOOST_TEST(read("10", 0, 10).value() == 10);
    BOOST_TEST(!read("2147483648", 0, 2147483647));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace json_fields_test
