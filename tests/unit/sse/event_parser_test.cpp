#include "gateway/sse/event_parser.hpp"

#include <boost/test/unit_test.hpp>

namespace sse_event_parser_test {

using gateway::sse::event;
using gateway::sse::event_parser;

namespace {

std::vector<event> parse_all(std::string_view text) {
    event_parser parser;
    std::vector<event> out;
    BOOST_TEST(parser.feed(text, out));
    return out;
}

// The same events for every way of cutting the text in two (and byte by byte).
void check_every_split(std::string_view text, const std::vector<event>& expected) {
    auto same = [&](const std::vector<event>& got) {
        BOOST_TEST_REQUIRE(got.size() == expected.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            BOOST_TEST(got[i].type == expected[i].type);
            BOOST_TEST(got[i].data == expected[i].data);
            BOOST_TEST(got[i].id == expected[i].id);
        }
    };
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        event_parser parser;
        std::vector<event> out;
        parser.feed(text.substr(0, cut), out);
        parser.feed(text.substr(cut), out);
        same(out);
    }
    event_parser bytewise;
    std::vector<event> out;
    for (char c : text) bytewise.feed(std::string_view(&c, 1), out);
    same(out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sse_event_parser)

BOOST_AUTO_TEST_CASE(openai_chat_stream) {
    std::string text =
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
        ": keep-alive\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
        "data: [DONE]\n\n";
    auto events = parse_all(text);
    BOOST_TEST_REQUIRE(events.size() == 3u);
    BOOST_TEST(events[0].type == "message");
    BOOST_TEST(events[1].data == "{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}");
    BOOST_TEST(events[2].data == "[DONE]");
    check_every_split(text, events);
}

BOOST_AUTO_TEST_CASE(fields_line_endings_and_multiline_data) {
    std::string text =
        "\xEF\xBB\xBF"
        "event: response.created\r\nid: 7\r\ndata: a\r\ndata:b\r\n\r\n"
        "event:error\rdata: {\"error\":1}\r\r"
        "data\n\n"                // a field with no colon: empty data line
        "id: 9\nretry: 1500\n\n"  // no data: nothing dispatched, but the id sticks
        "data:  two spaces\n\n"
        "data: unterminated";
    auto events = parse_all(text);
    BOOST_TEST_REQUIRE(events.size() == 4u);
    BOOST_TEST(events[0].type == "response.created");
    BOOST_TEST(events[0].id == "7");
    BOOST_TEST(events[0].data == "a\nb");
    BOOST_TEST(events[1].type == "error");
    BOOST_TEST(events[1].data == "{\"error\":1}");
    BOOST_TEST(events[1].id == "7");
    BOOST_TEST(events[2].data == "");
    BOOST_TEST(events[3].data == " two spaces");
    BOOST_TEST(events[3].id == "9");
    check_every_split(text, events);
}

BOOST_AUTO_TEST_CASE(oversized_event_is_an_error) {
    event_parser parser(64);
    std::vector<event> out;
    BOOST_TEST(parser.feed("data: small\n\n", out));
    BOOST_TEST(!parser.feed("data: " + std::string(100, 'x'), out));
    BOOST_TEST(parser.failed());
    BOOST_TEST(!parser.feed("\n\n", out));
    BOOST_TEST(out.size() == 1u);
    event_parser lines(64);
    std::vector<event> many;
    std::string text;
    for (int i = 0; i < 20; ++i) text += "data: 0123456789\n";
    BOOST_TEST(!lines.feed(text, many));  // many small lines, one huge event
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace sse_event_parser_test
