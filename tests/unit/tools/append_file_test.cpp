#include "gateway/tools/append_file.hpp"

#include "fixture.hpp"

namespace tools_append_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(append_file_suite)

BOOST_AUTO_TEST_CASE(appends_on_a_new_line_and_creates_missing_files) {
    temp_workspace w;
    w.write("log.txt", "first");
    auto r = w.run("append_file", R"j({"path":"log.txt","content":"second\n"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(w.read("log.txt") == "first\nsecond\n");
    BOOST_TEST(contains(r.text, "it now has 2 lines"));
    BOOST_TEST(w.run("append_file", R"j({"path":"new.txt","content":"x"})j").ok);
    BOOST_TEST(w.read("new.txt") == "x");
    BOOST_TEST(w.run("append_file", R"j({"path":"log.txt","content":""})j").error_code ==
               "INVALID_PARAMETERS");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_append_file_test
