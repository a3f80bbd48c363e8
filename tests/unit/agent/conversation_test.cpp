#include "gateway/agent/conversation.hpp"
#include "gateway/agent/json_protocol.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/test/unit_test.hpp>

namespace agent_conversation_test {

using namespace gateway::agent;
namespace pv = gateway::providers;
namespace json = boost::json;

namespace {

message native_turn() {
    message m{pv::role::assistant, {pv::part::of_text("Let me look.")}};
    m.parts.push_back(pv::part::of_call(
        {"toolu_1", "read_file", {{"path", "a.md"}}, {{"thought_signature", "c2ln"}}}));
    m.parts.push_back(pv::part::of_call({"toolu_2", "list_files", {}, {}}));
    return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conversation_suite)

BOOST_AUTO_TEST_CASE(every_kind_of_part_survives_its_stored_row) {
    conversation c{user_text("read a.md"), native_turn()};
    c.push_back({pv::role::tool, {pv::part::of_result({"toolu_1", "read_file", "# A", false})}});
    c.push_back({pv::role::tool, {pv::part::of_result({"toolu_2", "list_files", "denied", true})}});
    message mixed{pv::role::assistant, {pv::part::of_image("data:image/png;base64,AAAA")}};
    pv::part thinking;
    thinking.what = pv::part::kind::opaque;
    thinking.provider_meta = {{"provider", "anthropic"}, {"block", {{"type", "thinking"}}}};
    mixed.parts.push_back(thinking);
    c.push_back(mixed);
    for (std::size_t i = 0; i < c.size(); ++i) {
        auto row = message_row("run_1", static_cast<std::int64_t>(i), c[i]);
        BOOST_TEST(row.format == 2);
        BOOST_TEST(row.role == pv::role_name(c[i].who));
        auto back = message_of_row(row);
        BOOST_TEST_REQUIRE(back.has_value(), row.content);
        BOOST_TEST(json::serialize(json::value_from(*back)) == row.content);
    }
    auto call = message_of_row(message_row("run_1", 1, c[1])).value();
    BOOST_TEST_REQUIRE(call.calls().size() == 2u);
    BOOST_TEST(call.calls()[0]->provider_meta.at("thought_signature").as_string() == "c2ln");
    BOOST_TEST(call.calls()[0]->arguments.at("path").as_string() == "a.md");
    auto result = message_of_row(message_row("run_1", 3, c[3])).value();
    BOOST_TEST(result.parts[0].result.is_error);
}

BOOST_AUTO_TEST_CASE(rows_of_the_untyped_conversation_read_as_typed_messages) {
    // As the engine stored them before format 2: text for the JSON protocol, JSON for native
    // turns and their results.
    auto user = message_of_row({"run_1", 0, "user", "{\"looks\": \"like json\"}", 1});
    BOOST_TEST_REQUIRE(user.has_value());
    BOOST_TEST((user->who == pv::role::user));
    BOOST_TEST(user->text() == "{\"looks\": \"like json\"}");  // text stays text
    auto turn = message_of_row(
        {"run_1", 1, "assistant_calls",
         R"({"text":"Checking.","calls":[{"id":"c1","name":"read_file","arguments":{"path":"x"},)"
         R"("provider_meta":{"thought_signature":"s"}}]})",
         1});
    BOOST_TEST_REQUIRE(turn.has_value());
    BOOST_TEST(turn->text() == "Checking.");
    BOOST_TEST_REQUIRE(turn->calls().size() == 1u);
    BOOST_TEST(turn->calls()[0]->id == "c1");
    BOOST_TEST(turn->calls()[0]->provider_meta.at("thought_signature").as_string() == "s");
    auto result = message_of_row(
        {"run_1", 2, "tool",
         R"({"call_id":"c1","name":"read_file","content":"no such file","is_error":true})", 1});
    BOOST_TEST_REQUIRE(result.has_value());
    BOOST_TEST((result->who == pv::role::tool));
    BOOST_TEST(result->parts[0].result.call_id == "c1");
    BOOST_TEST(result->parts[0].result.is_error);
    // What cannot be read is an error, not an empty message.
    BOOST_TEST(!message_of_row({"run_1", 3, "assistant_calls", "{not json", 1}));
    BOOST_TEST(!message_of_row({"run_1", 3, "robot", "hello", 1}));
    BOOST_TEST(!message_of_row({"run_1", 3, "user", "hello", 2}));  // format 2 is JSON
    BOOST_TEST(!message_of_row({"run_1", 3, "user", R"({"role":"user","parts":[1]})", 2}));
    BOOST_TEST(
        !message_of_row({"run_1", 3, "user", R"({"role":"user","parts":[{"type":"video"}]})", 2}));
    BOOST_TEST(!message_of_row({"run_1", 3, "user", R"({"role":"user","parts":[]})", 3}));
}

BOOST_AUTO_TEST_CASE(the_json_protocol_says_calls_and_results_as_text) {
    auto call = message{
        pv::role::assistant,
        {pv::part::of_call(protocol_call("call_1", "read_file", {{"path", "a.md"}}, true))}};
    auto said = protocol_message(call);
    BOOST_TEST((said.who == pv::role::assistant));
    auto object = json::parse(said.text());
    BOOST_TEST(object.at("tool").as_string() == "read_file");
    BOOST_TEST(object.at("parameters").at("path").as_string() == "a.md");
    BOOST_TEST(object.at("terminate").as_bool());
    // A native turn: its first call (one call a turn).
    BOOST_TEST(json::parse(protocol_message(native_turn()).text()).at("tool").as_string() ==
               "read_file");
    // Results: a user turn naming the tool; a failure as it says itself.
    message results{pv::role::tool,
                    {pv::part::of_result({"c1", "read_file", "# A", false}),
                     pv::part::of_result({"c2", "grep", "`grep` failed with X: y", true})}};
    auto answered = protocol_message(results);
    BOOST_TEST((answered.who == pv::role::user));
    BOOST_TEST(answered.text() == "Result of `read_file`:\n# A\n\n`grep` failed with X: y");
    // Text stays as it is.
    BOOST_TEST(protocol_message(user_text("hi")).text() == "hi");
}

BOOST_AUTO_TEST_CASE(a_reply_of_native_calls_is_read_as_the_protocols_call) {
    pv::reply r;
    r.content = native_turn();
    BOOST_TEST(protocol_text(r) == "Let me look.");  // text first: the parser judges it
    r.content.parts.erase(r.content.parts.begin());
    auto restated = json::parse(protocol_text(r));
    BOOST_TEST(restated.at("tool").as_string() == "read_file");
    BOOST_TEST(restated.at("parameters").at("path").as_string() == "a.md");
    BOOST_TEST(schema_answer(R"({"answer": "Done."})").value_or("") == "Done.");
    BOOST_TEST(!schema_answer(R"({"answer": "x", "tool": "read_file"})"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_conversation_test
