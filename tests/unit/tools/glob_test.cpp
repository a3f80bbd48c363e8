#include "gateway/tools/glob.hpp"

#include <boost/test/unit_test.hpp>

namespace tools_glob_test {

using gateway::tools::glob;

namespace {
bool match(const std::string& pattern, const std::string& path) {
    std::string error;
    auto g = glob::compile(pattern, error);
    BOOST_TEST_REQUIRE(g.valid(), error);
    return g.matches(path);
}
}  // namespace

BOOST_AUTO_TEST_SUITE(glob_suite)

BOOST_AUTO_TEST_CASE(patterns_without_slash_match_names_at_any_depth) {
    BOOST_TEST(match("*.cpp", "main.cpp"));
    BOOST_TEST(match("*.cpp", "src/deep/main.cpp"));
    BOOST_TEST(!match("*.cpp", "main.cpp.bak"));
    BOOST_TEST(match("test_?.py", "a/test_1.py"));
    BOOST_TEST(!match("test_?.py", "a/test_12.py"));
}

BOOST_AUTO_TEST_CASE(patterns_with_slash_are_anchored) {
    BOOST_TEST(match("src/*.c", "src/a.c"));
    BOOST_TEST(!match("src/*.c", "src/sub/a.c"));
    BOOST_TEST(!match("src/*.c", "lib/src/a.c"));
    BOOST_TEST(match("/build", "build"));
    BOOST_TEST(!match("/build", "a/build"));
}

BOOST_AUTO_TEST_CASE(double_star_spans_folders) {
    BOOST_TEST(match("**/*.ts", "a.ts"));
    BOOST_TEST(match("**/*.ts", "a/b/c.ts"));
    BOOST_TEST(match("src/**/test_*.py", "src/test_a.py"));
    BOOST_TEST(match("src/**/test_*.py", "src/x/y/test_a.py"));
    BOOST_TEST(match("docs/**", "docs/a/b.md"));
    BOOST_TEST(!match("docs/**", "src/docs.md"));
}

BOOST_AUTO_TEST_CASE(classes_braces_and_escapes) {
    BOOST_TEST(match("[abc].txt", "b.txt"));
    BOOST_TEST(!match("[abc].txt", "d.txt"));
    BOOST_TEST(match("[!abc].txt", "d.txt"));
    BOOST_TEST(match("[a-c]x", "bx"));
    BOOST_TEST(match("*.{ts,tsx}", "a/b.tsx"));
    BOOST_TEST(!match("*.{ts,tsx}", "a/b.js"));
    BOOST_TEST(match("a+b(1).txt", "a+b(1).txt"));
    BOOST_TEST(!match("a.b", "axb"));
}

BOOST_AUTO_TEST_CASE(malformed_globs_are_errors) {
    std::string error;
    BOOST_TEST(!glob::compile("[abc", error).valid());
    BOOST_TEST(error.find("unbalanced `[`") != std::string::npos);
    error.clear();
    BOOST_TEST(!glob::compile("{a,b", error).valid());
    BOOST_TEST(error.find("unbalanced `{`") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_glob_test
