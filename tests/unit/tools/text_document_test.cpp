#include "gateway/tools/text_document.hpp"

#include <boost/test/unit_test.hpp>

namespace tools_text_document_test {

using namespace gateway::tools;

namespace {
bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(text_document_suite)

BOOST_AUTO_TEST_CASE(lines_words_and_numbered_view) {
    BOOST_TEST(text_document("").line_count() == 0u);
    BOOST_TEST(text_document("a\nb").line_count() == 2u);
    BOOST_TEST(text_document("a\nb\n").line_count() == 2u);
    text_document doc("one two\r\nthree\r\n\r\nfour");
    BOOST_TEST(doc.line_count() == 4u);
    BOOST_TEST(doc.line(2) == "three");
    BOOST_TEST(doc.line(3) == "");
    BOOST_TEST(doc.word_count() == 4u);
    BOOST_TEST(doc.eol() == "\r\n");
    BOOST_TEST(doc.numbered(1, 2) == "     1\tone two\n     2\tthree\n");
    BOOST_TEST(doc.line_of(0) == 1u);
    BOOST_TEST(doc.line_of(9) == 2u);
}

BOOST_AUTO_TEST_CASE(replace_unique_exact) {
    text_document doc("alpha\nbeta\ngamma\n");
    auto out = replace_unique(doc, "beta", "BETA");
    BOOST_TEST_REQUIRE(static_cast<bool>(out));
    BOOST_TEST(out.content == "alpha\nBETA\ngamma\n");
    BOOST_TEST(out.first_line == 2u);
    BOOST_TEST(out.note.empty());
}

BOOST_AUTO_TEST_CASE(replace_unique_ambiguous_lists_every_line) {
    text_document doc("x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    auto out = replace_unique(doc, "x = 1", "x = 3");
    BOOST_TEST(out.error_code == "AMBIGUOUS_MATCH");
    BOOST_TEST(has(out.message, "3 times"));
    BOOST_TEST(has(out.message, "lines 1, 3, 5"));
    BOOST_TEST(out.content.empty());
}

BOOST_AUTO_TEST_CASE(replace_unique_no_match_shows_similar_lines) {
    text_document doc("def compute_total(items):\n    return sum(items)\n");
    auto out = replace_unique(doc, "def compute_totals(items):", "x");
    BOOST_TEST(out.error_code == "NO_MATCH");
    BOOST_TEST(has(out.message, "not modified"));
    BOOST_TEST(has(out.message, "     1\tdef compute_total(items):"));
}

BOOST_AUTO_TEST_CASE(replace_unique_no_change) {
    text_document doc("a\n");
    BOOST_TEST(replace_unique(doc, "a", "a").error_code == "NO_CHANGE");
}

BOOST_AUTO_TEST_CASE(tolerant_tier_handles_indent_crlf_and_trailing_spaces) {
    text_document doc("class A:\r\n    def f(self):  \r\n        return 1\r\n");
    // The model dropped the indentation, used LF, and left no trailing spaces.
    auto out = replace_unique(doc, "def f(self):\n    return 1\n", "def f(self):\n    return 2\n");
    BOOST_TEST_REQUIRE(static_cast<bool>(out), out.message);
    BOOST_TEST(out.content == "class A:\r\n    def f(self):\r\n        return 2\r\n");
    BOOST_TEST(has(out.note, "whitespace-tolerant"));
}

BOOST_AUTO_TEST_CASE(tolerant_tier_applies_only_when_unique) {
    text_document doc("  a\n  b\n\n    a\n    b\n");
    auto out = replace_unique(doc, "a\nb", "c");
    BOOST_TEST(out.error_code == "AMBIGUOUS_MATCH");
    BOOST_TEST(has(out.message, "lines 1, 4"));
}

BOOST_AUTO_TEST_CASE(tolerant_tier_with_tabs) {
    text_document doc("fn() {\n\tif (x) {\n\t\ty();\n\t}\n}\n");
    auto out = replace_unique(doc, "    if (x) {\n        y();", "    if (x) {\n        z();");
    BOOST_TEST_REQUIRE(static_cast<bool>(out), out.message);
    BOOST_TEST(out.content == "fn() {\n\tif (x) {\n\t\tz();\n\t}\n}\n");
}

BOOST_AUTO_TEST_CASE(replace_first_only_first) {
    text_document doc("the cat and the cat");
    auto out = replace_first(doc, "cat", "dog");
    BOOST_TEST(out.content == "the dog and the cat");
    auto missing = replace_first(doc, "cow", "dog");
    BOOST_TEST(missing.error_code == "NO_MATCH");
    BOOST_TEST(has(missing.message, "search_document"));
}

BOOST_AUTO_TEST_CASE(edit_lines_operations) {
    text_document doc("1\n2\n3\n");
    BOOST_TEST(edit_lines(doc, line_operation::insert, 2, 0, "x", nullptr).content ==
               "1\nx\n2\n3\n");
    BOOST_TEST(edit_lines(doc, line_operation::insert, 4, 0, "x\n", nullptr).content ==
               "1\n2\n3\nx\n");
    BOOST_TEST(edit_lines(doc, line_operation::remove, 2, 3, "", nullptr).content == "1\n");
    BOOST_TEST(edit_lines(doc, line_operation::replace, 1, 2, "a\nb\nc", nullptr).content ==
               "a\nb\nc\n3\n");
    text_document no_final_newline("1\n2");
    BOOST_TEST(edit_lines(no_final_newline, line_operation::remove, 2, 2, "", nullptr).content ==
               "1");
    BOOST_TEST(edit_lines(no_final_newline, line_operation::insert, 3, 0, "3", nullptr).content ==
               "1\n2\n3\n");
    BOOST_TEST(
        edit_lines(no_final_newline, line_operation::replace, 2, 2, "two\n", nullptr).content ==
        "1\ntwo");
}

BOOST_AUTO_TEST_CASE(edit_lines_range_errors_are_explicit) {
    text_document doc("1\n2\n3\n");
    auto past = edit_lines(doc, line_operation::remove, 5, 0, "", nullptr);
    BOOST_TEST(past.error_code == "INVALID_RANGE");
    BOOST_TEST(has(past.message, "start_line 5 is out of range (the file has 3 lines)"));
    auto backwards = edit_lines(doc, line_operation::replace, 3, 2, "x", nullptr);
    BOOST_TEST(has(backwards.message, "end_line 2 is before start_line 3"));
    auto beyond = edit_lines(doc, line_operation::replace, 2, 9, "x", nullptr);
    BOOST_TEST(has(beyond.message, "end_line 9 is past the end"));
    BOOST_TEST(edit_lines(doc, line_operation::insert, 5, 0, "x", nullptr).error_code ==
               "INVALID_RANGE");
}

BOOST_AUTO_TEST_CASE(edit_lines_expected_guards_stale_numbers) {
    text_document doc("alpha\nbeta\ngamma\n");
    std::string right = "beta\ngamma\n", wrong = "beta\ndelta";
    BOOST_TEST(static_cast<bool>(edit_lines(doc, line_operation::remove, 2, 3, "", &right)));
    auto stale = edit_lines(doc, line_operation::remove, 2, 3, "", &wrong);
    BOOST_TEST(stale.error_code == "STALE_LINES");
    BOOST_TEST(has(stale.message, "     3\tgamma"));
}

BOOST_AUTO_TEST_CASE(append_and_insert_after) {
    BOOST_TEST(append_text(text_document("a"), "b\n").content == "a\nb\n");
    BOOST_TEST(append_text(text_document(""), "b").content == "b");
    BOOST_TEST(insert_after(text_document("a\nb\n"), 0, "top").content == "top\na\nb\n");
    BOOST_TEST(insert_after(text_document("a\nb\n"), 2, "end").content == "a\nb\nend\n");
    BOOST_TEST(insert_after(text_document("a\n"), 3, "x").error_code == "INVALID_RANGE");
}

BOOST_AUTO_TEST_CASE(snippet_is_numbered_around_the_edit) {
    std::string content;
    for (int i = 1; i <= 20; ++i) content += "line " + std::to_string(i) + "\n";
    auto view = snippet(text_document(content), 10, 10);
    BOOST_TEST(view.find("     6\tline 6\n") == 0u);
    BOOST_TEST(has(view, "    14\tline 14\n"));
    BOOST_TEST(!has(view, "line 15"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_text_document_test
