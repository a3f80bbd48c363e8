#include "gateway/sessions/review.hpp"

#include <boost/test/unit_test.hpp>

namespace sessions_review_test {

using namespace gateway::sessions;

namespace {

// Twenty numbered lines: far enough apart, two changes make two hunks.
std::string lines(int count = 20) {
    std::string out;
    for (int i = 1; i <= count; ++i) out += "line " + std::to_string(i) + "\n";
    return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sessions_review_suite)

BOOST_AUTO_TEST_CASE(hunks_have_ids_that_survive_other_changes) {
    auto base = lines();
    auto ai = replaced(replaced(base, "line 2\n", "line two\n"), "line 18\n", "line eighteen\n");
    auto hunks = review_hunks(base, ai);
    BOOST_TEST_REQUIRE(hunks.size() == 2u);
    BOOST_TEST(hunks[0].id != hunks[1].id);
    BOOST_TEST(hunks[0].hunk.old_start == 0u);
    BOOST_TEST(hunks[0].hunk.text.find("+line two\n") != std::string::npos);

    // The second hunk keeps its id when the first is gone (accepted into the base).
    auto later = review_hunks(replaced(base, "line 2\n", "line two\n"), ai);
    BOOST_TEST_REQUIRE(later.size() == 1u);
    BOOST_TEST(later[0].id == hunks[1].id);
    BOOST_TEST(review_hunks(base, base).empty());
}

BOOST_AUTO_TEST_CASE(applying_some_hunks_changes_exactly_those_lines) {
    auto base = lines();
    auto ai = replaced(replaced(base, "line 2\n", "line two\n"), "line 18\n", "");
    auto hunks = review_hunks(base, ai);
    BOOST_TEST_REQUIRE(hunks.size() == 2u);
    BOOST_TEST(apply_hunks(base, hunks, {hunks[0].id}) == replaced(base, "line 2\n", "line two\n"));
    BOOST_TEST(apply_hunks(base, hunks, {hunks[1].id}) == replaced(base, "line 18\n", ""));
    BOOST_TEST(apply_hunks(base, hunks, {hunks[0].id, hunks[1].id}) == ai);
    BOOST_TEST(apply_hunks(base, hunks, {}) == base);
    // From nothing (a created file) and at the end without a final newline.
    auto created = review_hunks("", "new\nfile");
    BOOST_TEST(apply_hunks("", created, {created[0].id}) == "new\nfile");
}

BOOST_AUTO_TEST_CASE(three_way_merge_keeps_both_sides_or_reports_overlap) {
    auto base = lines();
    auto disk = replaced(base, "line 19\n", "line 19 (edited by hand)\n");
    auto ai = replaced(base, "line 3\n", "line three\n");
    auto merged = merge_three_way(base, disk, ai);
    BOOST_TEST(merged.clean);
    BOOST_TEST(merged.content == replaced(disk, "line 3\n", "line three\n"));

    auto clash = replaced(base, "line 3\n", "line 3 by hand\n");
    auto conflict = merge_three_way(base, clash, ai);
    BOOST_TEST(!conflict.clean);
    BOOST_TEST(conflict.content.find("<<<<<<<") != std::string::npos);
    auto two = replaced(ai, "line 17\n", "line seventeen\n");
    auto hunks = review_hunks(base, two);
    auto hit = overlapping(hunks, base, clash);
    BOOST_TEST_REQUIRE(hit.size() == 1u);
    BOOST_TEST(hit[0]->id == hunks[0].id);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace sessions_review_test
