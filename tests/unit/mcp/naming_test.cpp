#include "gateway/mcp/naming.hpp"

#include <boost/test/unit_test.hpp>

namespace mcp_naming_test {

using gateway::mcp::exposed_name;

BOOST_AUTO_TEST_SUITE(mcp_naming)

BOOST_AUTO_TEST_CASE(plain_names_are_prefixed_unchanged) {
    BOOST_TEST(exposed_name("everything", "get-sum") == "mcp__everything__get-sum");
    BOOST_TEST(exposed_name("fs", "read_file") == "mcp__fs__read_file");
}

BOOST_AUTO_TEST_CASE(other_characters_are_replaced_and_the_name_gets_a_stable_hash) {
    auto dotted = exposed_name("gh", "repo.list");
    BOOST_TEST(dotted.starts_with("mcp__gh__repo_list_"));
    BOOST_TEST(dotted.size() == std::string("mcp__gh__repo_list_").size() + 8);
    BOOST_TEST(dotted == exposed_name("gh", "repo.list"));  // the same every time
    // Tools that differ only in a replaced character stay apart.
    BOOST_TEST(dotted != exposed_name("gh", "repo/list"));
    BOOST_TEST(exposed_name("gh", "repo_list") == "mcp__gh__repo_list");
    BOOST_TEST(exposed_name("gh", "").starts_with("mcp__gh___"));
}

BOOST_AUTO_TEST_CASE(long_names_fit_64_characters_and_stay_apart) {
    std::string long_name(100, 'x');
    auto a = exposed_name("a-server-with-a-long-name", long_name + "1");
    auto b = exposed_name("a-server-with-a-long-name", long_name + "2");
    BOOST_TEST(a.size() == 64u);
    BOOST_TEST(b.size() == 64u);
    BOOST_TEST(a != b);
    for (char c : a)
        BOOST_TEST((std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'));
    auto unicode = exposed_name("s", "résumé");
    BOOST_TEST(unicode.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") ==
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace mcp_naming_test
