#include "gateway/tools/list_files.hpp"

#include "fixture.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace tools_list_files_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(list_files_suite)

BOOST_AUTO_TEST_CASE(lists_with_types_and_honours_ignores) {
    temp_workspace w;
    w.write("src/main.c", "int main;\n");
    w.write("README.md", "hi\n");
    w.write("debug.log", "x\n");
    w.write("src/gen/out.c", "x\n");
    w.write(".gitignore", "*.log\n");
    w.write("src/.gitignore", "gen/\n");
    w.write("node_modules/pkg/index.js", "x\n");
    w.write(".git/HEAD", "ref\n");
    w.write("build/a.o", "x\n");
    fs::create_symlink("/etc", w.root / "etc-link");
    auto top = w.run("list_files", "{}");
    BOOST_TEST(top.ok);
    BOOST_TEST(contains(top.text, "README.md"));
    BOOST_TEST(contains(top.text, "src/\n"));
    BOOST_TEST(contains(top.text, "link "));
    BOOST_TEST(!contains(top.text, "src/main.c"));  // not recursive
    for (auto hidden : {"debug.log", "node_modules", ".git/", "build"})
        BOOST_TEST(!contains(top.text, hidden), hidden);
    auto all = w.run("list_files", R"j({"recursive":true})j");
    BOOST_TEST(contains(all.text, "src/main.c"));
    BOOST_TEST(!contains(all.text, "src/gen"));
    BOOST_TEST(all.data.at("entries").as_array().size() == 6u);  // with src/.gitignore
    // Modification times are UTC minutes; the data carries them as Unix seconds.
    timespec when[2] = {{1709212020, 0}, {1709212020, 0}};  // 2024-02-29 13:07:00 UTC
    ::utimensat(AT_FDCWD, (w.root / "README.md").c_str(), when, 0);
    auto dated = w.run("list_files", "{}");
    BOOST_TEST(contains(dated.text, "file           3  2024-02-29 13:07  README.md\n"), dated.text);
    auto sub = w.run("list_files", R"j({"path":"src/"})j");
    BOOST_TEST(contains(sub.text, "src/main.c"));
    BOOST_TEST(!contains(sub.text, "gen"));
}

BOOST_AUTO_TEST_CASE(caps_at_200_and_says_how_to_narrow) {
    temp_workspace w;
    for (int i = 0; i < 250; ++i) w.write("f" + std::to_string(1000 + i) + ".txt", "");
    auto r = w.run("list_files", "{}");
    BOOST_TEST(r.data.at("entries").as_array().size() == 200u);
    BOOST_TEST(contains(r.text, "250 entries"));
    BOOST_TEST(contains(r.text, "... and 50 more entries not shown. Narrow"));
    BOOST_TEST(!contains(r.text, "f1249.txt"));
}

BOOST_AUTO_TEST_CASE(errors) {
    temp_workspace w;
    w.write("a.txt", "");
    BOOST_TEST(w.run("list_files", R"j({"path":"missing"})j").error_code == "NOT_FOUND");
    BOOST_TEST(w.run("list_files", R"j({"path":"a.txt"})j").ok);  // a single file lists itself
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_list_files_test
