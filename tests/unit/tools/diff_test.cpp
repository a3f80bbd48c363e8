#include "gateway/tools/diff.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <vector>

namespace tools_diff_test {

using gateway::tools::diff_stats;
using gateway::tools::unified_diff;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        auto end = nl == std::string::npos ? text.size() : nl + 1;
        out.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return out;
}

// Applies a unified diff the way patch(1) would, checking every context and removed line.
std::string patched(const std::string& before, const std::string& diff) {
    auto old_lines = lines_of(before);
    auto diff_lines = lines_of(diff);
    std::string out;
    std::size_t next_old = 0;  // 0-based index of the next unconsumed old line
    for (std::size_t i = 2; i < diff_lines.size(); ++i) {
        const auto& line = diff_lines[i];
        if (line.starts_with("@@")) {
            auto minus = line.find('-');
            auto range = line.substr(minus + 1, line.find(' ', minus) - minus - 1);
            auto comma = range.find(',');
            std::size_t start = std::stoul(range.substr(0, comma));
            std::size_t count =
                comma == std::string::npos ? 1 : std::stoul(range.substr(comma + 1));
            std::size_t begin = count == 0 ? start : start - 1;
            while (next_old < begin) out += old_lines.at(next_old++);
            continue;
        }
        std::string body = line.substr(1);
        bool no_newline =
            i + 1 < diff_lines.size() && diff_lines[i + 1].starts_with("\\ No newline");
        if (no_newline && body.ends_with('\n')) body.pop_back();
        if (line[0] == ' ' || line[0] == '-') {
            BOOST_TEST_REQUIRE(old_lines.at(next_old) == body);
            ++next_old;
        }
        if (line[0] == ' ' || line[0] == '+') out += body;
        if (no_newline) ++i;
    }
    while (next_old < old_lines.size()) out += old_lines[next_old++];
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(diff_suite)

BOOST_AUTO_TEST_CASE(identical_texts_have_no_diff) {
    BOOST_TEST(unified_diff("a.txt", "x\ny\n", "x\ny\n").empty());
}

BOOST_AUTO_TEST_CASE(one_changed_line_with_context) {
    std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    std::string after = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
    diff_stats stats;
    auto diff = unified_diff("n.txt", before, after, true, true, &stats);
    BOOST_TEST(diff ==
               "--- a/n.txt\n+++ b/n.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
    BOOST_TEST(stats.added == 1u);
    BOOST_TEST(stats.removed == 1u);
}

BOOST_AUTO_TEST_CASE(created_and_deleted_files_use_dev_null) {
    auto created = unified_diff("new.txt", "", "a\nb\n", false, true);
    BOOST_TEST(created == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    auto deleted = unified_diff("old.txt", "a\n", "", true, false);
    BOOST_TEST(deleted == "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
}

BOOST_AUTO_TEST_CASE(missing_final_newline_is_marked) {
    auto diff = unified_diff("f", "a\nb", "a\nb\n");
    BOOST_TEST(diff ==
               "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

BOOST_AUTO_TEST_CASE(random_edits_round_trip_through_patch) {
    std::mt19937 random(42);
    for (int round = 0; round < 300; ++round) {
        std::string before, after;
        int n = static_cast<int>(random() % 40);
        for (int i = 0; i < n; ++i) {
            std::string line = "l" + std::to_string(random() % 8) + "\n";
            before += line;
            switch (random() % 4) {
                case 0:
                    break;  // deleted
                case 1:
                    after += "new" + std::to_string(random() % 5) + "\n";
                    break;  // replaced
                default:
                    after += line;  // kept
            }
            if (random() % 6 == 0) after += "ins\n";
        }
        if (random() % 5 == 0 && !after.empty()) after.pop_back();  // no final newline
        auto diff = unified_diff("r", before, after);
        if (before == after) {
            BOOST_TEST(diff.empty());
            continue;
        }
        BOOST_TEST_REQUIRE(patched(before, diff) == after, "round " << round << "\n" << diff);
    }
}

BOOST_AUTO_TEST_CASE(very_different_large_texts_still_round_trip) {
    std::string before, after;
    for (int i = 0; i < 6000; ++i) {
        before += "old " + std::to_string(i) + "\n";
        after += "new " + std::to_string(i) + "\n";
    }
    diff_stats stats;
    auto diff = unified_diff("big", before, after, true, true, &stats);
    BOOST_TEST(stats.removed == 6000u);
    BOOST_TEST(stats.added == 6000u);
    BOOST_TEST(patched(before, diff) == after);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_diff_test
