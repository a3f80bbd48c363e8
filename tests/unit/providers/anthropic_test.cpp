#include "gateway/providers/anthropic.hpp"

#include "gateway/providers/openai.hpp"
#include "tests/unit/providers/stream_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace providers_anthropic_test {

using namespace gateway::providers;
namespace json = boost::json;

namespace {

request from_openai(std::string_view body) {
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(openai::parse_chat_request(body, r, f), f.param + ": " + f.message);
    return r;
}

json::object wire(const request& r) {
    std::string error;
    auto body = anthropic::adapter().encode(r, error);
    BOOST_TEST_REQUIRE(error.empty());
    return json::parse(body).as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_anthropic)

BOOST_AUTO_TEST_CASE(results_come_first_in_the_next_user_message_all_in_one) {
    auto r = from_openai(R"({"model":"c","messages":[
      {"role":"system","content":"S"},
      {"role":"user","content":"go"},
      {"role":"assistant","content":"reading","tool_calls":[
        {"id":"t1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}},
        {"id":"t2","type":"function","function":{"name":"list","arguments":""}}]},
      {"role":"tool","tool_call_id":"t1","content":"one"},
      {"role":"tool","tool_call_id":"t2","content":"two"},
      {"role":"user","content":"and?"}],
      "tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}},
               {"type":"function","function":{"name":"list"}}]})");
    auto w = wire(r);
    BOOST_TEST(w["system"] == json::value("S"));
    BOOST_TEST(w["max_tokens"] == json::value(anthropic::default_max_tokens));  // required
    auto& messages = w["messages"].as_array();
    BOOST_TEST_REQUIRE(messages.size() == 3u);
    BOOST_TEST(json::serialize(messages[1]) ==
               R"({"role":"assistant","content":[{"type":"text","text":"reading"},)"
               R"({"type":"tool_use","id":"t1","name":"read","input":{"p":1}},)"
               R"({"type":"tool_use","id":"t2","name":"list","input":{}}]})");
    // Both results, then the user's text, merged into one user turn.
    BOOST_TEST(
        json::serialize(messages[2]) ==
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"},)"
        R"({"type":"tool_result","tool_use_id":"t2","content":"two"},{"type":"text","text":"and?"}]})");
    BOOST_TEST(w["tools"].as_array().size() == 2u);
    BOOST_TEST(!w.contains("tool_choice"));
}

BOOST_AUTO_TEST_CASE(tools_are_declared_when_the_history_holds_tool_blocks) {
    request r;
    r.model = "c";
    r.messages.push_back({role::user, {part::of_text("go")}});
    r.messages.push_back({role::assistant, {part::of_call({"t1", "read", {}, {}})}});
    r.messages.push_back({role::tool, {part::of_result({"t1", "read", "boom", true})}});
    auto w = wire(r);
    BOOST_TEST(json::serialize(w["tools"]) ==
               R"([{"name":"read","input_schema":{"type":"object","properties":{}}}])");
    BOOST_TEST(
        json::serialize(w["messages"].as_array()[2]) ==
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"boom","is_error":true}]})");
}

BOOST_AUTO_TEST_CASE(choices_images_and_empty_text) {
    auto r = from_openai(R"({"model":"c","max_tokens":9,"stop":["X"],"parallel_tool_calls":false,
      "tool_choice":{"type":"function","function":{"name":"read"}},
      "messages":[{"role":"user","content":[{"type":"text","text":""},
        {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,QUJD"}},
        {"type":"image_url","image_url":{"url":"https://x/y.png"}}]}],
      "tools":[{"type":"function","function":{"name":"read"}}]})");
    auto w = wire(r);
    BOOST_TEST(w["max_tokens"] == json::value(9));
    BOOST_TEST(json::serialize(w["stop_sequences"]) == R"(["X"])");
    BOOST_TEST(json::serialize(w["tool_choice"]) ==
               R"({"type":"tool","name":"read","disable_parallel_tool_use":true})");
    BOOST_TEST(
        json::serialize(w["messages"].as_array()[0].as_object()["content"]) ==
        R"([{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"QUJD"}},)"
        R"({"type":"image","source":{"type":"url","url":"https://x/y.png"}}])");
}

BOOST_AUTO_TEST_CASE(a_message_reads_back_with_input_objects_and_thinking_kept) {
    reply out;
    std::string error;
    BOOST_TEST_REQUIRE(anthropic::adapter().decode(
        R"({"id":"msg_1","type":"message","role":"assistant","model":"claude","stop_reason":"tool_use",
            "content":[{"type":"thinking","thinking":"hm","signature":"SIG"},{"type":"text","text":"ok"},
                       {"type":"tool_use","id":"toolu_1","name":"read","input":{"p":"a"}}],
            "usage":{"input_tokens":10,"output_tokens":3}})",
        out, error));
    BOOST_TEST(testing::describe(out) ==
               R"(finish=tool_calls text=ok call{toolu_1,read,{"p":"a"},{}} usage=10/3)");
    BOOST_TEST_REQUIRE((out.content.parts[0].what == part::kind::opaque));
    // The thinking block goes back verbatim on the next turn.
    request r;
    r.model = "claude";
    r.messages.push_back({role::user, {part::of_text("go")}});
    r.messages.push_back(out.content);
    r.messages.push_back({role::tool, {part::of_result({"toolu_1", "read", "A", false})}});
    auto w = wire(r);
    BOOST_TEST(json::serialize(w["messages"].as_array()[1].as_object()["content"].as_array()[0]) ==
               R"({"type":"thinking","thinking":"hm","signature":"SIG"})");
}

BOOST_AUTO_TEST_CASE(
    the_stream_assembles_at_every_split_and_a_zero_argument_call_is_an_empty_object) {
    std::string transcript =
        "event: message_start\ndata: "
        "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_s\",\"model\":\"claude\",\"usage\":{"
        "\"input_tokens\":12,\"output_tokens\":1}}}\n\n"
        "event: content_block_start\ndata: "
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
        "\"text\":\"\"}}\n\n"
        "event: ping\ndata: {\"type\":\"ping\"}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"Reading \"}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
        "\"both.\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
        "event: content_block_start\ndata: "
        "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\","
        "\"id\":\"toolu_a\",\"name\":\"read\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
        "\"partial_json\":\"{\\\"p\\\": \"}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
        "\"partial_json\":\"\\\"a\\\"}\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
        "event: content_block_start\ndata: "
        "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\","
        "\"id\":\"toolu_b\",\"name\":\"list\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: "
        "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\","
        "\"partial_json\":\"\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
        "event: message_delta\ndata: "
        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_"
        "tokens\":20}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    auto whole = testing::assemble(anthropic::adapter(), transcript, 0);
    BOOST_TEST_REQUIRE(whole.ok, whole.error);
    BOOST_TEST(
        testing::describe(whole.result) ==
        R"(finish=tool_calls text=Reading both. call{toolu_a,read,{"p":"a"},{}} call{toolu_b,list,{},{}} usage=12/20)");
    for (std::size_t cut = 1; cut < transcript.size(); ++cut) {
        auto split = testing::assemble(anthropic::adapter(), transcript, cut);
        BOOST_TEST_REQUIRE(split.ok, split.error);
        BOOST_TEST_REQUIRE(testing::describe(split.result) == testing::describe(whole.result));
    }
    // Without message_stop the reply is incomplete.
    auto cut_short =
        testing::assemble(anthropic::adapter(), transcript.substr(0, transcript.size() - 60), 0);
    BOOST_TEST(!cut_short.ok);
}

BOOST_AUTO_TEST_CASE(errors_keep_the_providers_message) {
    auto e = anthropic::adapter().decode_error(
        429,
        R"({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}})");
    BOOST_TEST(e.status == 429u);
    BOOST_TEST(e.type == "rate_limit_exceeded");
    BOOST_TEST(e.message.find("per-minute") != std::string::npos);
    auto stream = testing::assemble(anthropic::adapter(),
                                    "event: error\ndata: "
                                    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                                    "\"message\":\"Overloaded\"}}\n\n",
                                    0);
    BOOST_TEST(!stream.ok);
    BOOST_TEST(stream.error == "Overloaded");
    BOOST_TEST(anthropic::adapter().auth_fields("k") ==
               "anthropic-version: 2023-06-01\r\nx-api-key: k\r\n");
}

BOOST_AUTO_TEST_CASE(a_block_index_out_of_order_is_a_broken_stream) {
    for (std::string index : {"-1", "7"}) {
        auto transcript =
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" +
            index + ",\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\"}}\n\n";
        auto r = testing::assemble(anthropic::adapter(), transcript, 0);
        BOOST_TEST(!r.ok, index);
        BOOST_TEST(r.error.find("index") != std::string::npos, r.error);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_anthropic_test
