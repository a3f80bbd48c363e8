#include "gateway/http/target.hpp"

#include <boost/test/unit_test.hpp>

namespace http_target_test {

using gateway::http::is_normal_target;
using gateway::http::normalize_target;
using gateway::http::path_segment;

BOOST_AUTO_TEST_SUITE(request_target)

BOOST_AUTO_TEST_CASE(ordinary_targets_pass_unchanged) {
    for (auto t : {"/v1/chat/completions", "/v1/models?limit=10&after=x%20y", "/",
                   "/v1/models/meta-llama%2FLlama-3-8B", "/v1//double", "/v1/files/a.b..c",
                   "/v1/x?q=../../etc", "/v1/.well-known"}) {
        auto n = normalize_target(t);
        BOOST_TEST(static_cast<bool>(n), t << ": " << n.error);
        BOOST_TEST(n.target == t);
    }
}

BOOST_AUTO_TEST_CASE(dot_segments_are_removed_within_the_first_segment) {
    struct row {
        const char* in;
        const char* out;
    };
    for (auto r : {row{"/v1/./chat/completions", "/v1/chat/completions"},
                   row{"/v1/models/../chat/completions", "/v1/chat/completions"},
                   row{"/v1/models/%2e%2e/files", "/v1/files"},
                   row{"/v1/models/%2E./files?x=1", "/v1/files?x=1"}, row{"/v1/a/b/..", "/v1/a/"},
                   row{"/v1/a/.", "/v1/a/"}, row{"/v1/a/%2e", "/v1/a/"}}) {
        auto n = normalize_target(r.in);
        BOOST_TEST(static_cast<bool>(n), r.in << ": " << n.error);
        BOOST_TEST(n.target == r.out, r.in);
    }
}

BOOST_AUTO_TEST_CASE(dot_segments_that_leave_the_first_segment_are_refused) {
    for (auto t : {"/v1/../../admin/keys", "/v1/..", "/v1/../context/chats", "/..",
                   "/v1/%2e%2e/%2e%2e/admin", "/v1/%2E%2e/x", "/v1/.%2e/x", "/x/../v1/models",
                   "/./v1/models", "/%2e/v1/models"}) {
        auto n = normalize_target(t);
        BOOST_TEST(!n, t << " was accepted as " << n.target);
    }
}

BOOST_AUTO_TEST_CASE(dot_segments_behind_encoded_or_backslash_separators_are_refused) {
    for (auto t : {"/v1/..%2f..%2fadmin", "/v1/..%2F..%2Fadmin", "/v1/x%2f..", "/v1/..%5cadmin",
                   "/v1/..\\admin", "/v1/a\\..\\..\\b", "/v1/%2e%2e%2fadmin"}) {
        auto n = normalize_target(t);
        BOOST_TEST(!n, t << " was accepted as " << n.target);
    }
}

BOOST_AUTO_TEST_CASE(bytes_a_target_may_not_hold_are_refused) {
    for (auto t : {"/v1/models#frag", "/v1/mod\xc3\xa9ls", "/v1/a\x01", "/v1/a%zz", "/v1/a%2",
                   "/v1/a%", "/v1/\x7f"}) {
        auto n = normalize_target(t);
        BOOST_TEST(!n, t);
    }
    BOOST_TEST(!normalize_target(""));
    BOOST_TEST(!normalize_target("*"));
    BOOST_TEST(!normalize_target("example.com:443"));
}

BOOST_AUTO_TEST_CASE(absolute_form_becomes_origin_form) {
    struct row {
        const char* in;
        const char* out;
    };
    for (auto r :
         {row{"http://gateway.test/v1/chat/completions", "/v1/chat/completions"},
          row{"HTTPS://gateway.test:8443/v1/models?x=1", "/v1/models?x=1"},
          row{"http://[::1]:8080/v1/models", "/v1/models"}, row{"http://gateway.test", "/"},
          row{"http://gateway.test?x", "/?x"}, row{"http://gateway.test/v1/a/../b", "/v1/b"}}) {
        auto n = normalize_target(r.in);
        BOOST_TEST(static_cast<bool>(n), r.in << ": " << n.error);
        BOOST_TEST(n.target == r.out, r.in);
    }
    for (auto t : {"ftp://gateway.test/v1/models", "http:///v1/models",
                   "http://user:pw@gateway.test/v1/models", "http://gateway.test/v1/../../admin",
                   "http://gateway.test/v1/models#x"}) {
        BOOST_TEST(!normalize_target(t), t);
    }
}

// The session's fast path: a target it recognizes as normal must be one normalize_target
// accepts unchanged; anything with dots, escapes, separators or bad bytes goes the long way.
BOOST_AUTO_TEST_CASE(the_fast_path_recognizes_only_targets_that_stay_unchanged) {
    for (auto t : {"/v1/chat/completions", "/", "/v1//double", "/v1/files/a.b..c",
                   "/v1/x?q=../../etc", "/v1/models?limit=10&after=x", "/v1/x?a=/./b"}) {
        BOOST_TEST(is_normal_target(t), t);
        auto n = normalize_target(t);
        BOOST_TEST(static_cast<bool>(n), t);
        BOOST_TEST(n.target == t);
    }
    for (auto t : {"", "*", "http://h/v1/x", "/v1/./x", "/v1/..", "/v1/.well-known", "/./v1",
                   "/v1/%2e%2e/x", "/v1/a%2fb", "/v1/a\\..\\b", "/v1/x#f", "/v1/a b", "/v1/\x01",
                   "/v1/\xc3\xa9", "/v1/x?q=%zz"})
        BOOST_TEST(!is_normal_target(t), t);
}

// A name the gateway writes into a target it builds stays one segment, whatever it holds.
BOOST_AUTO_TEST_CASE(a_path_segment_can_neither_end_the_line_nor_leave_its_segment) {
    BOOST_TEST(path_segment("gemini-2.5-pro_x~1") == "gemini-2.5-pro_x~1");
    BOOST_TEST(path_segment("m:generateContent HTTP/1.1\r\nHost: x\r\n\r\nGET /files") ==
               "m%3AgenerateContent%20HTTP%2F1.1%0D%0AHost%3A%20x%0D%0A%0D%0AGET%20%2Ffiles");
    BOOST_TEST(path_segment("../../files?key=1#x%2F") == "..%2F..%2Ffiles%3Fkey%3D1%23x%252F");
    BOOST_TEST(path_segment(std::string("a\0b\xff", 4)) == "a%00b%FF");
    // What it builds is a target the gateway itself would accept unchanged.
    auto built = "/models/" + path_segment("x y\r\n") + ":generateContent";
    auto normal = normalize_target(built);
    BOOST_TEST(static_cast<bool>(normal), built);
    BOOST_TEST(normal.target == built);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_target_test
