#include "gateway/tools/get_document_info.hpp"

#include "document_tools_fixture.hpp"

namespace tools_get_document_info_test {

using tools_test::open_document_chat;

BOOST_AUTO_TEST_SUITE(get_document_info_suite)

BOOST_AUTO_TEST_CASE(counts_and_selection) {
    open_document_chat chat;
    auto r = chat.run("get_document_info", "{}");
    BOOST_TEST(r.text ==
               "Document: \"essay.md\"\nLines: 6\nWords: 10\nCharacters: 50\nSelection: none\n");
    chat.document.selection_start = 9;
    chat.document.selection_end = 18;
    auto selected = chat.run("get_document_info", "{}");
    BOOST_TEST(selected.text.find("Selection: lines 3-3, 9 characters:\nThe quick\n") !=
               std::string::npos);
    BOOST_TEST(chat.run("get_document_info", R"j({"x":1})j").error_code == "INVALID_PARAMETERS");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_get_document_info_test
