#include "gateway/tools/create_file.hpp"

#include "fixture.hpp"

#include "gateway/tools/digest.hpp"

namespace tools_create_file_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(create_file_suite)

BOOST_AUTO_TEST_CASE(creates_with_parents_and_a_diff) {
    temp_workspace w;
    auto r =
        w.run("create_file", R"j({"path":"a/b/new.txt","content":"x\ny\n","description":"d"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(w.read("a/b/new.txt") == "x\ny\n");
    BOOST_TEST(r.data.at("diff").as_string() ==
               "--- /dev/null\n+++ b/a/b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    BOOST_TEST(r.data.at("before_sha256").as_string() == "");  // it did not exist
    BOOST_TEST(r.data.at("after_sha256").as_string() == gateway::tools::sha256_hex("x\ny\n"));
}

BOOST_AUTO_TEST_CASE(refuses_to_overwrite_and_preview_writes_nothing) {
    temp_workspace w;
    w.write("a.txt", "keep");
    auto r = w.run("create_file", R"j({"path":"a.txt","content":"new"})j");
    BOOST_TEST(r.error_code == "FILE_EXISTS");
    BOOST_TEST(w.read("a.txt") == "keep");
    auto preview = w.run("create_file", R"j({"path":"b.txt","content":"new"})j",
                         gateway::tools::mode::preview);
    BOOST_TEST(preview.ok);
    BOOST_TEST(contains(preview.text, "+new"));
    BOOST_TEST(!preview.data.at("applied").as_bool());
    BOOST_TEST(!w.exists("b.txt"));
}

BOOST_AUTO_TEST_CASE(write_size_limit) {
    temp_workspace w;
    w.context.limits.max_write_bytes = 10;
    BOOST_TEST(w.run("create_file", R"j({"path":"big.txt","content":"01234567890"})j").error_code ==
               "FILE_TOO_LARGE");
    BOOST_TEST(!w.exists("big.txt"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_create_file_test
