#include "gateway/tools/find_files.hpp"

#include "fixture.hpp"

namespace tools_find_files_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(find_files_suite)

BOOST_AUTO_TEST_CASE(globs_sorted_with_exclude_and_negation) {
    temp_workspace w;
    for (auto p : {"src/b.ts", "src/a.ts", "src/a.test.ts", "src/ui/c.tsx", "lib/d.js", "e.ts",
                   "ignored/x.ts"})
        w.write(p, "x\n");
    w.write(".gitignore", "ignored/\n");
    auto r = w.run("find_files", R"j({"pattern":"**/*.ts"})j");
    BOOST_TEST(r.text == "Found 4 files:\ne.ts\nsrc/a.test.ts\nsrc/a.ts\nsrc/b.ts\n");
    auto braces =
        w.run("find_files", R"j({"pattern":"*.{ts,tsx}","path":"src","exclude":"*.test.ts"})j");
    BOOST_TEST(braces.text == "Found 3 files:\nsrc/a.ts\nsrc/b.ts\nsrc/ui/c.tsx\n");
    auto negated = w.run("find_files", R"j({"pattern":"!*.ts","exclude":["*.tsx"]})j");
    BOOST_TEST(negated.text == "Found 2 files:\n.gitignore\nlib/d.js\n");
    auto none = w.run("find_files", R"j({"pattern":"*.rs"})j");
    BOOST_TEST(none.ok);
    BOOST_TEST(contains(none.text, "No files match"));
    BOOST_TEST(w.run("find_files", R"j({"pattern":"[ab"})j").error_code == "INVALID_PATTERN");
}

BOOST_AUTO_TEST_CASE(caps_at_100) {
    temp_workspace w;
    for (int i = 0; i < 130; ++i) w.write("d/f" + std::to_string(100 + i) + ".md", "");
    auto r = w.run("find_files", R"j({"pattern":"*.md"})j");
    BOOST_TEST(r.data.at("files").as_array().size() == 100u);
    BOOST_TEST(contains(r.text, "Found 130 files, showing the first 100"));
    BOOST_TEST(contains(r.text, "... 30 more. Narrow"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_find_files_test
