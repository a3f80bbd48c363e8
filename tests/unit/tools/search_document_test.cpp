#include "gateway/tools/search_document.hpp"

#include "document_tools_fixture.hpp"

namespace tools_search_document_test {

using tools_test::open_document_chat;

BOOST_AUTO_TEST_SUITE(search_document_suite)

BOOST_AUTO_TEST_CASE(matches_with_one_line_of_context) {
    open_document_chat chat;
    auto r = chat.run("search_document", R"j({"query":"the"})j");
    BOOST_TEST(r.text ==
               "Found 2 matches in \"essay.md\":\n"
               "     2\t\n     3\tThe quick brown fox.\n     4\tIt jumps.\n--\n"
               "     5\t\n     6\tThe end.\n");
    auto regex = chat.run("search_document", R"j({"query":"^it\\s","is_regex":true})j");
    BOOST_TEST(regex.data.at("total").as_uint64() == 1u);
    BOOST_TEST(chat.run("search_document", R"j({"query":"(","is_regex":true})j").error_code ==
               "INVALID_REGEX");
    BOOST_TEST(chat.run("search_document", R"j({"query":"("})j").ok);  // literal by default
}

BOOST_AUTO_TEST_CASE(caps_at_20) {
    open_document_chat chat;
    chat.document.content.clear();
    for (int i = 0; i < 30; ++i) chat.document.content += "word " + std::to_string(i) + "\n";
    auto r = chat.run("search_document", R"j({"query":"word"})j");
    BOOST_TEST(r.text.starts_with("Found 30 matches in \"essay.md\", showing the first 20:"));
    BOOST_TEST(r.data.at("matches").as_array().size() == 20u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_search_document_test
