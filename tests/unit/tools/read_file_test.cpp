#include "gateway/tools/read_file.hpp"

#include "fixture.hpp"

namespace tools_read_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(read_file_suite)

BOOST_AUTO_TEST_CASE(numbered_lines_with_a_header) {
    temp_workspace w;
    w.write("a.txt", "one\ntwo\nthree\n");
    auto r = w.run("read_file", R"j({"path":"a.txt"})j");
    BOOST_TEST(r.ok);
    BOOST_TEST(r.text == "File `a.txt` (3 lines)\n     1\tone\n     2\ttwo\n     3\tthree\n");
    auto range = w.run("read_file", R"j({"path":"a.txt","start_line":2,"end_line":9})j");
    BOOST_TEST(range.text == "File `a.txt` (3 lines, showing 2-3)\n     2\ttwo\n     3\tthree\n");
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    w.write("a.txt", "one\n");
    w.write("bin", std::string("\0\1\2", 3));
    fs::create_directories(w.root / "dir");
    BOOST_TEST(w.run("read_file", R"j({"path":"nope.txt"})j").error_code == "NOT_FOUND");
    BOOST_TEST(w.run("read_file", R"j({"path":"bin"})j").error_code == "BINARY_FILE");
    auto dir = w.run("read_file", R"j({"path":"dir"})j");
    BOOST_TEST(dir.error_code == "NOT_A_REGULAR_FILE");
    BOOST_TEST(contains(dir.text, "list_files"));
    BOOST_TEST(w.run("read_file", R"j({"path":"a.txt","start_line":5})j").error_code ==
               "INVALID_RANGE");
    BOOST_TEST(w.run("read_file", R"j({"path":"a.txt","start_line":1,"end_line":0})j").error_code ==
               "INVALID_PARAMETERS");
}

BOOST_AUTO_TEST_CASE(large_files_need_a_range_and_output_is_capped) {
    temp_workspace w;
    std::string big;
    for (int i = 0; i < 30000; ++i) big += "line number " + std::to_string(i) + "\n";
    w.write("big.txt", big);
    auto whole = w.run("read_file", R"j({"path":"big.txt"})j");
    BOOST_TEST(whole.error_code == "FILE_TOO_LARGE");
    BOOST_TEST(contains(whole.text, "start_line and end_line"));
    auto part = w.run("read_file", R"j({"path":"big.txt","start_line":100,"end_line":102})j");
    BOOST_TEST(part.ok);
    BOOST_TEST(contains(part.text, "   100\tline number 99\n"));
    auto capped = w.run("read_file", R"j({"path":"big.txt","start_line":1,"end_line":30000})j");
    BOOST_TEST(capped.ok);
    BOOST_TEST(capped.text.size() < w.context.limits.max_result_chars + 200);
    BOOST_TEST(contains(capped.text, "[output truncated:"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_read_file_test
