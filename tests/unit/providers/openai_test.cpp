#include "gateway/providers/openai.hpp"

#include "tests/unit/providers/stream_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>

namespace providers_openai_test {

using namespace gateway::providers;
namespace json = boost::json;

namespace {

request parsed(std::string_view body) {
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(openai::parse_chat_request(body, r, f), f.param + ": " + f.message);
    return r;
}

std::string refused(std::string_view body) {
    request r;
    openai::parse_failure f;
    BOOST_TEST(!openai::parse_chat_request(body, r, f));
    return f.param;
}

constexpr std::string_view agent_turns = R"({
  "model": "claude-x", "max_tokens": 100, "temperature": 0.5, "stop": "END",
  "messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "look at "},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"},
       "extra_content": {"google": {"thought_signature": "sig=="}}},
      {"id": "c2", "type": "function", "function": {"name": "list", "arguments": ""}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "A"},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "B"}]},
    {"role": "assistant", "content": "done"}],
  "tools": [{"type": "function", "function": {"name": "read", "description": "Reads",
             "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "list"}}],
  "tool_choice": "required", "parallel_tool_calls": false,
  "stream": true, "stream_options": {"include_usage": true}
})";

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_openai)

BOOST_AUTO_TEST_CASE(a_chat_request_becomes_the_conversation) {
    auto r = parsed(agent_turns);
    BOOST_TEST(r.model == "claude-x");
    BOOST_TEST(r.system == "Be brief.");
    BOOST_TEST_REQUIRE(r.messages.size() == 5u);
    BOOST_TEST(r.messages[0].parts.size() == 2u);
    BOOST_TEST(r.messages[0].parts[1].text == "data:image/png;base64,AAAA");
    auto calls = r.messages[1].calls();
    BOOST_TEST_REQUIRE(calls.size() == 2u);
    BOOST_TEST(json::serialize(calls[0]->arguments) == R"({"path":"a"})");
    BOOST_TEST(json::serialize(calls[0]->provider_meta) == R"({"thought_signature":"sig=="})");
    BOOST_TEST(calls[1]->arguments.empty());  // "" is {}
    // Tool results take their call's name from the assistant message.
    BOOST_TEST(r.messages[2].parts[0].result.name == "read");
    BOOST_TEST(r.messages[3].parts[0].result.name == "list");
    BOOST_TEST(r.messages[3].parts[0].result.content == "B");
    BOOST_TEST(r.tools.size() == 2u);
    BOOST_TEST(r.tools[1].parameters.contains("type"));  // a missing schema is an empty object
    BOOST_TEST((r.choice == tool_choice::required));
    BOOST_TEST(*r.parallel_tool_calls == false);
    BOOST_TEST(*r.max_tokens == 100);
    BOOST_TEST(r.stop.size() == 1u);
    BOOST_TEST(r.stream);
    BOOST_TEST(r.include_usage);
}

BOOST_AUTO_TEST_CASE(encoding_and_reading_back_gives_the_same_conversation) {
    auto r = parsed(agent_turns);
    std::string error;
    auto wire = openai::adapter().encode(r, error);
    BOOST_TEST(error.empty());
    auto again = parsed(wire);
    BOOST_TEST(openai::adapter().encode(again, error) == wire);
    BOOST_TEST(again.messages.size() == r.messages.size());
    BOOST_TEST(again.system == r.system);
}

BOOST_AUTO_TEST_CASE(fields_that_cannot_be_translated_are_refused_by_name) {
    BOOST_TEST(refused(R"({"model":"m","n":2,"messages":[{"role":"user","content":"x"}]})") == "n");
    BOOST_TEST(
        refused(R"({"model":"m","logprobs":true,"messages":[{"role":"user","content":"x"}]})") ==
        "logprobs");
    BOOST_TEST(
        refused(
            R"({"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"x"}]})") ==
        "response_format");
    BOOST_TEST(
        refused(R"({"model":"m","functions":[],"messages":[{"role":"user","content":"x"}]})") ==
        "functions");
    BOOST_TEST(
        refused(
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})") ==
        "messages[0].content[0].type");
    BOOST_TEST(
        refused(R"({"model":"m","messages":[{"role":"tool","tool_call_id":"x","content":"r"}]})") ==
        "messages[0].tool_call_id");
    BOOST_TEST(refused(R"({"model":"m","messages":[]})") == "messages");
    BOOST_TEST(refused(R"({"messages":[{"role":"user","content":"x"}]})") == "model");
    BOOST_TEST(
        refused(
            R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search"}]})") ==
        "tools[0].type");
    // Tuning fields are left out, not refused; n = 1 is fine.
    auto r = parsed(
        R"({"model":"m","n":1,"seed":3,"user":"u","messages":[{"role":"user","content":"x"}]})");
    BOOST_TEST(r.messages.size() == 1u);
}

// Each tool message names its call by id; finding that call must not scan every message before
// it (60,000 tool messages took 9 s of a worker). Measured as a ratio, so the machine's speed
// does not matter: 8 times the messages must cost about 8 times the time, not 64.
BOOST_AUTO_TEST_CASE(tool_messages_are_read_in_linear_time) {
    auto body_with = [](std::size_t results) {
        std::string b =
            R"({"model":"m","messages":[{"role":"user","content":"go"},)"
            R"({"role":"assistant","content":null,"tool_calls":[)"
            R"({"id":"c0","type":"function","function":{"name":"f","arguments":"{}"}}]})";
        for (std::size_t i = 0; i < results; ++i)
            b += R"(,{"role":"tool","tool_call_id":"c0","content":"r"})";
        return b + "]}";
    };
    auto seconds = [](const std::string& body, std::size_t expected) {
        double best = 1e9;
        for (int round = 0; round < 3; ++round) {
            auto started = std::chrono::steady_clock::now();
            request r;
            openai::parse_failure f;
            BOOST_TEST_REQUIRE(openai::parse_chat_request(body, r, f), f.message);
            best = std::min(
                best,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
            BOOST_TEST_REQUIRE(r.messages.size() == expected);
            BOOST_TEST(r.messages.back().parts[0].result.name == "f");
        }
        return best;
    };
    auto small = seconds(body_with(8'000), 8'002);
    auto large = seconds(body_with(64'000), 64'002);
    BOOST_TEST(large / small < 24.0, "8x the messages took " << large / small << "x the time");
}

BOOST_AUTO_TEST_CASE(arguments_are_a_json_string_on_the_wire) {
    reply out;
    std::string error;
    BOOST_TEST_REQUIRE(openai::adapter().decode(
        R"({"id":"x","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}],
            "usage":{"prompt_tokens":3,"completion_tokens":4}})",
        out, error));
    BOOST_TEST(testing::describe(out) ==
               R"(finish=tool_calls text= call{c,f,{"a":1},{}} usage=3/4)");
    BOOST_TEST(!openai::adapter().decode(
        R"({"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"f","arguments":"[1]"}}]}}]})",
        out, error));
}

BOOST_AUTO_TEST_CASE(streamed_fragments_keyed_by_index_assemble_at_every_split) {
    // Two parallel calls; id and name only in each call's first fragment.
    std::string transcript =
        "data: "
        "{\"id\":\"s\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
        "\"content\":\"Let me \"}}]}\n\n"
        "data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look.\"}}]}\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":"
        "\"c0\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]}}]}\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
        "\"function\":{\"arguments\":\"{\\\"pa\"}}]}}]}\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":"
        "\"c1\",\"function\":{\"name\":\"list\",\"arguments\":\"{}\"}}]}}]}\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
        "\"function\":{\"arguments\":\"th\\\":\\\"a\\\"}\"}}]}}]}\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"
        "\n\n"
        "data: "
        "{\"id\":\"s\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n\n"
        "data: [DONE]\n\n";
    auto whole = testing::assemble(openai::adapter(), transcript, 0);
    BOOST_TEST_REQUIRE(whole.ok, whole.error);
    BOOST_TEST(
        testing::describe(whole.result) ==
        R"(finish=tool_calls text=Let me look. call{c0,read,{"path":"a"},{}} call{c1,list,{},{}} usage=5/6)");
    for (std::size_t cut = 1; cut < transcript.size(); ++cut) {
        auto split = testing::assemble(openai::adapter(), transcript, cut);
        BOOST_TEST_REQUIRE(split.ok, split.error);
        BOOST_TEST_REQUIRE(testing::describe(split.result) == testing::describe(whole.result));
    }
    // Without [DONE] the stream is incomplete.
    auto cut_short =
        testing::assemble(openai::adapter(), transcript.substr(0, transcript.size() - 14), 0);
    BOOST_TEST(!cut_short.ok);
}

BOOST_AUTO_TEST_CASE(chunks_written_for_the_client_read_back_as_the_same_reply) {
    std::vector<stream_delta> deltas(6);
    deltas[0].what = stream_delta::kind::started;
    deltas[1].what = stream_delta::kind::text;
    deltas[1].text = "Hi ";
    deltas[2].what = stream_delta::kind::call_started;
    deltas[2].id = "gemini_1";
    deltas[2].name = "read";
    deltas[2].provider_meta = {{"thought_signature", "S"}};
    deltas[3].what = stream_delta::kind::call_arguments;
    deltas[3].text = R"({"path":)";
    deltas[4].what = stream_delta::kind::call_arguments;
    deltas[4].text = R"("x"})";
    deltas[5].what = stream_delta::kind::finished;
    deltas[5].why = finish::tool_calls;
    deltas[5].used = {true, 7, 8};
    openai::chunk_writer writer("chatcmpl-1", "gem", 1, true);
    std::string frames;
    for (const auto& d : deltas) writer.frames(d, frames);
    BOOST_TEST(frames.find("\"role\":\"assistant\"") != std::string::npos);
    BOOST_TEST(frames.find("\"extra_content\":{\"google\":{\"thought_signature\":\"S\"}}") !=
               std::string::npos);
    BOOST_TEST(frames.substr(frames.size() - 14) == "data: [DONE]\n\n");
    auto back = testing::assemble(openai::adapter(), frames, 0);
    BOOST_TEST_REQUIRE(back.ok, back.error);
    // The client sees the id with the signature carried in it (cgs1-: "S" is "Uw").
    BOOST_TEST(
        testing::describe(back.result) ==
        R"(finish=tool_calls text=Hi  call{cgs1-2-Uw2f4abc9b-gemini_1,read,{"path":"x"},{"thought_signature":"S"}} usage=7/8)");
}

BOOST_AUTO_TEST_CASE(a_signature_travels_in_the_call_id_and_is_checked_when_it_comes_back) {
    json::object meta{{"thought_signature", "CiQB+/sig==\u00e9"}};
    auto id = openai::id_with_state("gemini_7", meta);
    BOOST_TEST(id.starts_with("cgs1-"));
    // Only what every client keeps in an id: letters, digits, '-' and '_'.
    BOOST_TEST(
        id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") ==
            std::string::npos,
        id);
    json::object carried;
    BOOST_TEST(openai::id_without_state(id, carried) == "gemini_7");
    BOOST_TEST(carried.at("thought_signature").as_string() == "CiQB+/sig==\u00e9");
    // Mangled (one character changed), or not ours: the id comes back as it is, carrying nothing.
    auto mangled = id;
    mangled[8] = mangled[8] == 'A' ? 'B' : 'A';
    json::object none;
    BOOST_TEST(openai::id_without_state(mangled, none) == mangled);
    BOOST_TEST(openai::id_without_state("call_abc", none) == "call_abc");
    BOOST_TEST(openai::id_without_state("cgs1-99999-x", none) == "cgs1-99999-x");
    BOOST_TEST(none.empty());
    // Without a signature, or one too long to carry: the id alone.
    BOOST_TEST(openai::id_with_state("call_1", {}) == "call_1");
    json::object huge{{"thought_signature", std::string(4000, 'x')}};
    BOOST_TEST(openai::id_with_state("call_2", huge) == "call_2");
}

BOOST_AUTO_TEST_CASE(a_whole_reply_is_a_chat_completion_with_tool_calls) {
    reply r;
    r.content.parts.push_back(part::of_call({"c", "f", {{"a", 1}}, {}}));
    r.why = finish::tool_calls;
    r.used = {true, 1, 2};
    auto body = json::parse(openai::chat_completion(r, "chatcmpl-x", "m", 5)).as_object();
    auto& message = body["choices"].as_array()[0].as_object()["message"].as_object();
    BOOST_TEST(message["content"].is_null());
    BOOST_TEST(
        message["tool_calls"].as_array()[0].as_object()["function"].as_object()["arguments"] ==
        json::value(R"({"a":1})"));
    BOOST_TEST(body["choices"].as_array()[0].as_object()["finish_reason"] ==
               json::value("tool_calls"));
    BOOST_TEST(body["usage"].as_object()["total_tokens"] == json::value(3));
}

BOOST_AUTO_TEST_CASE(a_call_index_out_of_order_is_a_broken_stream_not_an_allocation) {
    // Found by the providers fuzz target: an index of -8 (or 10^9) once sized a vector.
    for (std::string index : {"-8", "1000000000", "2"}) {
        auto transcript =
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":" + index +
            ",\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n"
            "data: [DONE]\n\n";
        auto r = testing::assemble(openai::adapter(), transcript, 0);
        BOOST_TEST(!r.ok, index);
        BOOST_TEST(r.error.find("index") != std::string::npos, r.error);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_openai_test
