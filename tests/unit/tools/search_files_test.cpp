#include "gateway/tools/search_files.hpp"
#include "gateway/tools/search_pattern.hpp"

#include "fixture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace tools_search_files_test {

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

BOOST_AUTO_TEST_SUITE(search_pattern_suite)

using gateway::tools::search_pattern;

bool may_match(const search_pattern& p, std::string_view text) {
    search_pattern::scanner scratch(p);
    return p.may_match(text, scratch);
}

BOOST_AUTO_TEST_CASE(rules_out_texts_without_the_required_literals) {
    std::string error;
    auto p = search_pattern::compile("BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+", true, error);
    BOOST_REQUIRE(p);
    BOOST_TEST(p->prefiltered());
    BOOST_TEST(!may_match(*p, "#define BOOST_BEAST_VERSION 322\nint x;\n"));
    BOOST_TEST(may_match(*p, "x\n#define BOOST_BEAST_VERSION_STRING \"Beast\"\n"));
    BOOST_TEST(may_match(*p, "zzqx_NEVER_"));  // literals are found regardless of case
    // Both sides of an AND must be there.
    auto both = search_pattern::compile("alpha_part.*omega_part", false, error);
    BOOST_TEST(!may_match(*both, "alpha_part only"));
    BOOST_TEST(may_match(*both, "OMEGA_PART then alpha_part"));
}

BOOST_AUTO_TEST_CASE(patterns_without_usable_literals_pass_every_text) {
    std::string error;
    for (auto pattern : {"[0-9]{3}", "ab|c", "\\w+", "Äpfel"}) {
        auto p = search_pattern::compile(pattern, false, error);
        BOOST_REQUIRE(p);
        BOOST_TEST(!p->prefiltered(), pattern);
        BOOST_TEST(may_match(*p, "nothing here"));
    }
    BOOST_TEST(!search_pattern::compile("(a", false, error));
    BOOST_TEST(error.find("missing )") != std::string::npos, error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(search_files_prefiltered)

// Case folding beyond ASCII: RE2 matches `k` with U+212A KELVIN SIGN and `s` with U+017F LONG S;
// the prefilter must not rule those files out, and non-ASCII literals fold as RE2 folds them.
BOOST_AUTO_TEST_CASE(finds_what_re2_folds_outside_ascii) {
    temp_workspace w;
    w.write("kelvin.txt", "temperature in \u212Aelvin\n");
    w.write("long_s.txt", "the cla\u017F\u017F\n");
    w.write("apfel.txt", "\u00e4pfel und birnen\n");
    auto kelvin = w.run("search_files", R"j({"pattern":"kelvin","context_lines":0})j");
    BOOST_TEST(contains(kelvin.text, "Found 1 match in 1 file"), kelvin.text);
    auto long_s = w.run("search_files", R"j({"pattern":"class","context_lines":0})j");
    BOOST_TEST(contains(long_s.text, "Found 1 match in 1 file"), long_s.text);
    auto apfel = w.run("search_files", R"j({"pattern":"\u00c4pfel","context_lines":0})j");
    BOOST_TEST(contains(apfel.text, "apfel.txt:1:"), apfel.text);
    auto exact = w.run("search_files",
                       R"j({"pattern":"\u00c4pfel","case_sensitive":true,"context_lines":0})j");
    BOOST_TEST(contains(exact.text, "No matches"), exact.text);
}

// Workers open each file from its folder's descriptor after the walk has moved on: files of a
// folder that come after one of its subfolders must still be opened from the right folder.
BOOST_AUTO_TEST_CASE(files_around_subfolders_are_all_searched) {
    temp_workspace w;
    for (auto name : {"a/1.txt", "a/b/2.txt", "a/b/c/3.txt", "a/b/4.txt", "a/c.txt", "a/d/5.txt",
                      "a/e.txt", "z.txt"})
        w.write(name, "the marker_word\n");
    auto r = w.run("search_files", R"j({"pattern":"marker_word","context_lines":0})j");
    BOOST_TEST(r.text ==
                   "Found 8 matches in 8 files:\n"
                   "a/1.txt:1: the marker_word\n"
                   "a/b/2.txt:1: the marker_word\n"
                   "a/b/4.txt:1: the marker_word\n"
                   "a/b/c/3.txt:1: the marker_word\n"
                   "a/c.txt:1: the marker_word\n"
                   "a/d/5.txt:1: the marker_word\n"
                   "a/e.txt:1: the marker_word\n"
                   "z.txt:1: the marker_word\n",
               r.text);
}

// Files are searched on several threads; results keep the walk's order and the cap counts
// across files in that order, as a single-threaded search would.
BOOST_AUTO_TEST_CASE(many_files_keep_walk_order_and_the_cap) {
    temp_workspace w;
    std::vector<std::string> expected;
    for (int i = 0; i < 300; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "d%02d/f%03d.txt", i % 7, i);
        std::string content = "filler\n";
        if (i % 3 == 0) content += "the marker_word here\nand marker_word again\n";
        w.write(name, content);
        if (i % 3 == 0) expected.push_back(name);
    }
    std::sort(expected.begin(), expected.end());
    auto r = w.run("search_files", R"j({"pattern":"marker_word","context_lines":0})j");
    BOOST_TEST(contains(r.text, "Found 200 matches in 100 files, showing the first 50:"), r.text);
    const auto& shown = r.data.at("matches").as_array();
    BOOST_REQUIRE(shown.size() == 50u);
    for (std::size_t i = 0; i < shown.size(); ++i) {
        BOOST_TEST(shown[i].at("path").as_string() == expected[i / 2]);
        BOOST_TEST(shown[i].at("line").to_number<std::int64_t>() ==
                   static_cast<std::int64_t>(2 + i % 2));
    }
    // The text shows exactly those lines, in that order.
    std::string lines;
    for (std::size_t i = 0; i < 50; ++i)
        lines += expected[i / 2] +
                 (i % 2 ? ":3: and marker_word again\n" : ":2: the marker_word here\n");
    BOOST_TEST(contains(r.text, lines));
    BOOST_TEST(!contains(r.text, expected[25]));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_search_files_test
