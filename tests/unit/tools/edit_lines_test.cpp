#include "gateway/tools/edit_lines.hpp"

#include "fixture.hpp"

namespace tools_edit_lines_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(edit_lines_suite)

BOOST_AUTO_TEST_CASE(operations_return_line_count_and_snippet) {
    temp_workspace w;
    std::string text;
    for (int i = 1; i <= 12; ++i) text += "l" + std::to_string(i) + "\n";
    w.write("f.txt", text);
    auto r = w.run(
        "edit_lines",
        R"j({"path":"f.txt","operation":"replace","start_line":6,"end_line":7,"content":"six\nseven","expected":"l6\nl7"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(r.data.at("line_count").as_uint64() == 12u);
    BOOST_TEST(contains(r.text, "     2\tl2\n"));
    BOOST_TEST(contains(r.text, "     6\tsix\n     7\tseven\n"));
    BOOST_TEST(contains(r.text, "    11\tl11\n"));
    BOOST_TEST(!contains(r.text, "l12"));
    BOOST_TEST(w.run("edit_lines", R"j({"path":"f.txt","operation":"delete","start_line":1})j").ok);
    BOOST_TEST(w.read("f.txt").starts_with("l2\n"));
    BOOST_TEST(w.run("edit_lines",
                     R"j({"path":"f.txt","operation":"insert","start_line":1,"content":"top"})j")
                   .ok);
    BOOST_TEST(w.read("f.txt").starts_with("top\nl2\n"));
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    w.write("f.txt", "a\nb\n");
    auto range = w.run("edit_lines", R"j({"path":"f.txt","operation":"delete","start_line":3})j");
    BOOST_TEST(range.error_code == "INVALID_RANGE");
    BOOST_TEST(contains(range.text, "(the file has 2 lines)"));
    auto stale = w.run(
        "edit_lines",
        R"j({"path":"f.txt","operation":"replace","start_line":1,"content":"x","expected":"z"})j");
    BOOST_TEST(stale.error_code == "STALE_LINES");
    BOOST_TEST(w.read("f.txt") == "a\nb\n");
    BOOST_TEST(w.run("edit_lines", R"j({"path":"f.txt","operation":"insert","start_line":1})j")
                   .error_code == "INVALID_PARAMETERS");
    BOOST_TEST(w.run("edit_lines",
                     R"j({"path":"f.txt","operation":"replace","start_line":1,"content":"a"})j")
                   .error_code == "NO_CHANGE");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_edit_lines_test
