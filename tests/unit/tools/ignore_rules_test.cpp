#include "gateway/tools/ignore_rules.hpp"

#include <boost/test/unit_test.hpp>

namespace tools_ignore_rules_test {

using gateway::tools::ignore_rules;
using verdict = ignore_rules::verdict;

BOOST_AUTO_TEST_SUITE(ignore_rules_suite)

BOOST_AUTO_TEST_CASE(gitignore_semantics) {
    auto rules = ignore_rules::parse(
        "# comment\n\n*.log\n!keep.log\nbuild/\n/root-only.txt\ndocs/**/*.tmp\n\\#hash\ntrailing   "
        "\n");
    BOOST_TEST((rules.check("a.log", false) == verdict::ignored));
    BOOST_TEST((rules.check("deep/a.log", false) == verdict::ignored));
    BOOST_TEST((rules.check("keep.log", false) == verdict::included));
    BOOST_TEST((rules.check("build", true) == verdict::ignored));
    BOOST_TEST((rules.check("build", false) == verdict::none));  // folders only
    BOOST_TEST((rules.check("root-only.txt", false) == verdict::ignored));
    BOOST_TEST((rules.check("sub/root-only.txt", false) == verdict::none));
    BOOST_TEST((rules.check("docs/x/y/z.tmp", false) == verdict::ignored));
    BOOST_TEST((rules.check("#hash", false) == verdict::ignored));
    BOOST_TEST((rules.check("trailing", false) == verdict::ignored));
    BOOST_TEST((rules.check("main.cpp", false) == verdict::none));
}

BOOST_AUTO_TEST_CASE(last_matching_rule_wins) {
    auto rules = ignore_rules::parse("!a.txt\n*.txt\n");
    BOOST_TEST((rules.check("a.txt", false) == verdict::ignored));
}

BOOST_AUTO_TEST_CASE(malformed_lines_are_skipped) {
    auto rules = ignore_rules::parse("[unclosed\n*.o\n");
    BOOST_TEST((rules.check("x.o", false) == verdict::ignored));
    BOOST_TEST(ignore_rules::parse("# only comments\n").empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_ignore_rules_test
