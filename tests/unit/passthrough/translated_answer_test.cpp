#include "gateway/passthrough/translated_answer.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace passthrough_translated_answer_test {

namespace providers = gateway::providers;
using kind = providers::stream_delta::kind;

BOOST_AUTO_TEST_SUITE(passthrough_translated_answer)

// A whole reply written as a stream (an upstream that ignored `stream: true`, a cache hit) says
// what a stream of it would have: its start, its reasoning and text in order, each call started
// and then its arguments whole (numbered from 0), and the end with its reason and usage. Empty
// texts and a provider's opaque blocks say nothing.
BOOST_AUTO_TEST_CASE(a_reply_becomes_the_deltas_its_stream_would_have_carried) {
    providers::reply reply;
    reply.id = "msg_1";
    reply.model = "claude-x";
    reply.why = providers::finish::tool_calls;
    reply.used.known = true;
    reply.used.input = 12;
    reply.used.output = 34;
    auto& parts = reply.content.parts;
    parts.push_back(providers::part::of_reasoning("thinking"));
    parts.push_back(providers::part::of_text(""));
    parts.push_back(providers::part::of_text("Here."));
    providers::part opaque;
    opaque.what = providers::part::kind::opaque;
    parts.push_back(opaque);
    providers::tool_call first{"call_a", "read_file", {{"path", "a.txt"}}, {}};
    providers::tool_call second{"call_b", "search", {{"q", "x"}}, {{"thought_signature", "s"}}};
    parts.push_back(providers::part::of_call(first));
    parts.push_back(providers::part::of_call(second));

    auto deltas = gateway::passthrough::deltas_of(reply);
    BOOST_TEST_REQUIRE(deltas.size() == 8u);
    BOOST_TEST((deltas[0].what == kind::started));
    BOOST_TEST(deltas[0].id == "msg_1");
    BOOST_TEST(deltas[0].name == "claude-x");
    BOOST_TEST((deltas[1].what == kind::reasoning));
    BOOST_TEST(deltas[1].text == "thinking");
    BOOST_TEST((deltas[2].what == kind::text));
    BOOST_TEST(deltas[2].text == "Here.");
    BOOST_TEST((deltas[3].what == kind::call_started));
    BOOST_TEST(deltas[3].index == 0u);
    BOOST_TEST(deltas[3].id == "call_a");
    BOOST_TEST(deltas[3].name == "read_file");
    BOOST_TEST((deltas[4].what == kind::call_arguments));
    BOOST_TEST(deltas[4].index == 0u);
    BOOST_TEST(boost::json::parse(deltas[4].text) == boost::json::parse(R"({"path":"a.txt"})"));
    BOOST_TEST((deltas[5].what == kind::call_started));
    BOOST_TEST(deltas[5].index == 1u);
    BOOST_TEST(deltas[5].provider_meta.contains("thought_signature"));
    BOOST_TEST((deltas[6].what == kind::call_arguments));
    BOOST_TEST(deltas[6].index == 1u);
    BOOST_TEST((deltas[7].what == kind::finished));
    BOOST_TEST((deltas[7].why == providers::finish::tool_calls));
    BOOST_TEST(deltas[7].used.input == 12);
    BOOST_TEST(deltas[7].used.output == 34);
}

// An empty reply still starts and ends.
BOOST_AUTO_TEST_CASE(an_empty_reply_starts_and_finishes) {
    providers::reply reply;
    reply.id = "r";
    auto deltas = gateway::passthrough::deltas_of(reply);
    BOOST_TEST_REQUIRE(deltas.size() == 2u);
    BOOST_TEST((deltas[0].what == kind::started));
    BOOST_TEST((deltas[1].what == kind::finished));
    BOOST_TEST((deltas[1].why == providers::finish::stop));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_translated_answer_test
