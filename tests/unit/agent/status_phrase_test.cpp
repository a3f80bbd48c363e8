#include "gateway/agent/status_phrase.hpp"

#include <boost/test/unit_test.hpp>

namespace agent_status_phrase_test {

using gateway::agent::status_phrase;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(status_phrase_suite)

BOOST_AUTO_TEST_CASE(each_tool_reads_as_a_short_phrase) {
    BOOST_TEST(status_phrase("read_file", {{"path", "notes.md"}}) == "Reading notes.md");
    BOOST_TEST(status_phrase("search_files", {{"pattern", "teh"}}) == "Searching for “teh”");
    BOOST_TEST(status_phrase("replace_in_file", {{"path", "README.md"}}) == "Editing README.md");
    BOOST_TEST(status_phrase("doc_edit", json::object{}) == "Editing the document");
    BOOST_TEST(status_phrase("list_files", json::object{}) == "Listing the workspace");
    BOOST_TEST(status_phrase("mcp__x__y", json::object{}) == "Running mcp__x__y");
}

BOOST_AUTO_TEST_CASE(long_values_are_cut_at_a_character_boundary) {
    std::string path(58, 'a');
    path += "ééé";  // two bytes each: the cut falls inside one
    auto phrase = status_phrase("read_file", {{"path", path}});
    BOOST_TEST(phrase.ends_with("…"));
    BOOST_TEST(phrase.size() < path.size() + 12);
    BOOST_TEST(phrase.find("aé…") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_status_phrase_test
