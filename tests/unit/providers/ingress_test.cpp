// The two new directions' client side: Messages and Responses requests read into the
// conversation model, and every provider's stream written back in the client's event grammar,
// checked by strict validators (tests/support/stream_grammar) and cut at every byte.
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/anthropic.hpp"
#include "gateway/providers/gemini.hpp"
#include "gateway/providers/openai.hpp"

#include "tests/support/fake_providers.hpp"
#include "tests/support/stream_grammar.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

namespace providers_ingress_test {

using namespace gateway::providers;
namespace json = boost::json;
namespace fakes = gateway::testing::fake_providers;
using gateway::testing::check_gemini_stream;
using gateway::testing::check_messages_stream;
using gateway::testing::check_responses_stream;
using gateway::testing::sse_events;

namespace {

request parsed(const ingress& in, std::string_view body) {
    request r;
    parse_failure f;
    BOOST_TEST_REQUIRE(in.parse(body, r, f), f.param + ": " + f.message);
    return r;
}

std::string refused(const ingress& in, std::string_view body) {
    request r;
    parse_failure f;
    BOOST_TEST(!in.parse(body, r, f));
    return f.param;
}

// The upstream's transcript through its adapter and the client's writer, fed in the pieces
// `cuts` marks (positions); a broken stream ends with the writer's failure.
std::string written(const adapter& a, std::string_view transcript, const ingress& in,
                    const request& asked, const std::vector<std::size_t>& cuts = {},
                    std::string_view target = "/v1beta/models/m:streamGenerateContent?alt=sse") {
    stream_reader reader(a, 1 << 20);
    auto writer = in.writer({"msg_test", "client-model", 1700000000, target}, asked);
    std::string out, error;
    std::vector<stream_delta> deltas;
    std::size_t from = 0;
    auto pieces = cuts;
    pieces.push_back(transcript.size());
    for (auto to : pieces) {
        deltas.clear();
        bool ok = reader.feed(transcript.substr(from, to - from), deltas, error);
        for (const auto& d : deltas) writer->frames(d, out);
        if (!ok) {
            provider_error e;
            e.message = error;
            writer->failed(e, out);
            return out;
        }
        from = to;
    }
    deltas.clear();
    bool ok = reader.finish(deltas, error);
    for (const auto& d : deltas) writer->frames(d, out);
    if (!ok) {
        provider_error e;
        e.message = error;
        writer->failed(e, out);
    }
    return out;
}

// Every split into two pieces, and one byte at a time, give the same events.
void same_at_every_cut(const adapter& a, const std::string& transcript, const ingress& in,
                       const request& asked) {
    auto whole = written(a, transcript, in, asked);
    for (std::size_t k = 1; k < transcript.size(); ++k) {
        auto cut = written(a, transcript, in, asked, {k});
        BOOST_TEST_REQUIRE(cut == whole, "cut at " << k);
    }
    std::vector<std::size_t> bytes;
    for (std::size_t k = 1; k < transcript.size(); ++k) bytes.push_back(k);
    BOOST_TEST(written(a, transcript, in, asked, bytes) == whole);
}

std::string chunk(std::string_view delta, std::string_view finish = "") {
    std::string f = finish.empty() ? "null" : "\"" + std::string(finish) + "\"";
    return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
           "[{\"index\":0,\"delta\":" +
           std::string(delta) + ",\"finish_reason\":" + f + "}]}\n\n";
}
const std::string usage_chunk =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],"
    "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,\"total_tokens\":17}}\n\n";
const std::string done = "data: [DONE]\n\n";

std::string call_start(int index, std::string_view id, std::string_view name) {
    return chunk(R"({"tool_calls":[{"index":)" + std::to_string(index) + R"(,"id":")" +
                 std::string(id) + R"(","type":"function","function":{"name":")" +
                 std::string(name) + R"(","arguments":""}}]})");
}
std::string call_args(int index, std::string_view json_text) {
    return chunk(R"({"tool_calls":[{"index":)" + std::to_string(index) +
                 R"(,"function":{"arguments":)" + json::serialize(json::string(json_text)) +
                 "}}]}");
}

// The golden upstream streams of an OpenAI-compatible server.
struct golden {
    std::string name;
    std::string transcript;
    std::size_t calls;
    bool complete;
};
std::vector<golden> openai_streams() {
    auto role = chunk(R"({"role":"assistant","content":""})");
    return {
        {"text",
         role + chunk(R"({"content":"Hel"})") + chunk(R"({"content":"lo."})") +
             chunk("{}", "stop") + usage_chunk + done,
         0, true},
        {"one call",
         role + call_start(0, "call_a", "read") + call_args(0, R"({"pa)") +
             call_args(0, R"(th":"a.txt"})") + chunk("{}", "tool_calls") + done,
         1, true},
        {"parallel calls",
         role + call_start(0, "call_a", "read") + call_args(0, R"({"path":"a"})") +
             call_start(1, "call_b", "read") + call_args(1, R"({"path":"b"})") +
             chunk("{}", "tool_calls") + done,
         2, true},
        {"text then call",
         role + chunk(R"({"content":"Reading it."})") + call_start(0, "call_a", "read") +
             call_args(0, R"({"path":"a"})") + chunk("{}", "tool_calls") + done,
         1, true},
        // Some servers say "stop" for a turn that ends in calls.
        {"a call reported as stop",
         role + call_start(0, "call_a", "list") + chunk("{}", "stop") + done, 1, true},
        {"reasoning",
         role + chunk(R"({"reasoning_content":"Think"})") +
             chunk(R"({"reasoning_content":"ing."})") + chunk(R"({"content":"Yes."})") +
             chunk("{}", "stop") + done,
         0, true},
        {"cut after output", role + chunk(R"({"content":"Half an ans"})"), 0, false},
    };
}

request asked_messages() {
    return parsed(messages(), R"({"model":"m","max_tokens":64,"stream":true,
        "messages":[{"role":"user","content":"hi"}]})");
}
request asked_responses() {
    return parsed(responses(), R"({"model":"m","stream":true,"input":"hi",
        "tools":[{"type":"function","name":"read","parameters":{"type":"object"}},
                 {"type":"function","name":"list","parameters":{"type":"object"}},
                 {"type":"custom","name":"apply_patch","description":"Patch files."}]})");
}

json::object data_of(const std::pair<std::string, std::string>& e) {
    return json::parse(e.second).as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ingress_messages)

BOOST_AUTO_TEST_CASE(a_claude_code_request_reads_into_the_conversation) {
    auto r = parsed(messages(), R"({
      "model": "gemini-2.5-pro", "max_tokens": 1000, "stream": true, "temperature": 0.2,
      "stop_sequences": ["END"], "metadata": {"user_id": "u1"},
      "thinking": {"type": "enabled", "budget_tokens": 2048},
      "system": [{"type": "text", "text": "You are Claude Code."},
                 {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
      "tools": [{"name": "Read", "description": "Reads a file.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                 "cache_control": {"type": "ephemeral"}}],
      "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
      "messages": [
        {"role": "user", "content": "Read a and b."},
        {"role": "assistant", "content": [
          {"type": "thinking", "thinking": "hmm", "signature": "abc"},
          {"type": "text", "text": "Reading."},
          {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a"}},
          {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "b"}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
          {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
           "content": [{"type": "text", "text": "no such file"},
                       {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
          {"type": "text", "text": "Go on."}]}]})");
    BOOST_TEST(r.system == "You are Claude Code.\n\nBe brief.");
    BOOST_TEST(r.max_tokens.value() == 1000);
    BOOST_TEST(r.stop.at(0) == "END");
    BOOST_TEST(r.reasoning_budget.value() == 2048);
    BOOST_TEST(r.stream);
    BOOST_TEST(static_cast<int>(r.choice) == static_cast<int>(tool_choice::required));
    BOOST_TEST(r.parallel_tool_calls.value() == false);
    BOOST_TEST_REQUIRE(r.tools.size() == 1u);
    BOOST_TEST(r.tools[0].name == "Read");
    // user, assistant (thinking left out), a tool message per result in call order, then the
    // user's text with the image the second result carried.
    BOOST_TEST_REQUIRE(r.messages.size() == 5u);
    BOOST_TEST(r.messages[1].parts.size() == 3u);
    BOOST_TEST(r.messages[1].text() == "Reading.");
    BOOST_TEST(r.messages[2].parts[0].result.call_id == "toolu_1");
    BOOST_TEST(r.messages[2].parts[0].result.name == "Read");
    BOOST_TEST(r.messages[3].parts[0].result.call_id == "toolu_2");
    BOOST_TEST(r.messages[3].parts[0].result.is_error);
    BOOST_TEST(r.messages[3].parts[0].result.content == "no such file");
    BOOST_TEST(r.messages[4].parts.size() == 2u);
    BOOST_TEST(r.messages[4].parts[0].text == "data:image/png;base64,AAAA");
    BOOST_TEST(r.messages[4].parts[1].text == "Go on.");

    // On an OpenAI-compatible server: the results as tool messages, in order.
    std::string why;
    auto body = json::parse(openai::adapter().encode(r, why)).as_object();
    const auto& sent = body.at("messages").as_array();
    BOOST_TEST(sent.at(3).at("role") == "tool");
    BOOST_TEST(sent.at(3).at("tool_call_id") == "toolu_1");
    BOOST_TEST(sent.at(4).at("tool_call_id") == "toolu_2");
    BOOST_TEST(body.at("tool_choice") == "required");
    BOOST_TEST(body.at("parallel_tool_calls") == false);
    BOOST_TEST(!body.contains("reasoning_effort"));  // dropped on OpenAI-compatible servers
    // On Gemini: the budget as a thinking budget, thoughts shown.
    auto gemini_body = json::parse(gemini::adapter().encode(r, why)).as_object();
    BOOST_TEST(gemini_body.at("generationConfig").at("thinkingConfig").at("thinkingBudget") ==
               2048);
}

BOOST_AUTO_TEST_CASE(what_would_change_the_answer_is_refused_by_name) {
    BOOST_TEST(refused(messages(), R"({"model":"m","max_tokens":9,"top_k":5,
        "messages":[{"role":"user","content":"hi"}]})") == "top_k");
    BOOST_TEST(refused(messages(), R"({"model":"m","max_tokens":9,
        "tools":[{"type":"web_search_20250305","name":"web_search"}],
        "messages":[{"role":"user","content":"hi"}]})") == "tools[0].type");
    BOOST_TEST(refused(messages(), R"({"model":"m","max_tokens":9,
        "messages":[{"role":"user","content":[{"type":"document","source":{}}]}]})") ==
               "messages[0].content[0].type");
    BOOST_TEST(refused(messages(), R"({"model":"m","max_tokens":9,
        "messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"?"}]}]})") ==
               "messages[0].content[0].tool_use_id");
    BOOST_TEST(
        refused(messages(), R"({"max_tokens":9,"messages":[{"role":"user","content":"hi"}]})") ==
        "model");
    BOOST_TEST(refused(messages(), "[]").empty());
}

BOOST_AUTO_TEST_CASE(every_golden_openai_stream_keeps_the_messages_grammar) {
    auto asked = asked_messages();
    for (const auto& g : openai_streams()) {
        BOOST_TEST_CONTEXT(g.name) {
            auto out = written(openai::adapter(), g.transcript, messages(), asked);
            BOOST_TEST(check_messages_stream(out) == "", out);
            auto events = sse_events(out);
            std::size_t tool_blocks = 0;
            for (const auto& e : events)
                if (e.first == "content_block_start" &&
                    data_of(e).at("content_block").at("type") == "tool_use")
                    ++tool_blocks;
            BOOST_TEST(tool_blocks == g.calls);
            BOOST_TEST((events.back().first == "message_stop") == g.complete);
            same_at_every_cut(openai::adapter(), g.transcript, messages(), asked);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_stream_says_what_the_turn_was) {
    auto asked = asked_messages();
    auto streams = openai_streams();
    auto out = written(openai::adapter(), streams[0].transcript, messages(), asked);
    auto events = sse_events(out);
    BOOST_TEST(data_of(events[0]).at("message").at("model") == "client-model");
    BOOST_TEST(data_of(events[2]).at("delta").at("text") == "Hel");
    auto delta = data_of(events[events.size() - 2]);
    BOOST_TEST(delta.at("delta").at("stop_reason") == "end_turn");
    BOOST_TEST(delta.at("usage").at("input_tokens") == 12);
    BOOST_TEST(delta.at("usage").at("output_tokens") == 5);

    // Text then a call: the text block is stopped before the tool_use block opens at index 1,
    // and the call's arguments all arrive inside it.
    out = written(openai::adapter(), streams[3].transcript, messages(), asked);
    events = sse_events(out);
    std::string arguments;
    for (const auto& e : events) {
        if (e.first == "content_block_start" &&
            data_of(e).at("content_block").at("type") == "tool_use")
            BOOST_TEST(data_of(e).at("index") == 1);
        if (e.first == "content_block_delta" &&
            data_of(e).at("delta").at("type") == "input_json_delta")
            arguments += data_of(e).at("delta").at("partial_json").as_string();
    }
    BOOST_TEST(arguments == R"({"path":"a"})");

    // A call the server reported as "stop" is still tool_use; reasoning is a thinking block.
    out = written(openai::adapter(), streams[4].transcript, messages(), asked);
    BOOST_TEST(out.find(R"("stop_reason":"tool_use")") != std::string::npos, out);
    out = written(openai::adapter(), streams[5].transcript, messages(), asked);
    BOOST_TEST(out.find(R"("type":"thinking_delta","thinking":"Think")") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(a_stream_that_breaks_after_output_ends_in_anthropics_error_event) {
    auto out =
        written(openai::adapter(), openai_streams()[6].transcript, messages(), asked_messages());
    BOOST_TEST(check_messages_stream(out) == "", out);
    auto events = sse_events(out);
    BOOST_TEST(events.back().first == "error");
    BOOST_TEST(data_of(events.back()).at("error").at("type") == "api_error");
}

BOOST_AUTO_TEST_CASE(interleaved_calls_break_the_stream_rather_than_lose_arguments) {
    auto role = chunk(R"({"role":"assistant","content":""})");
    auto transcript = role + call_start(0, "a", "read") + call_start(1, "b", "read") +
                      call_args(0, R"({"path":"a"})") + chunk("{}", "tool_calls") + done;
    auto out = written(openai::adapter(), transcript, messages(), asked_messages());
    BOOST_TEST(check_messages_stream(out) == "", out);
    BOOST_TEST(sse_events(out).back().first == "error");
}

BOOST_AUTO_TEST_CASE(gemini_streams_keep_the_grammar_and_their_signatures_travel_in_the_ids) {
    auto asked = asked_messages();
    std::vector<fakes::turn> turns{
        {"Plain text.", {}},
        {"", {{"read", R"({"path":"a"})"}}},
        {"", {{"read", R"({"path":"a"})"}, {"read", R"({"path":"b"})"}}},
        {"First this.", {{"read", R"({"path":"a"})"}}},
    };
    int serial = 0;
    for (const auto& t : turns) {
        auto answer = fakes::gemini_answer(t, "gemini-2.5-pro", true, ++serial);
        std::string transcript;
        for (const auto& e : answer.events) transcript += e;
        auto out = written(gemini::adapter(), transcript, messages(), asked);
        BOOST_TEST(check_messages_stream(out) == "", out);
        same_at_every_cut(gemini::adapter(), transcript, messages(), asked);
        if (!t.calls.empty()) {
            // The first call's id carries its thought signature back on the next turn.
            std::string id;
            for (const auto& e : sse_events(out))
                if (e.first == "content_block_start" &&
                    data_of(e).at("content_block").at("type") == "tool_use" && id.empty())
                    id = data_of(e).at("content_block").at("id").as_string();
            json::object carried;
            openai::id_without_state(id, carried);
            BOOST_TEST(carried.at("thought_signature").as_string() ==
                       "fake-sig-" + std::to_string(serial));
        }
    }
    // Gemini's thoughts (includeThoughts) come out as a thinking block before the text.
    std::string thoughts =
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Let me "
        "think.\",\"thought\":true}]}}]}\r\n\r\n"
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Four.\"}]},"
        "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,"
        "\"candidatesTokenCount\":1,\"thoughtsTokenCount\":4}}\r\n\r\n";
    auto out = written(gemini::adapter(), thoughts, messages(), asked);
    BOOST_TEST(check_messages_stream(out) == "", out);
    auto events = sse_events(out);
    BOOST_TEST(data_of(events[1]).at("content_block").at("type") == "thinking");
    BOOST_TEST(out.find(R"("text":"Four.")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_whole_answer_is_an_anthropic_message) {
    reply r;
    r.content.parts.push_back(part::of_reasoning("Hmm."));
    r.content.parts.push_back(part::of_text("Reading."));
    tool_call c;
    c.id = "gemini_1";
    c.name = "Read";
    c.arguments = {{"path", "a"}};
    c.provider_meta = {{"thought_signature", "sig"}};
    r.content.parts.push_back(part::of_call(c));
    r.why = finish::stop;
    r.used = {true, 10, 4};
    auto body = json::parse(messages().answer(r, {"msg_1", "claude-x", 1}, {})).as_object();
    BOOST_TEST(body.at("type") == "message");
    BOOST_TEST(body.at("model") == "claude-x");
    BOOST_TEST(body.at("stop_reason") == "tool_use");
    const auto& content = body.at("content").as_array();
    BOOST_TEST(content.at(0).at("type") == "thinking");
    BOOST_TEST(content.at(1).at("text") == "Reading.");
    BOOST_TEST(content.at(2).at("input").at("path") == "a");
    BOOST_TEST(body.at("usage").at("output_tokens") == 4);
    provider_error e;
    e.status = 429;
    e.message = "slow down";
    auto error = json::parse(messages().error_body(e));
    BOOST_TEST(error.at("type") == "error");
    BOOST_TEST(error.at("error").at("type") == "rate_limit_error");
}

BOOST_AUTO_TEST_CASE(count_tokens_is_estimated_from_what_would_be_sent) {
    auto small =
        parsed(messages(), R"({"model":"m","messages":[{"role":"user","content":"abcd"}]})");
    BOOST_TEST(estimate_input_tokens(small) == 1);
    auto more = parsed(messages(), R"({"model":"m","system":"12345678",
        "tools":[{"name":"Read","input_schema":{"type":"object"}}],
        "messages":[{"role":"user","content":[{"type":"text","text":"abcd"},
          {"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]})");
    // 8 + 4 + "Read" + {"type":"object"} (17) = 33 bytes -> 9 tokens, and one image.
    BOOST_TEST(estimate_input_tokens(more) == 9 + 1600);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ingress_responses)

BOOST_AUTO_TEST_CASE(a_codex_request_reads_into_the_conversation) {
    auto r = parsed(responses(), R"({
      "model": "claude-sonnet-4-5", "instructions": "You are Codex.", "store": false,
      "stream": true, "parallel_tool_calls": false, "reasoning": {"effort": "high", "summary": "auto"},
      "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k",
      "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object",
                  "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
                {"type": "custom", "name": "apply_patch", "description": "Patch files.",
                 "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}}],
      "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox: none."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List files."}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xyz"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell",
         "arguments": "{\"command\":[\"ls\"]}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
        {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "apply_patch",
         "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done!"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Listed."}]}]})");
    BOOST_TEST(r.system == "You are Codex.\n\nSandbox: none.");
    BOOST_TEST(r.reasoning_effort == "high");
    BOOST_TEST(r.parallel_tool_calls.value() == false);
    BOOST_TEST_REQUIRE(r.tools.size() == 2u);
    BOOST_TEST(r.tools[1].freeform);
    BOOST_TEST(r.tools[1].parameters.at("required").at(0) == "input");
    BOOST_TEST_REQUIRE(r.messages.size() == 6u);
    BOOST_TEST(r.messages[1].parts.at(0).call.arguments.at("command").at(0) == "ls");
    BOOST_TEST(r.messages[2].parts.at(0).result.name == "shell");
    BOOST_TEST(r.messages[3].parts.at(0).call.arguments.at("input") == "*** Begin Patch");
    BOOST_TEST(r.messages[4].parts.at(0).result.content == "Done!");
    BOOST_TEST(r.messages[5].text() == "Listed.");

    // On Anthropic: the patch tool as a function of one string; results follow their calls.
    std::string why;
    auto body = json::parse(anthropic::adapter().encode(r, why)).as_object();
    BOOST_TEST(body.at("tools").at(1).at("input_schema").at("properties").at("input").at("type") ==
               "string");
    BOOST_TEST(body.at("tool_choice").at("disable_parallel_tool_use") == true);
}

BOOST_AUTO_TEST_CASE(what_needs_openais_servers_is_refused_by_name) {
    BOOST_TEST(
        refused(responses(), R"({"model":"m","input":"hi","previous_response_id":"resp_1"})") ==
        "previous_response_id");
    BOOST_TEST(refused(responses(), R"({"model":"m","input":[{"type":"local_shell_call"}]})") ==
               "input[0].type");
    BOOST_TEST(refused(responses(), R"({"model":"m","input":[
        {"type":"function_call_output","call_id":"nope","output":"x"}]})") == "input[0].call_id");
    BOOST_TEST(refused(responses(), R"({"model":"m","input":"hi","background":true})") ==
               "background");
}

BOOST_AUTO_TEST_CASE(namespaces_are_flattened_and_hosted_tools_are_not_offered) {
    auto r = parsed(responses(), R"({"model":"m","input":"hi","tools":[
        {"type":"web_search","external_web_access":false},
        {"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[
          {"type":"function","name":"spawn_agent","parameters":{"type":"object"}}]}]})");
    BOOST_TEST_REQUIRE(r.tools.size() == 1u);
    BOOST_TEST(r.tools[0].name == "spawn_agent");
    BOOST_TEST(r.tools[0].group == "multi_agent_v1");
    // Its call goes back to the client in its namespace.
    reply answer;
    tool_call c;
    c.id = "toolu_1";
    c.name = "spawn_agent";
    answer.content.parts.push_back(part::of_call(c));
    auto body = json::parse(responses().answer(answer, {"resp_1", "m", 1}, r));
    BOOST_TEST(body.at("output").at(0).at("namespace") == "multi_agent_v1");
}

BOOST_AUTO_TEST_CASE(every_golden_stream_keeps_the_responses_grammar) {
    auto asked = asked_responses();
    for (const auto& g : openai_streams()) {
        BOOST_TEST_CONTEXT(g.name) {
            auto out = written(openai::adapter(), g.transcript, responses(), asked);
            BOOST_TEST(check_responses_stream(out) == "", out);
            auto events = sse_events(out);
            std::size_t calls = 0;
            for (const auto& e : events)
                if (e.first == "response.output_item.added" &&
                    data_of(e).at("item").at("type") == "function_call")
                    ++calls;
            BOOST_TEST(calls == g.calls);
            BOOST_TEST((events.back().first == "response.completed") == g.complete);
            same_at_every_cut(openai::adapter(), g.transcript, responses(), asked);
        }
    }
    int serial = 0;
    for (const auto& t :
         std::vector<fakes::turn>{{"Plain.", {}},
                                  {"", {{"read", R"({"path":"a"})"}, {"list", "{}"}}},
                                  {"First.", {{"read", R"({"path":"a"})"}}}}) {
        for (bool gemini : {false, true}) {
            auto answer = gemini ? fakes::gemini_answer(t, "g", true, ++serial)
                                 : fakes::anthropic_answer(t, "c", true, ++serial);
            std::string transcript;
            for (const auto& e : answer.events) transcript += e;
            const auto& a = gemini ? gemini::adapter() : anthropic::adapter();
            auto out = written(a, transcript, responses(), asked);
            BOOST_TEST(check_responses_stream(out) == "", out);
            same_at_every_cut(a, transcript, responses(), asked);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_freeform_call_comes_back_as_a_custom_tool_call) {
    auto role = chunk(R"({"role":"assistant","content":""})");
    auto transcript = role + call_start(0, "call_p", "apply_patch") +
                      call_args(0, R"({"input":"*** Begin Patch\n"})") + chunk("{}", "tool_calls") +
                      done;
    auto out = written(openai::adapter(), transcript, responses(), asked_responses());
    BOOST_TEST(check_responses_stream(out) == "", out);
    auto events = sse_events(out);
    auto last = data_of(events.back());
    const auto& item = last.at("response").at("output").at(0);
    BOOST_TEST(item.at("type") == "custom_tool_call");
    BOOST_TEST(item.at("call_id") == "call_p");
    BOOST_TEST(item.at("input") == "*** Begin Patch\n");
}

BOOST_AUTO_TEST_CASE(the_end_says_how_the_response_ended) {
    auto role = chunk(R"({"role":"assistant","content":""})");
    auto out = written(openai::adapter(), role + chunk(R"({"content":"Trunc"})", "length") + done,
                       responses(), asked_responses());
    BOOST_TEST(check_responses_stream(out) == "", out);
    auto last = data_of(sse_events(out).back());
    BOOST_TEST(last.at("type") == "response.incomplete");
    BOOST_TEST(last.at("response").at("incomplete_details").at("reason") == "max_output_tokens");

    out =
        written(openai::adapter(), openai_streams()[6].transcript, responses(), asked_responses());
    BOOST_TEST(check_responses_stream(out) == "", out);
    last = data_of(sse_events(out).back());
    BOOST_TEST(last.at("type") == "response.failed");
    BOOST_TEST(last.at("response").at("error").at("code") == "server_error");

    provider_error e;
    e.status = 429;
    e.message = "Rate limit reached; try again in 7s.";
    BOOST_TEST(json::parse(responses().error_body(e)).at("error").at("code") ==
               "rate_limit_exceeded");
    e.status = 400;
    e.message = "prompt is too long: 210000 tokens > 200000 maximum";
    BOOST_TEST(json::parse(responses().error_body(e)).at("error").at("code") ==
               "context_length_exceeded");
}

BOOST_AUTO_TEST_CASE(a_whole_answer_is_a_response) {
    reply r;
    r.content.parts.push_back(part::of_text("Done."));
    tool_call c;
    c.id = "toolu_1";
    c.name = "shell";
    c.arguments = {{"command", json::array{"ls"}}};
    r.content.parts.push_back(part::of_call(c));
    r.used = {true, 7, 3};
    auto asked = asked_responses();
    auto body = json::parse(responses().answer(r, {"resp_9", "claude-x", 5}, asked)).as_object();
    BOOST_TEST(body.at("object") == "response");
    BOOST_TEST(body.at("status") == "completed");
    const auto& output = body.at("output").as_array();
    BOOST_TEST(output.at(0).at("type") == "message");
    BOOST_TEST(output.at(0).at("content").at(0).at("text") == "Done.");
    BOOST_TEST(output.at(1).at("type") == "function_call");
    BOOST_TEST(output.at(1).at("arguments") == R"({"command":["ls"]})");
    BOOST_TEST(body.at("usage").at("total_tokens") == 10);
}

BOOST_AUTO_TEST_SUITE_END()

// The validators catch the breakages seen in the wild (LiteLLM, Bifrost, Portkey issues).
BOOST_AUTO_TEST_SUITE(stream_grammar_validators)

namespace {
std::string ev(std::string_view type, std::string_view rest = "") {
    return "event: " + std::string(type) + "\ndata: {\"type\":\"" + std::string(type) + "\"" +
           std::string(rest) + "}\n\n";
}
const std::string start =
    ev("message_start", R"(,"message":{"id":"m","usage":{"input_tokens":1,"output_tokens":0}})");
std::string text_block(int index) {
    auto i = std::to_string(index);
    return ev("content_block_start",
              R"(,"index":)" + i + R"(,"content_block":{"type":"text","text":""})") +
           ev("content_block_delta",
              R"(,"index":)" + i + R"(,"delta":{"type":"text_delta","text":"a"})") +
           ev("content_block_stop", R"(,"index":)" + i);
}
std::string tool_block(int index) {
    auto i = std::to_string(index);
    return ev("content_block_start",
              R"(,"index":)" + i +
                  R"(,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}})") +
           ev("content_block_delta",
              R"(,"index":)" + i + R"(,"delta":{"type":"input_json_delta","partial_json":"{}"})") +
           ev("content_block_stop", R"(,"index":)" + i);
}
std::string end(std::string_view reason) {
    return ev("message_delta", R"(,"delta":{"stop_reason":")" + std::string(reason) +
                                   R"("},"usage":{"output_tokens":1})") +
           ev("message_stop");
}
}  // namespace

BOOST_AUTO_TEST_CASE(the_messages_validator_refuses_each_known_breakage) {
    BOOST_TEST(check_messages_stream(start + text_block(0) + tool_block(1) + end("tool_use")) ==
               "");
    BOOST_TEST(check_messages_stream(start + start + text_block(0) + end("end_turn")) != "");
    BOOST_TEST(check_messages_stream(start + text_block(0) + text_block(2) + end("end_turn")) !=
               "");
    BOOST_TEST(check_messages_stream(start + tool_block(0) + end("end_turn")) != "");
    BOOST_TEST(
        check_messages_stream(
            start +
            ev("content_block_start", R"(,"index":0,"content_block":{"type":"text","text":""})") +
            ev("content_block_delta",
               R"(,"index":0,"delta":{"type":"thinking_delta","thinking":"x"})") +
            ev("content_block_stop", R"(,"index":0)") + end("end_turn")) != "");
    BOOST_TEST(check_messages_stream(start + text_block(0)) != "");  // never ended
    BOOST_TEST(check_messages_stream(ev("ping") + start + text_block(0) + end("end_turn")) != "");
}

BOOST_AUTO_TEST_CASE(the_responses_validator_refuses_each_known_breakage) {
    int n = 0;
    auto e = [&](std::string_view type, std::string rest = "") {
        return ev(type, R"(,"sequence_number":)" + std::to_string(n++) + rest);
    };
    auto call = [&](int index, std::string id, bool done = true) {
        auto i = std::to_string(index);
        std::string item =
            R"({"id":")" + id + R"(","type":"function_call","call_id":"c","name":"f"})";
        auto out =
            e("response.output_item.added", R"(,"output_index":)" + i + R"(,"item":)" + item);
        out += e("response.function_call_arguments.delta",
                 R"(,"item_id":")" + id + R"(","output_index":)" + i + R"(,"delta":"{}")");
        out += e("response.function_call_arguments.done",
                 R"(,"item_id":")" + id + R"(","output_index":)" + i + R"(,"arguments":"{}")");
        if (done)
            out += e("response.output_item.done", R"(,"output_index":)" + i + R"(,"item":)" + item);
        return out;
    };
    auto head = [&] {
        n = 0;
        auto out = e("response.created", R"(,"response":{"status":"in_progress"})");
        return out + e("response.in_progress", R"(,"response":{"status":"in_progress"})");
    };
    auto completed = [&](std::string output) {
        return e("response.completed", R"(,"response":{"status":"completed","output":)" + output +
                                           R"(,"usage":{"total_tokens":2}})");
    };
    // Each piece in its own statement: the events are numbered in the order they are made.
    auto good = head();
    good += call(0, "fc_1");
    good += call(1, "fc_2");
    good += completed(R"([{"id":"fc_1"},{"id":"fc_2"}])");
    BOOST_TEST(check_responses_stream(good) == "");
    auto reused = head();
    reused += call(0, "fc_1");
    reused += call(0, "fc_2");
    reused += completed(R"([{"id":"fc_1"},{"id":"fc_2"}])");
    BOOST_TEST(check_responses_stream(reused) != "");  // a second item at output_index 0
    auto never_done = head();
    never_done += call(0, "fc_1", false);
    never_done += completed(R"([{"id":"fc_1"}])");
    BOOST_TEST(check_responses_stream(never_done) != "");
    auto twice = head();
    twice += call(0, "fc_1");
    twice += e("response.created", R"(,"response":{"status":"in_progress"})");
    BOOST_TEST(check_responses_stream(twice) != "");  // a second lifecycle
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ingress_gemini)

namespace {
request asked_gemini() {
    request r =
        parsed(generate_content(), R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})");
    BOOST_TEST_REQUIRE(
        generate_content().from_target("/v1beta/models/m:streamGenerateContent?alt=sse", r));
    return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_gemini_cli_request_reads_into_the_conversation) {
    auto r = parsed(generate_content(), R"({
      "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
      "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
      "generationConfig": {"temperature": 0, "topP": 1, "maxOutputTokens": 500,
                           "stopSequences": ["END"], "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024}},
      "tools": [{"functionDeclarations": [
          {"name": "read_file", "description": "Reads a file.",
           "parametersJsonSchema": {"type": "object", "properties": {"absolute_path": {"type": "string"}}}},
          {"name": "ls", "parameters": {"type": "OBJECT", "properties": {"path": {"type": "STRING"}}}}]},
        {"googleSearch": {}}],
      "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}},
      "contents": [
        {"role": "user", "parts": [{"text": "Read a."}]},
        {"role": "model", "parts": [{"text": "thinking", "thought": true},
                                    {"functionCall": {"id": "call_1", "name": "read_file", "args": {"absolute_path": "/a"}}},
                                    {"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "A"}}},
                                   {"functionResponse": {"name": "ls", "response": {"error": "denied"}}}]}]})");
    BOOST_TEST(
        generate_content().from_target("/v1beta/models/gpt-4o:streamGenerateContent?alt=sse", r));
    BOOST_TEST(r.model == "gpt-4o");
    BOOST_TEST(r.stream);
    BOOST_TEST(r.system == "You are Gemini CLI.");
    BOOST_TEST(r.max_tokens.value() == 500);
    BOOST_TEST(r.reasoning_budget.value() == 1024);
    BOOST_TEST_REQUIRE(r.tools.size() == 2u);  // googleSearch is not offered
    BOOST_TEST(r.tools[1].parameters.at("properties").at("path").at("type") == "string");
    BOOST_TEST(static_cast<int>(r.choice) == static_cast<int>(tool_choice::named));
    BOOST_TEST(r.choice_name == "read_file");
    BOOST_TEST_REQUIRE(r.messages.size() == 4u);
    BOOST_TEST(r.messages[1].calls().size() == 2u);  // the thought is left out
    BOOST_TEST(r.messages[2].parts[0].result.call_id == "call_1");
    BOOST_TEST(r.messages[2].parts[0].result.content == "A");
    BOOST_TEST(r.messages[3].parts[0].result.name == "ls");
    BOOST_TEST(r.messages[3].parts[0].result.is_error);
    BOOST_TEST(r.messages[3].parts[0].result.call_id == r.messages[1].calls()[1]->id);
    std::string why;
    auto body = json::parse(openai::adapter().encode(r, why)).as_object();
    BOOST_TEST(body.at("messages").at(3).at("tool_call_id") ==
               "call_1");  // after the system message
    BOOST_TEST(body.at("tool_choice").at("function").at("name") == "read_file");

    request plain;
    BOOST_TEST(generate_content().parse(R"({"contents":[{"parts":[{"text":"hi"}]}]})", plain,
                                        *std::make_unique<parse_failure>()));
    BOOST_TEST(generate_content().from_target("/v1beta/models/claude-x:generateContent", plain));
    BOOST_TEST(!plain.stream);
    BOOST_TEST(!generate_content().from_target("/v1beta/models/:generateContent", plain));
}

BOOST_AUTO_TEST_CASE(what_would_change_the_answer_is_refused_by_name) {
    BOOST_TEST(refused(generate_content(), R"({"contents":[{"parts":[{"text":"hi"}]}],
        "generationConfig":{"candidateCount":2}})") == "generationConfig.candidateCount");
    BOOST_TEST(refused(generate_content(), R"({"cachedContent":"cachedContents/x",
        "contents":[{"parts":[{"text":"hi"}]}]})") == "cachedContent");
    BOOST_TEST(refused(generate_content(),
                       R"({"contents":[{"parts":[{"executableCode":{"code":"1"}}]}]})") ==
               "contents[0].parts[0]");
    BOOST_TEST(refused(generate_content(), R"({"contents":[{"role":"user","parts":[
        {"functionResponse":{"name":"ls","response":{}}}]}]})") ==
               "contents[0].parts[0].functionResponse");
    BOOST_TEST(refused(generate_content(), R"({"contents":[]})") == "contents");
}

// Responses are matched to calls by id, else by name to the oldest call not yet answered; a
// response whose id no call had is matched by name, and takes the call's name.
BOOST_AUTO_TEST_CASE(function_responses_are_matched_by_id_then_by_name_in_order) {
    auto r = parsed(generate_content(), R"({"contents":[
        {"role":"user","parts":[{"text":"go"}]},
        {"role":"model","parts":[{"functionCall":{"id":"a","name":"f","args":{}}},
                                 {"functionCall":{"id":"b","name":"f","args":{}}},
                                 {"functionCall":{"name":"f","args":{}}},
                                 {"functionCall":{"id":"c","name":"g","args":{}}}]},
        {"role":"user","parts":[{"functionResponse":{"id":"b","name":"f","response":{"output":"1"}}},
                                {"functionResponse":{"name":"f","response":{"output":"2"}}},
                                {"functionResponse":{"id":"zzz","name":"f","response":{"output":"3"}}},
                                {"functionResponse":{"id":"c","name":"other","response":{"output":"4"}}}]}]})");
    BOOST_TEST_REQUIRE(r.messages.size() == 6u);
    auto calls = r.messages[1].calls();
    BOOST_TEST_REQUIRE(calls.size() == 4u);
    auto result = [&](std::size_t i) { return r.messages[2 + i].parts.at(0).result; };
    BOOST_TEST(result(0).call_id == "b");
    BOOST_TEST(result(1).call_id == "a");
    BOOST_TEST(result(2).call_id == calls[2]->id);
    BOOST_TEST(result(3).call_id == "c");
    BOOST_TEST(result(3).name == "g");
    BOOST_TEST(result(3).content == "4");
    // Every call of that name is answered: one more by name answers nothing.
    BOOST_TEST(refused(generate_content(), R"({"contents":[
        {"role":"model","parts":[{"functionCall":{"id":"a","name":"f","args":{}}}]},
        {"role":"user","parts":[{"functionResponse":{"id":"a","name":"f","response":{}}},
                                {"functionResponse":{"name":"f","response":{}}}]}]})") ==
               "contents[1].parts[1].functionResponse");
}

// Tens of thousands of responses naming one id (each a lookup among as many calls of that name)
// are read in one pass: matching was quadratic (24,000 of them froze a worker for 44 s), so a
// regression shows as a test that runs for minutes.
BOOST_AUTO_TEST_CASE(many_function_responses_naming_one_id_are_read_in_linear_time) {
    constexpr int n = 40'000;
    std::string body = R"({"contents":[{"role":"model","parts":[)";
    for (int i = 0; i < n; ++i)
        body += (i ? "," : "") + std::string(R"({"functionCall":{"id":"c)") + std::to_string(i) +
                R"(","name":"f","args":{}}})";
    body += R"(]},{"role":"user","parts":[)";
    for (int i = 0; i < n; ++i)
        body += (i ? "," : "") +
                std::string(R"({"functionResponse":{"id":"c0","name":"f","response":{}}})");
    body += "]}]}";
    auto r = parsed(generate_content(), body);
    BOOST_TEST_REQUIRE(r.messages.size() == std::size_t(n) + 1);
    BOOST_TEST(r.messages[1].parts[0].result.call_id == "c0");
    BOOST_TEST(r.messages[n].parts[0].result.call_id == "c0");
    BOOST_TEST(r.messages[n].parts[0].result.name == "f");
}

// Every client API's numbers are range-checked before they are converted: `max_tokens: 1e300`
// reached a Gemini upstream as -9223372036854775808. A bad figure is a 400 naming the field; a
// whole number written as a double (2.0) is still one.
BOOST_AUTO_TEST_CASE(client_numbers_out_of_range_are_refused_by_name) {
    struct api {
        const ingress* in;
        std::string before;  // the body up to the field's value
        std::string after;
        std::string param;
    };
    const std::vector<api> apis{
        {&chat_completions(),
         R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":)", "}",
         "max_tokens"},
        {&chat_completions(),
         R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":)",
         "}", "max_completion_tokens"},
        {&messages(), R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":)",
         "}", "max_tokens"},
        {&messages(),
         R"({"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":)",
         "}}", "thinking.budget_tokens"},
        {&responses(), R"({"model":"m","input":"hi","max_output_tokens":)", "}",
         "max_output_tokens"},
        {&generate_content(),
         R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":)", "}}",
         "generationConfig.maxOutputTokens"},
        {&generate_content(),
         R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":)",
         "}}}", "generationConfig.thinkingConfig.thinkingBudget"},
    };
    for (const auto& a : apis) {
        for (std::string bad : {"1e300", "-1e300", "1e309", "-2", "1.5", "2147483648",
                                "9223372036854775808", "18446744073709551615", "\"9\""}) {
            request r;
            parse_failure f;
            BOOST_TEST(!a.in->parse(a.before + bad + a.after, r, f), a.param << " " << bad);
            BOOST_TEST(f.param == a.param, a.param << " " << bad);
            BOOST_TEST(f.message.find("whole number") != std::string::npos, f.message);
        }
        request r;
        parse_failure f;
        BOOST_TEST_REQUIRE(a.in->parse(a.before + "2.0" + a.after, r, f), a.param << f.message);
        BOOST_TEST((r.max_tokens.value_or(0) == 2 || r.reasoning_budget.value_or(0) == 2), a.param);
    }
    // Temperatures and top_p: any finite number (1e309 is read as infinity).
    request r;
    parse_failure f;
    BOOST_TEST(!chat_completions().parse(
        R"({"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1e309})", r, f));
    BOOST_TEST(f.param == "temperature");
    BOOST_TEST(!generate_content().parse(
        R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"topP":-1e999}})", r, f));
    BOOST_TEST(f.param == "generationConfig.topP");
    // Gemini's dynamic thinking (-1) is no budget, not a refusal.
    request dynamic;
    BOOST_TEST_REQUIRE(generate_content().parse(
        R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}})",
        dynamic, f));
    BOOST_TEST(!dynamic.reasoning_budget);
    // The gateway never writes a body with a figure it could not read: 2^31 - 1 goes out as is.
    request most = parsed(chat_completions(),
                          R"({"model":"gemini-3","messages":[{"role":"user","content":"hi"}],)"
                          R"("max_tokens":2147483647.0})");
    std::string why;
    auto wire = json::parse(gemini::adapter().encode(most, why));
    BOOST_TEST(wire.at("generationConfig").at("maxOutputTokens") == 2147483647);
}

BOOST_AUTO_TEST_CASE(every_golden_stream_keeps_geminis_stream_shape) {
    auto asked = asked_gemini();
    for (const auto& g : openai_streams()) {
        BOOST_TEST_CONTEXT(g.name) {
            auto out = written(openai::adapter(), g.transcript, generate_content(), asked);
            BOOST_TEST(check_gemini_stream(out) == "", out);
            std::size_t calls = 0;
            for (const auto& e : sse_events(out)) {
                auto o = json::parse(e.second).as_object();
                if (!o.contains("candidates")) continue;
                for (const auto& p : o.at("candidates").at(0).at("content").at("parts").as_array())
                    if (p.as_object().contains("functionCall")) ++calls;
            }
            BOOST_TEST(calls == g.calls);
            same_at_every_cut(openai::adapter(), g.transcript, generate_content(), asked);
            // Without alt=sse: the same responses as one JSON array.
            auto array = written(openai::adapter(), g.transcript, generate_content(), asked, {},
                                 "/v1beta/models/m:streamGenerateContent");
            BOOST_TEST(check_gemini_stream(array, false) == "", array);
        }
    }
    int serial = 0;
    for (const auto& t :
         std::vector<fakes::turn>{{"Plain.", {}},
                                  {"", {{"read", R"({"path":"a"})"}, {"list", "{}"}}},
                                  {"First.", {{"read", R"({"path":"a"})"}}}}) {
        auto answer = fakes::anthropic_answer(t, "c", true, ++serial);
        std::string transcript;
        for (const auto& e : answer.events) transcript += e;
        auto out = written(anthropic::adapter(), transcript, generate_content(), asked);
        BOOST_TEST(check_gemini_stream(out) == "", out);
        same_at_every_cut(anthropic::adapter(), transcript, generate_content(), asked);
    }
}

BOOST_AUTO_TEST_CASE(a_call_goes_out_whole_in_one_part_and_the_end_says_why) {
    auto streams = openai_streams();
    auto out =
        written(openai::adapter(), streams[1].transcript, generate_content(), asked_gemini());
    auto events = sse_events(out);
    std::vector<json::object> calls;
    for (const auto& e : events) {
        auto response = json::parse(e.second);
        for (const auto& p : response.at("candidates").at(0).at("content").at("parts").as_array())
            if (p.as_object().contains("functionCall"))
                calls.push_back(p.at("functionCall").as_object());
    }
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST(calls[0].at("args").at("path") == "a.txt");
    BOOST_TEST(calls[0].at("id") == "call_a");
    auto last = json::parse(events.back().second);
    BOOST_TEST(last.at("candidates").at(0).at("finishReason") == "STOP");
    // A text stream's usage, and a cut stream's error event.
    out = written(openai::adapter(), streams[0].transcript, generate_content(), asked_gemini());
    last = json::parse(sse_events(out).back().second);
    BOOST_TEST(last.at("usageMetadata").at("promptTokenCount") == 12);
    out = written(openai::adapter(), streams[6].transcript, generate_content(), asked_gemini());
    BOOST_TEST(check_gemini_stream(out) == "", out);
    BOOST_TEST(json::parse(sse_events(out).back().second).at("error").at("status") == "INTERNAL");
}

BOOST_AUTO_TEST_CASE(a_whole_answer_and_an_error_in_geminis_shapes) {
    reply r;
    r.content.parts.push_back(part::of_text("Reading."));
    tool_call c;
    c.id = "toolu_1";
    c.name = "read_file";
    c.arguments = {{"absolute_path", "/a"}};
    r.content.parts.push_back(part::of_call(c));
    r.why = finish::length;
    r.used = {true, 9, 2};
    auto body = json::parse(generate_content().answer(r, {"r1", "claude-x", 1}, {}));
    const auto& candidate = body.at("candidates").at(0);
    BOOST_TEST(candidate.at("finishReason") == "MAX_TOKENS");
    BOOST_TEST(candidate.at("content").at("parts").at(1).at("functionCall").at("name") ==
               "read_file");
    BOOST_TEST(body.at("usageMetadata").at("totalTokenCount") == 11);
    BOOST_TEST(body.at("modelVersion") == "claude-x");
    provider_error e;
    e.status = 429;
    e.message = "slow down";
    auto error = json::parse(generate_content().error_body(e));
    BOOST_TEST(error.at("error").at("code") == 429);
    BOOST_TEST(error.at("error").at("status") == "RESOURCE_EXHAUSTED");
}

BOOST_AUTO_TEST_CASE(the_gemini_validator_refuses_what_gemini_never_sends) {
    auto ok = std::string(
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"a\"}]},"
        "\"finishReason\":\"STOP\"}],\"usageMetadata\":{}}\r\n\r\n");
    BOOST_TEST(check_gemini_stream(ok) == "");
    BOOST_TEST(check_gemini_stream(ok + ok) != "");  // a response after the last
    BOOST_TEST(
        check_gemini_stream(
            "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":"
            "{\"name\":\"f\",\"args\":\"{}\"}}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{}}"
            "\n\n") != "");
    BOOST_TEST(check_gemini_stream("data: "
                                   "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{"
                                   "\"text\":\"a\"}]}}]}\n\n") != "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_ingress_test
