#include "gateway/tools/read_document.hpp"

#include "document_tools_fixture.hpp"

namespace tools_read_document_test {

using tools_test::open_document_chat;

BOOST_AUTO_TEST_SUITE(read_document_suite)

BOOST_AUTO_TEST_CASE(header_and_ranges) {
    open_document_chat chat;
    auto r = chat.run("read_document", "{}");
    BOOST_TEST(r.text.starts_with("Document: \"essay.md\" (6 lines, 10 words)\n     1\t# Title\n"));
    auto part = chat.run("read_document", R"j({"start_line":3,"end_line":3})j");
    BOOST_TEST(part.text ==
               "Document: \"essay.md\" (6 lines, 10 words), showing lines 3-3\n     3\tThe quick "
               "brown fox.\n");
    BOOST_TEST(chat.run("read_document", R"j({"start_line":9})j").error_code == "INVALID_RANGE");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_read_document_test
