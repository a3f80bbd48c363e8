#include "gateway/http/request_head.hpp"

#include <boost/test/unit_test.hpp>

namespace http_request_head_test {

namespace http = boost::beast::http;
using gateway::errc;
using gateway::http::check_request_head;

namespace {

http::request<http::string_body> head(std::vector<std::pair<std::string, std::string>> fields,
                                      std::string target = "/v1/chat/completions",
                                      unsigned version = 11) {
    http::request<http::string_body> h;
    h.method(http::verb::post);
    h.target(target);
    h.version(version);
    for (auto& [n, v] : fields) h.insert(n, v);
    return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(request_head_checks)

BOOST_AUTO_TEST_CASE(a_plain_request_passes) {
    auto h = head({{"Host", "gw"}, {"Content-Length", "2"}});
    BOOST_TEST(!check_request_head(h));
    auto chunked = head({{"Host", "gw"}, {"Transfer-Encoding", "chunked"}});
    BOOST_TEST(!check_request_head(chunked));
    auto spelled = head({{"Host", "gw"}, {"Transfer-Encoding", " ChunKed "}});
    BOOST_TEST(!check_request_head(spelled));
}

BOOST_AUTO_TEST_CASE(a_transfer_encoding_not_ending_in_chunked_is_400) {
    for (auto te :
         {"xchunked", "chunked, identity", "gzip", "identity", "chunked;x=1", ",", "chunkedx"}) {
        auto h = head({{"Host", "gw"}, {"Transfer-Encoding", te}});
        auto refused = check_request_head(h);
        BOOST_TEST_REQUIRE(refused.has_value(), te);
        BOOST_TEST((refused->code == errc::bad_request), te);
    }
    // The list spread over two fields counts as one.
    auto split =
        head({{"Host", "gw"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "identity"}});
    BOOST_TEST(check_request_head(split).has_value());
    auto twice = head({{"Host", "gw"}, {"Transfer-Encoding", "chunked, chunked"}});
    BOOST_TEST(check_request_head(twice).has_value());
}

BOOST_AUTO_TEST_CASE(another_coding_before_chunked_is_501) {
    auto h = head({{"Host", "gw"}, {"Transfer-Encoding", "gzip, chunked"}});
    auto refused = check_request_head(h);
    BOOST_TEST_REQUIRE(refused.has_value());
    BOOST_TEST((refused->code == errc::unsupported_transfer_coding));
}

BOOST_AUTO_TEST_CASE(http_1_0_with_transfer_encoding_is_400) {
    auto h = head({{"Transfer-Encoding", "chunked"}}, "/v1/x", 10);
    BOOST_TEST(check_request_head(h).has_value());
}

BOOST_AUTO_TEST_CASE(host_rules) {
    auto none = head({});
    BOOST_TEST(check_request_head(none).has_value());
    auto two = head({{"Host", "a"}, {"Host", "b"}});
    BOOST_TEST(check_request_head(two).has_value());
    auto empty = head({{"Host", ""}});
    BOOST_TEST(check_request_head(empty).has_value());
    auto old = head({}, "/v1/models", 10);
    BOOST_TEST(!check_request_head(old));
    auto old_two = head({{"Host", "a"}, {"Host", "b"}}, "/v1/models", 10);
    BOOST_TEST(check_request_head(old_two).has_value());
}

BOOST_AUTO_TEST_CASE(the_target_is_normalized_in_place) {
    auto h = head({{"Host", "gw"}}, "http://gw/v1/models/../files?x=1");
    BOOST_TEST(!check_request_head(h));
    BOOST_TEST(h.target() == "/v1/files?x=1");
    auto bad = head({{"Host", "gw"}}, "/v1/../../admin");
    auto refused = check_request_head(bad);
    BOOST_TEST_REQUIRE(refused.has_value());
    BOOST_TEST((refused->code == errc::bad_request));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_request_head_test
