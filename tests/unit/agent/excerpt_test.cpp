#include "gateway/agent/excerpt.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace agent_excerpt_test {

namespace json = boost::json;
using gateway::agent::cut_long_strings;
using gateway::agent::utf8_prefix;

BOOST_AUTO_TEST_SUITE(excerpt)

BOOST_AUTO_TEST_CASE(long_strings_are_cut_and_named_by_pointer) {
    auto v = json::parse(R"({"tool":"edit","parameters":{"path":"a","content":"0123456789"},
        "preview":"abcdefghijkl","list":["short","0123456789ab"],"a/b~c":"0123456789"})");
    auto cut = cut_long_strings(v, 8);
    std::vector<std::string> expected{"/parameters/content", "/preview", "/list/1", "/a~1b~0c"};
    BOOST_TEST(cut == expected, boost::test_tools::per_element());
    BOOST_TEST(v.at("parameters").at("content").as_string() == "01234567");
    BOOST_TEST(v.at("tool").as_string() == "edit");
    BOOST_TEST(v.at("list").at(0).as_string() == "short");
}

BOOST_AUTO_TEST_CASE(nothing_long_means_nothing_cut) {
    auto v = json::parse(R"({"a":"12345678","b":[1,2,{"c":null}]})");
    auto before = json::serialize(v);
    BOOST_TEST(cut_long_strings(v, 8).empty());
    BOOST_TEST(json::serialize(v) == before);
}

BOOST_AUTO_TEST_CASE(a_cut_never_splits_a_utf8_character) {
    std::string text = "ab\xC3\xA9\xE2\x9C\x93";  // a b é ✓
    BOOST_TEST(utf8_prefix(text, 3) == "ab");
    BOOST_TEST(utf8_prefix(text, 4) == "ab\xC3\xA9");
    BOOST_TEST(utf8_prefix(text, 5) == "ab\xC3\xA9");
    BOOST_TEST(utf8_prefix(text, 6) == "ab\xC3\xA9");
    BOOST_TEST(utf8_prefix(text, 7) == text);
    BOOST_TEST(utf8_prefix(text, 100) == text);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_excerpt_test
