#include "gateway/tools/edit_document.hpp"

#include "document_tools_fixture.hpp"

namespace tools_edit_document_test {

using tools_test::open_document_chat;

BOOST_AUTO_TEST_SUITE(edit_document_suite)

BOOST_AUTO_TEST_CASE(replaces_the_first_occurrence_and_reports_the_edit) {
    open_document_chat chat;
    auto preview = chat.run("edit_document", R"j({"find":"The","replace":"A"})j",
                            gateway::tools::mode::preview);
    BOOST_TEST(preview.ok);
    BOOST_TEST(chat.document.content.find("The quick") != std::string::npos);
    auto r = chat.run("edit_document", R"j({"find":"The","replace":"A"})j");
    BOOST_TEST_REQUIRE(r.ok, r.text);
    BOOST_TEST(chat.document.content == "# Title\n\nA quick brown fox.\nIt jumps.\n\nThe end.\n");
    const auto& edit = r.data.at("edit").as_object();
    BOOST_TEST(edit.at("line").as_uint64() == 3u);
    BOOST_TEST(edit.at("offset").as_uint64() == 9u);
    BOOST_TEST(r.data.at("diff").as_string().find("+A quick brown fox.") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(not_found_points_to_search_document) {
    open_document_chat chat;
    auto r = chat.run("edit_document", R"j({"find":"zebra","replace":"x"})j");
    BOOST_TEST(r.error_code == "NO_MATCH");
    BOOST_TEST(r.text.find("search_document") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_edit_document_test
