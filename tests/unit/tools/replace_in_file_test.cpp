#include "gateway/tools/replace_in_file.hpp"

#include "fixture.hpp"

namespace tools_replace_in_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(replace_in_file_suite)

BOOST_AUTO_TEST_CASE(literal_regex_preview_and_zero_matches) {
    temp_workspace w;
    w.write("a.txt", "colour colour (x)\n");
    auto literal = w.run("replace_in_file", R"j({"path":"a.txt","find":"(x)","replace":"[y]"})j");
    BOOST_TEST_REQUIRE(literal.ok, literal.text);
    BOOST_TEST(w.read("a.txt") == "colour colour [y]\n");
    BOOST_TEST(literal.data.at("replacements").as_int64() == 1);
    auto preview = w.run(
        "replace_in_file",
        R"j({"path":"a.txt","find":"colou?r","replace":"hue","is_regex":true,"preview_only":true})j");
    BOOST_TEST(preview.ok);
    BOOST_TEST(contains(preview.text, "2 replacements"));
    BOOST_TEST(contains(preview.text, "+hue hue [y]"));
    BOOST_TEST(w.read("a.txt") == "colour colour [y]\n");
    auto groups =
        w.run("replace_in_file",
              R"j({"path":"a.txt","find":"(\\w+) (\\w+)","replace":"\\2 \\1","is_regex":true})j");
    BOOST_TEST(groups.ok);
    BOOST_TEST(w.read("a.txt") == "colour colour [y]\n");  // swapping equal words changes nothing
    auto zero = w.run("replace_in_file", R"j({"path":"a.txt","find":"zzz","replace":"q"})j");
    BOOST_TEST(zero.ok);
    BOOST_TEST(contains(zero.text, "0 replacements"));
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    w.write("a.txt", "a\n");
    BOOST_TEST(
        w.run("replace_in_file", R"j({"path":"a.txt","find":"(","replace":"","is_regex":true})j")
            .error_code == "INVALID_REGEX");
    BOOST_TEST(
        w.run("replace_in_file", R"j({"path":"a.txt","find":"a","replace":"\\3","is_regex":true})j")
            .error_code == "INVALID_REGEX");
    BOOST_TEST(
        w.run("replace_in_file", R"j({"path":"b.txt","find":"a","replace":"b"})j").error_code ==
        "NOT_FOUND");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_replace_in_file_test
