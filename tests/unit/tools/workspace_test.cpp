#include "gateway/tools/workspace.hpp"

#include "fixture.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <ctime>

namespace tools_workspace_test {

using namespace tools_test;
using gateway::tools::overwrite;

BOOST_AUTO_TEST_SUITE(workspace_suite)

BOOST_AUTO_TEST_CASE(open_refuses_relative_and_missing_roots) {
    std::string error;
    BOOST_TEST(!gateway::tools::workspace::open("relative/dir", error));
    BOOST_TEST(contains(error, "absolute"));
    BOOST_TEST(!gateway::tools::workspace::open("/nonexistent/contextgate", error));
}

BOOST_AUTO_TEST_CASE(read_detects_binary_and_oversized_files) {
    temp_workspace w;
    w.write("text.txt", "hello\n");
    w.write("blob.bin", std::string("PK\x03\x04\0\0data", 10));
    w.write("big.txt", std::string(1000, 'x'));
    BOOST_TEST(w.files->read("text.txt", 100).text == "hello\n");
    auto blob = w.files->read("blob.bin", 100);
    BOOST_TEST(blob.error_code == "BINARY_FILE");
    BOOST_TEST(blob.text.empty());
    BOOST_TEST(w.files->read("big.txt", 999).error_code == "FILE_TOO_LARGE");
    BOOST_TEST(w.files->read("missing.txt", 100).error_code == "NOT_FOUND");
}

BOOST_AUTO_TEST_CASE(writes_are_atomic_keep_permissions_and_leave_no_temporaries) {
    temp_workspace w;
    w.write("script.sh", "#!/bin/sh\n");
    fs::permissions(w.root / "script.sh", fs::perms(0750));
    auto status = w.files->write("script.sh", "#!/bin/sh\necho hi\n", overwrite::allowed);
    BOOST_TEST_REQUIRE(static_cast<bool>(status), status.message);
    BOOST_TEST(w.read("script.sh") == "#!/bin/sh\necho hi\n");
    auto mode =
        static_cast<unsigned>(fs::status(w.root / "script.sh").permissions() & fs::perms::all);
    BOOST_TEST(mode == 0750u);
    int entries = 0;
    for (auto& e : fs::directory_iterator(w.root)) (void)e, ++entries;
    BOOST_TEST(entries == 1);
}

BOOST_AUTO_TEST_CASE(create_refuses_existing_and_creates_parents) {
    temp_workspace w;
    w.write("a.txt", "a");
    BOOST_TEST(w.files->write("a.txt", "b", overwrite::refused).error_code == "FILE_EXISTS");
    BOOST_TEST(w.read("a.txt") == "a");
    BOOST_TEST(static_cast<bool>(w.files->write("x/y/z.txt", "z", overwrite::refused)));
    BOOST_TEST(w.read("x/y/z.txt") == "z");
}

BOOST_AUTO_TEST_CASE(writes_never_go_through_links_or_into_folders) {
    temp_workspace w;
    w.write("real.txt", "real");
    fs::create_symlink("real.txt", w.root / "alias.txt");
    fs::create_directories(w.root / "folder");
    BOOST_TEST(w.files->write("alias.txt", "x", overwrite::allowed).error_code ==
               "NOT_A_REGULAR_FILE");
    BOOST_TEST(w.files->write("folder", "x", overwrite::allowed).error_code ==
               "NOT_A_REGULAR_FILE");
    BOOST_TEST(w.files->write("folder/", "x", overwrite::allowed).error_code ==
               "NOT_A_REGULAR_FILE");
    BOOST_TEST(w.read("real.txt") == "real");
    BOOST_TEST(fs::is_symlink(w.root / "alias.txt"));
}

namespace {

// Marks `path` as last modified an hour ago: as if an earlier process had left it.
void age(const fs::path& path) {
    struct timespec times[2];
    ::clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= 3600;
    times[1] = times[0];
    ::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

BOOST_AUTO_TEST_CASE(write_temporaries_are_recognised) {
    using gateway::tools::is_write_temporary;
    BOOST_TEST(is_write_temporary(".README.md.contextgate-0123456789abcdef"));
    BOOST_TEST(is_write_temporary(".x.contextgate-0123456789abcdef"));
    BOOST_TEST(!is_write_temporary("README.md.contextgate-0123456789abcdef"));   // no dot
    BOOST_TEST(!is_write_temporary(".README.md.contextgate-0123456789ABCDEF"));  // not ours
    BOOST_TEST(!is_write_temporary(".README.md.contextgate-0123456789abcde"));
    BOOST_TEST(!is_write_temporary(".contextgate-0123456789abcdef"));
    BOOST_TEST(!is_write_temporary(".README.md"));
}

BOOST_AUTO_TEST_CASE(debris_of_an_earlier_process_is_never_listed_and_is_removed) {
    temp_workspace w;
    w.write("README.md", "hi\n");
    w.write(".README.md.contextgate-00000000000000aa", "half a write");
    w.write("src/.app.py.contextgate-00000000000000bb", "half");
    w.write("src/app.py", "x = 1\n");
    w.write("src/.fresh.contextgate-00000000000000cc", "a write of this process, in progress");
    age(w.root / ".README.md.contextgate-00000000000000aa");
    age(w.root / "src/.app.py.contextgate-00000000000000bb");
    for (auto [tool, params] : {std::pair{"list_files", R"({"recursive": true})"},
                                {"find_files", R"({"pattern": "*"})"},
                                {"search_files", R"({"pattern": "half"})"}}) {
        auto listed = w.run(tool, params);
        BOOST_TEST(!contains(listed.text, "contextgate-"), tool << ": " << listed.text);
    }
    BOOST_TEST(w.files->remove_debris() == 2u);
    BOOST_TEST(!w.exists(".README.md.contextgate-00000000000000aa"));
    BOOST_TEST(!w.exists("src/.app.py.contextgate-00000000000000bb"));
    BOOST_TEST(w.exists("src/.fresh.contextgate-00000000000000cc"));  // newer than this process
    BOOST_TEST(w.read("README.md") == "hi\n");
}

BOOST_AUTO_TEST_CASE(a_write_cleans_up_debris_in_its_folder) {
    temp_workspace w;
    w.write("docs/.a.md.contextgate-00000000000000dd", "half");
    age(w.root / "docs/.a.md.contextgate-00000000000000dd");
    BOOST_TEST_REQUIRE(
        static_cast<bool>(w.files->write("docs/b.md", "b", gateway::tools::overwrite::refused)));
    BOOST_TEST(!w.exists("docs/.a.md.contextgate-00000000000000dd"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_workspace_test
