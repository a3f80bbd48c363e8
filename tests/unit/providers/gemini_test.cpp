#include "gateway/providers/gemini.hpp"

#include "gateway/providers/openai.hpp"
#include "tests/support/schema_dag.hpp"
#include "tests/unit/providers/stream_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <boost/test/unit_test.hpp>

namespace providers_gemini_test {

using namespace gateway::providers;
namespace json = boost::json;

namespace {

json::object wire(const request& r) {
    std::string error;
    auto body = gemini::adapter().encode(r, error);
    BOOST_TEST_REQUIRE(error.empty(), error);
    return json::parse(body).as_object();
}

constexpr std::string_view calls_reply = R"({"responseId":"resp-1","modelVersion":"gemini-3",
  "candidates":[{"index":0,"finishReason":"STOP","content":{"role":"model","parts":[
    {"text":"Checking."},
    {"functionCall":{"name":"read","args":{"path":"a"}},"thoughtSignature":"c2lnLTE="},
    {"functionCall":{"name":"list","args":{}}}]}}],
  "usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":4,"thoughtsTokenCount":2}})";

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_gemini)

BOOST_AUTO_TEST_CASE(id_less_calls_get_stable_ids_and_the_signature_rides_along) {
    reply a, b;
    std::string error;
    BOOST_TEST_REQUIRE(gemini::adapter().decode(calls_reply, a, error), error);
    BOOST_TEST_REQUIRE(gemini::adapter().decode(calls_reply, b, error), error);
    auto calls = a.content.calls();
    BOOST_TEST_REQUIRE(calls.size() == 2u);
    BOOST_TEST(calls[0]->id.rfind("gemini_", 0) == 0u);
    BOOST_TEST(calls[0]->id != calls[1]->id);
    BOOST_TEST(testing::describe(a) == testing::describe(b));  // stable
    BOOST_TEST((a.why == finish::tool_calls));
    BOOST_TEST(a.used.input == 9);
    BOOST_TEST(a.used.output == 6);
    BOOST_TEST(json::serialize(calls[0]->provider_meta) == R"({"thought_signature":"c2lnLTE="})");
}

BOOST_AUTO_TEST_CASE(the_next_turn_echoes_signatures_and_maps_results_by_name) {
    reply r;
    std::string error;
    BOOST_TEST_REQUIRE(gemini::adapter().decode(calls_reply, r, error), error);
    auto calls = r.content.calls();
    request next;
    next.model = "gemini-3";
    next.system = "S";
    next.messages.push_back({role::user, {part::of_text("go")}});
    next.messages.push_back(r.content);
    next.messages.push_back({role::tool, {part::of_result({calls[0]->id, "read", "A", false})}});
    next.messages.push_back({role::tool, {part::of_result({calls[1]->id, "list", "no", true})}});
    auto w = wire(next);
    BOOST_TEST(json::serialize(w["systemInstruction"]) == R"({"parts":[{"text":"S"}]})");
    auto& contents = w["contents"].as_array();
    BOOST_TEST_REQUIRE(contents.size() == 3u);
    // Synthesized ids never reach Gemini; the signature goes back verbatim.
    BOOST_TEST(
        json::serialize(contents[1]) ==
        R"({"role":"model","parts":[{"text":"Checking."},)"
        R"({"functionCall":{"name":"read","args":{"path":"a"}},"thoughtSignature":"c2lnLTE="},)"
        R"({"functionCall":{"name":"list","args":{}}}]})");
    // Both responses in one user turn, each an object.
    BOOST_TEST(
        json::serialize(contents[2]) ==
        R"({"role":"user","parts":[{"functionResponse":{"name":"read","response":{"content":"A"}}},)"
        R"({"functionResponse":{"name":"list","response":{"error":"no"}}}]})");
}

BOOST_AUTO_TEST_CASE(an_id_gemini_gave_is_kept_and_echoed) {
    reply r;
    std::string error;
    BOOST_TEST_REQUIRE(gemini::adapter().decode(
        R"({"candidates":[{"finishReason":"STOP","content":{"parts":[{"functionCall":{"id":"fc-9","name":"f","args":{}}}]}}]})",
        r, error));
    BOOST_TEST(r.content.calls()[0]->id == "fc-9");
    request next;
    next.model = "g";
    next.messages = {{role::user, {part::of_text("x")}},
                     r.content,
                     {role::tool, {part::of_result({"fc-9", "f", "ok", false})}}};
    auto w = wire(next);
    BOOST_TEST(
        json::serialize(w["contents"].as_array()[2]) ==
        R"({"role":"user","parts":[{"functionResponse":{"name":"f","response":{"content":"ok"},"id":"fc-9"}}]})");
}

BOOST_AUTO_TEST_CASE(schemas_are_reduced_to_what_gemini_reads) {
    auto schema = json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema",
      "type":"object","additionalProperties":false,"required":["p"],
      "properties":{"p":{"type":["string","null"],"description":"path"},
                    "mode":{"const":"fast"},
                    "item":{"$ref":"#/$defs/item"}},
      "$defs":{"item":{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer"}}}}})")
                      .as_object();
    BOOST_TEST(
        json::serialize(gemini::schema_for_gemini(schema).schema) ==
        R"({"type":"object","required":["p"],"properties":{"p":{"type":"string","nullable":true,"description":"path"},)"
        R"("mode":{"enum":["fast"]},"item":{"type":"object","properties":{"n":{"type":"integer"}}}}})");
}

// A few hundred bytes whose definitions refer to each other k times expand to about k^depth
// nodes: the reduction stops at its node budget instead of eating the worker's memory.
BOOST_AUTO_TEST_CASE(schema_expansion_is_bounded_by_size_and_recursion_is_refused) {
    auto defs = gateway::testing::schema_dag_defs();
    json::object wide{{"$ref", "#/$defs/d0"}, {"$defs", defs}};
    BOOST_TEST_REQUIRE(json::serialize(wide).size() < 2100u);  // 8^8 = 16.7 M nodes inlined
    auto reduced = gemini::schema_for_gemini(wide);
    BOOST_TEST(reduced.error.find("more than 50000 nodes") != std::string::npos, reduced.error);
    BOOST_TEST(reduced.schema.empty());

    // Two levels of the same fan-out are small enough and are inlined whole.
    json::object shallow{{"$ref", "#/$defs/d6"}, {"$defs", defs}};
    auto inlined = gemini::schema_for_gemini(shallow);
    BOOST_TEST(inlined.error.empty(), inlined.error);
    BOOST_TEST(json::serialize(inlined.schema).find("$ref") == std::string::npos);

    auto recursive = json::parse(R"({"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},
      "$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}})")
                         .as_object();
    auto refused = gemini::schema_for_gemini(recursive);
    BOOST_TEST(refused.error.find("`#/$defs/node` from inside itself") != std::string::npos,
               refused.error);

    // The encoder refuses the request and names the tool.
    request r;
    r.model = "gemini-3";
    r.messages.push_back(message{role::user, {part::of_text("hi")}});
    r.tools.push_back(tool_spec{"walk", "", recursive});
    std::string error;
    BOOST_TEST(gemini::adapter().encode(r, error).empty());
    BOOST_TEST(error.find("tool `walk`") != std::string::npos, error);
}

// The bound is the request's, not each tool's: 250 tools of 1.3 KB whose `$defs` form a DAG,
// each within what one schema may grow, made a 127 MB body. What inlining adds to all the tools
// together is bounded, and a request past it is refused; schemas without `$ref`s never are.
BOOST_AUTO_TEST_CASE(schema_expansion_is_bounded_across_all_the_tools_of_a_request) {
    auto defs = gateway::testing::schema_dag_defs();
    // 8^4 leaves: about 20,000 nodes and 150 KB once inlined.
    json::object fanned{
        {"type", "object"}, {"properties", {{"x", {{"$ref", "#/$defs/d4"}}}}}, {"$defs", defs}};
    BOOST_TEST_REQUIRE(gemini::schema_for_gemini(fanned).error.empty());

    request r;
    r.model = "gemini-3";
    r.messages.push_back(message{role::user, {part::of_text("hi")}});
    r.tools.push_back(tool_spec{"t0", "", fanned});
    std::string error;
    auto one = gemini::adapter().encode(r, error);
    BOOST_TEST(error.empty(), error);
    BOOST_TEST(one.size() > 100'000u);
    BOOST_TEST(one.find("$ref") == std::string::npos);

    for (int i = 1; i < 250; ++i) r.tools.push_back(tool_spec{"t" + std::to_string(i), "", fanned});
    error.clear();
    BOOST_TEST(gemini::adapter().encode(r, error).empty());
    BOOST_TEST(error.find("once their `$ref`s are inlined") != std::string::npos, error);
    BOOST_TEST(error.find("the parameters of tool `t") != std::string::npos, error);

    // As many plain schemas as a body holds are no expansion: kept whatever their size.
    json::object plain{{"type", "object"}, {"properties", defs.at("d7").at("properties")}};
    r.tools.clear();
    for (int i = 0; i < 5'000; ++i)
        r.tools.push_back(tool_spec{"p" + std::to_string(i), "", plain});
    error.clear();
    BOOST_TEST(!gemini::adapter().encode(r, error).empty());
    BOOST_TEST(error.empty(), error);
}

// A client's `max_tokens: 1e300` reached Gemini as -9223372036854775808 (an undefined
// conversion); an upstream's usage of 1e300 another. Clients are refused by name (ingress tests);
// an upstream's figure that is no count counts 0.
BOOST_AUTO_TEST_CASE(usage_figures_out_of_range_count_nothing) {
    for (std::string bad : {"1e300", "1e309", "-5", "18446744073709551615"}) {
        auto body = R"({"candidates":[{"finishReason":"STOP","content":{"parts":[{"text":"a"}]}}],
          "usageMetadata":{"promptTokenCount":)" +
                    bad + R"(,"candidatesTokenCount":)" + bad + R"(,"thoughtsTokenCount":2}})";
        for (auto p : {provider::gemini}) {
            reply r;
            std::string error;
            BOOST_TEST_REQUIRE(adapter_for(p).decode(body, r, error), error);
            BOOST_TEST(r.used.input == 0, bad);
            BOOST_TEST(r.used.output == 2, bad);
            BOOST_TEST(r.used.unreadable, bad);  // logged by whoever settles it
        }
    }
    for (std::string bad : {"1e300", "-1e300", "9223372036854775807"}) {
        reply r;
        std::string error;
        auto openai_body = R"({"id":"c","choices":[{"message":{"role":"assistant","content":"a"},
          "finish_reason":"stop"}],"usage":{"prompt_tokens":)" +
                           bad + R"(,"completion_tokens":3}})";
        BOOST_TEST_REQUIRE(adapter_for(provider::openai).decode(openai_body, r, error), error);
        BOOST_TEST(r.used.input == 0, bad);
        BOOST_TEST(r.used.output == 3, bad);
        BOOST_TEST(r.used.unreadable, bad);
        auto anthropic_body = R"({"id":"m","type":"message","role":"assistant","model":"c",
          "content":[{"type":"text","text":"a"}],"stop_reason":"end_turn",
          "usage":{"input_tokens":)" +
                              bad + R"(,"cache_read_input_tokens":)" + bad +
                              R"(,"cache_creation_input_tokens":)" + bad +
                              R"(,"output_tokens":5}})";
        BOOST_TEST_REQUIRE(adapter_for(provider::anthropic).decode(anthropic_body, r, error),
                           error);
        BOOST_TEST(r.used.input == 0, bad);
        BOOST_TEST(r.used.output == 5, bad);
        BOOST_TEST(r.used.unreadable, bad);
    }
    reply fine;
    std::string error;
    BOOST_TEST_REQUIRE(adapter_for(provider::openai)
                           .decode(R"({"id":"c","choices":[{"message":{"role":"assistant",
          "content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3}})",
                                   fine, error),
                       error);
    BOOST_TEST(!fine.used.unreadable);
}

// The model name goes into the request target: only a plain name is sent, and the target is
// built encoded even so.
BOOST_AUTO_TEST_CASE(model_names_are_checked_before_they_reach_the_target) {
    request r;
    r.messages.push_back(message{role::user, {part::of_text("hi")}});
    for (std::string bad : {"m:generateContent HTTP/1.1\r\nHost: x\r\n\r\nGET /", "../files",
                            "a/../../tunedModels", "", "..", "m?key=1", "m#x", "m%2F"}) {
        r.model = bad;
        std::string error;
        BOOST_TEST(gemini::adapter().encode(r, error).empty(), bad);
        BOOST_TEST(error.find("is not a Gemini model name") != std::string::npos, error);
        auto target = gemini::adapter().target(r);
        BOOST_TEST_REQUIRE(target.starts_with("/models/"));
        BOOST_TEST(target.ends_with(":generateContent"), target);
        auto segment = target.substr(8, target.size() - 8 - 16);
        BOOST_TEST(segment.find_first_of("\r\n /?#") == std::string::npos, target);
    }
    r.model = "gemini-2.5-pro";
    r.stream = true;
    BOOST_TEST(gemini::adapter().target(r) ==
               "/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
}

BOOST_AUTO_TEST_CASE(tools_choice_and_generation_settings) {
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(openai::parse_chat_request(
        R"({"model":"g","max_tokens":5,"temperature":0.2,"top_p":0.9,"stop":"Z","tool_choice":"required",
            "messages":[{"role":"user","content":"x"}],
            "tools":[{"type":"function","function":{"name":"none_args","parameters":{"type":"object","properties":{}}}},
                     {"type":"function","function":{"name":"one","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}]})",
        r, f));
    auto w = wire(r);
    BOOST_TEST(
        json::serialize(w["tools"]) ==
        R"([{"functionDeclarations":[{"name":"none_args"},{"name":"one","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}]}])");
    BOOST_TEST(json::serialize(w["toolConfig"]) == R"({"functionCallingConfig":{"mode":"ANY"}})");
    BOOST_TEST(json::serialize(w["generationConfig"]) ==
               R"({"maxOutputTokens":5,"temperature":2E-1,"topP":9E-1,"stopSequences":["Z"]})");
    r.stream = true;
    BOOST_TEST(gemini::adapter().target(r) == "/models/g:streamGenerateContent?alt=sse");
    r.stream = false;
    BOOST_TEST(gemini::adapter().target(r) == "/models/g:generateContent");
    // Images go inline only.
    r.messages[0].parts.push_back(part::of_image("https://x/y.png"));
    std::string error;
    BOOST_TEST(gemini::adapter().encode(r, error).empty());
    BOOST_TEST(!error.empty());
}

BOOST_AUTO_TEST_CASE(a_json_format_asks_for_json_under_its_schema_on_every_dialect) {
    request r;
    r.model = "g";
    r.messages.push_back(message::of_text(role::user, "x"));
    json::object schema{{"type", "object"}, {"properties", {{"answer", {{"type", "string"}}}}}};
    r.format = json_format{"agent_reply", schema, false};
    auto w = wire(r);
    BOOST_TEST(w.at("generationConfig").at("responseMimeType").as_string() == "application/json");
    BOOST_TEST(w.at("generationConfig").at("responseJsonSchema") == schema);
    std::string error;
    auto o = json::parse(openai::adapter().encode(r, error));
    BOOST_TEST(o.at("response_format").at("type").as_string() == "json_schema");
    BOOST_TEST(o.at("response_format").at("json_schema").at("name").as_string() == "agent_reply");
    BOOST_TEST(o.at("response_format").at("json_schema").at("schema") == schema);
    // Anthropic has no such field: the request goes without it.
    auto a = json::parse(adapter_for(provider::anthropic).encode(r, error)).as_object();
    BOOST_TEST(error.empty());
    BOOST_TEST(!a.contains("response_format"));
    BOOST_TEST(!a.contains("output_format"));
}

BOOST_AUTO_TEST_CASE(the_stream_assembles_at_every_split_and_matches_the_whole_answer) {
    std::string transcript =
        "data: "
        "{\"responseId\":\"resp-1\",\"modelVersion\":\"gemini-3\",\"candidates\":[{\"content\":{"
        "\"role\":\"model\",\"parts\":[{\"text\":\"Check\"}]}}]}\r\n\r\n"
        "data: "
        "{\"responseId\":\"resp-1\",\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{"
        "\"text\":\"ing.\"}]}}]}\r\n\r\n"
        "data: "
        "{\"responseId\":\"resp-1\",\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{"
        "\"functionCall\":{\"name\":\"read\",\"args\":{\"path\":\"a\"}},\"thoughtSignature\":"
        "\"c2lnLTE=\"},"
        "{\"functionCall\":{\"name\":\"list\",\"args\":{}}}]},\"finishReason\":\"STOP\"}],"
        "\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":4,"
        "\"thoughtsTokenCount\":2}}\r\n\r\n";
    auto whole = testing::assemble(gemini::adapter(), transcript, 0);
    BOOST_TEST_REQUIRE(whole.ok, whole.error);
    reply direct;
    std::string error;
    BOOST_TEST_REQUIRE(gemini::adapter().decode(calls_reply, direct, error));
    BOOST_TEST(testing::describe(whole.result) == testing::describe(direct));
    for (std::size_t cut = 1; cut < transcript.size(); ++cut) {
        auto split = testing::assemble(gemini::adapter(), transcript, cut);
        BOOST_TEST_REQUIRE(split.ok, split.error);
        BOOST_TEST_REQUIRE(testing::describe(split.result) == testing::describe(whole.result));
    }
    // A stream that ends before any finishReason is incomplete.
    auto cut_short = testing::assemble(gemini::adapter(), transcript.substr(0, 200), 0);
    BOOST_TEST(!cut_short.ok);
}

BOOST_AUTO_TEST_CASE(errors_keep_the_providers_message) {
    auto e = gemini::adapter().decode_error(
        400,
        R"({"error":{"code":400,"message":"Function call is missing a thought_signature","status":"INVALID_ARGUMENT"}})");
    BOOST_TEST(e.status == 400u);
    BOOST_TEST(e.type == "invalid_request_error");
    BOOST_TEST(e.message == "Function call is missing a thought_signature");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_gemini_test
