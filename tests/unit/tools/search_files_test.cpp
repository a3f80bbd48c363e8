#include "gateway/tools/search_files.hpp"

#include "fixture.hpp"

#include <chrono>

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(search_files_suite)

BOOST_AUTO_TEST_CASE(matches_with_context_lines) {
    temp_workspace w;
    w.write("a.py", "import os\n\ndef Foo():\n    return 1\n\n\n\nfoo = 2\n");
    auto r = w.run("search_files", R"j({"pattern":"foo"})j");
    BOOST_TEST(r.ok);
    BOOST_TEST(r.text ==
               "Found 2 matches in 1 file:\n"
               "a.py-2- \n"
               "a.py:3: def Foo():\n"
               "a.py-4-     return 1\n"
               "--\n"
               "a.py-7- \n"
               "a.py:8: foo = 2\n");
    auto sensitive =
        w.run("search_files", R"j({"pattern":"^foo","case_sensitive":true,"context_lines":0})j");
    BOOST_TEST(sensitive.text == "Found 1 match in 1 file:\na.py:8: foo = 2\n");
}

BOOST_AUTO_TEST_CASE(filters_ignores_binary_and_oversized_files) {
    temp_workspace w;
    w.write("src/a.cpp", "needle\n");
    w.write("src/a.h", "needle\n");
    w.write("gen/b.cpp", "needle\n");
    w.write(".gitignore", "gen/\n");
    w.write("blob.bin", std::string("needle\0", 7));
    w.write("huge.txt", std::string(3 * 1024 * 1024, 'a') + "needle\n");
    auto r = w.run("search_files", R"j({"pattern":"needle","context_lines":0})j");
    BOOST_TEST(contains(r.text, "Found 2 matches in 2 files"));
    BOOST_TEST(!contains(r.text, "gen/b.cpp"));
    BOOST_TEST(contains(r.text, "Skipped 1 binary and 1 oversized files."));
    auto only_cpp = w.run("search_files", R"j({"pattern":"needle","file_pattern":"*.cpp"})j");
    BOOST_TEST(contains(only_cpp.text, "Found 1 match in 1 file"));
    auto in_path = w.run("search_files", R"j({"pattern":"needle","path":"src/a.h"})j");
    BOOST_TEST(contains(in_path.text, "src/a.h:1: needle"));
}

BOOST_AUTO_TEST_CASE(caps_at_50_and_says_how_to_narrow) {
    temp_workspace w;
    std::string text;
    for (int i = 0; i < 120; ++i) text += "hit " + std::to_string(i) + "\n";
    w.write("many.txt", text);
    auto r = w.run("search_files", R"j({"pattern":"hit","context_lines":0})j");
    BOOST_TEST(contains(r.text, "Found 120 matches in 1 file, showing the first 50:"));
    BOOST_TEST(contains(r.text, "many.txt:50: hit 49\n"));
    BOOST_TEST(!contains(r.text, "hit 50\n"));
    BOOST_TEST(contains(r.text, "Narrow the search"));
    BOOST_TEST(r.data.at("matches").as_array().size() == 50u);
}

BOOST_AUTO_TEST_CASE(invalid_and_catastrophic_patterns) {
    temp_workspace w;
    auto bad = w.run("search_files", R"j({"pattern":"(a"})j");
    BOOST_TEST(bad.error_code == "INVALID_REGEX");
    BOOST_TEST(w.run("search_files", R"j({"pattern":"(\\w)\\1"})j").error_code == "INVALID_REGEX");
    // (a+)+$ takes exponential time in a backtracking engine on this input; RE2 is linear.
    w.write("evil.txt", std::string(100000, 'a') + "!\n");
    auto start = std::chrono::steady_clock::now();
    auto r = w.run("search_files", R"j({"pattern":"(a+)+$","case_sensitive":true})j");
    auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST(r.ok);
    BOOST_TEST(contains(r.text, "No matches"));
    BOOST_TEST((took < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_SUITE_END()
