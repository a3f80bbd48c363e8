// The console's header checks: Accept-Encoding and If-None-Match as browsers and proxies send them.
#include "gateway/console/console.hpp"

#include <boost/test/unit_test.hpp>

namespace http_console_headers_test {

using gateway::console::accepts_gzip;
using gateway::console::matches_etag;

BOOST_AUTO_TEST_SUITE(console_headers)

BOOST_AUTO_TEST_CASE(gzip_when_named_or_starred_with_a_positive_weight) {
    BOOST_TEST(accepts_gzip("gzip, deflate, br, zstd"));
    BOOST_TEST(accepts_gzip("br;q=1.0, GZIP;q=0.5"));
    BOOST_TEST(accepts_gzip("*"));
    BOOST_TEST(accepts_gzip("x-gzip"));
    BOOST_TEST(!accepts_gzip(""));
    BOOST_TEST(!accepts_gzip("identity"));
    BOOST_TEST(!accepts_gzip("gzip;q=0"));
    BOOST_TEST(!accepts_gzip("gzip;q=0.000, *"));
    BOOST_TEST(!accepts_gzip("*;q=0"));
    BOOST_TEST(accepts_gzip("deflate, *;q=0.1"));
    BOOST_TEST(!accepts_gzip("gzipped"));
}

BOOST_AUTO_TEST_CASE(etags_match_weakly_in_lists_and_star) {
    BOOST_TEST(matches_etag("\"abc\"", "\"abc\""));
    BOOST_TEST(matches_etag("W/\"abc\"", "\"abc\""));
    BOOST_TEST(matches_etag("\"x\", \"abc\"", "\"abc\""));
    BOOST_TEST(matches_etag("*", "\"abc\""));
    BOOST_TEST(!matches_etag("", "\"abc\""));
    BOOST_TEST(!matches_etag("\"abcd\"", "\"abc\""));
    BOOST_TEST(!matches_etag("abc", "\"abc\""));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_console_headers_test
