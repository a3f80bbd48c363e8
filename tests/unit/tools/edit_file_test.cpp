#include "gateway/tools/edit_file.hpp"

#include "fixture.hpp"

namespace tools_edit_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(edit_file_suite)

BOOST_AUTO_TEST_CASE(replaces_the_whole_file_with_a_diff) {
    temp_workspace w;
    w.write("a.txt", "one\ntwo\n");
    auto r =
        w.run("edit_file", R"j({"path":"a.txt","content":"one\nTWO\n","description":"caps"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(w.read("a.txt") == "one\nTWO\n");
    BOOST_TEST(r.data.at("diff").as_string() ==
               "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    BOOST_TEST(contains(r.text, "-two\n+TWO"));
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    w.write("a.txt", "same");
    auto missing = w.run("edit_file", R"j({"path":"b.txt","content":"x"})j");
    BOOST_TEST(missing.error_code == "NOT_FOUND");
    BOOST_TEST(contains(missing.text, "create_file"));
    BOOST_TEST(w.run("edit_file", R"j({"path":"a.txt","content":"same"})j").error_code ==
               "NO_CHANGE");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_edit_file_test
