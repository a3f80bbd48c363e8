#include "gateway/tools/delete_file.hpp"

#include "fixture.hpp"

#include "gateway/tools/digest.hpp"

namespace tools_delete_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(delete_file_suite)

BOOST_AUTO_TEST_CASE(deletes_with_preview_and_digests) {
    temp_workspace w;
    w.write("a.txt", "x\n");
    auto preview = w.run("delete_file", R"j({"path":"a.txt"})j", gateway::tools::mode::preview);
    BOOST_TEST(preview.ok);
    BOOST_TEST(w.exists("a.txt"));
    auto r = w.run("delete_file", R"j({"path":"a.txt"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(!w.exists("a.txt"));
    BOOST_TEST(r.data.at("diff").as_string() == "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
    // What the run engine keeps to judge an interrupted delete and to undo it.
    BOOST_TEST(r.data.at("before_sha256").as_string() == gateway::tools::sha256_hex("x\n"));
    BOOST_TEST(r.data.at("after_sha256").as_string() == "");
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    fs::create_directories(w.root / "dir");
    w.write("bin", std::string("\0x", 2));
    BOOST_TEST(w.run("delete_file", R"j({"path":"missing"})j").error_code == "NOT_FOUND");
    BOOST_TEST(w.run("delete_file", R"j({"path":"dir"})j").error_code == "NOT_A_REGULAR_FILE");
    BOOST_TEST(w.run("delete_file", R"j({"path":"bin"})j").error_code == "BINARY_FILE");
    BOOST_TEST(w.exists("bin"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_delete_file_test
