#include "gateway/providers/bedrock.hpp"

#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/providers/openai.hpp"
#include "gateway/upstream/sigv4.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/unit/providers/stream_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

namespace providers_bedrock_test {

using namespace gateway::providers;
namespace json = boost::json;
namespace fakes = gateway::testing::fake_providers;
namespace es = gateway::providers::aws_eventstream;

namespace {

const adapter& converse = bedrock::converse_adapter();

request from_openai(std::string_view body) {
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(openai::parse_chat_request(body, r, f), f.param + ": " + f.message);
    return r;
}

// A request as the fake Bedrock receives it, with a Bedrock API key.
gateway::testing::received_request received(const std::string& body) {
    gateway::testing::received_request r;
    r.method = "POST";
    r.target = "/model/m/converse";
    r.body = body;
    r.headers = {{"Authorization", "Bearer bedrock-api-key"}};
    return r;
}

// The Converse body for `r`, checked by the strict fake: it must take it.
json::object wire(const request& r) {
    std::string error;
    auto body = converse.encode(r, error);
    BOOST_TEST_REQUIRE(error.empty(), error);
    auto refused = fakes::converse_refusal(received(body), json::parse(body));
    BOOST_TEST_REQUIRE(!refused, (refused ? refused->body : "") + " for " + body);
    return json::parse(body).as_object();
}

// What the fake refuses `body` with ("" when it takes it).
std::string refusal(const std::string& body) {
    auto refused = fakes::converse_refusal(received(body), json::parse(body));
    return refused ? refused->body : "";
}

// One ConverseStream event as Bedrock frames it.
std::string event(std::string_view type, std::string_view payload) {
    es::message m;
    m.headers = {es::header::of_string(":event-type", std::string(type)),
                 es::header::of_string(":content-type", "application/json"),
                 es::header::of_string(":message-type", "event")};
    m.payload = std::string(payload);
    return es::encode(m);
}

// What a stream decoder says of one event.
provider_error fed(std::string_view type, std::string_view data) {
    auto d = converse.decoder();
    std::vector<stream_delta> out;
    provider_error error;
    gateway::sse::event e;
    e.type = std::string(type);
    e.data = std::string(data);
    BOOST_TEST_REQUIRE(!d->feed(e, out, error));
    return error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_bedrock)

// The trap other gateways fell into: the id is encoded once on the wire (the signer encodes the
// path again for itself).
BOOST_AUTO_TEST_CASE(the_target_holds_the_model_id_encoded_once) {
    request r;
    r.model = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    BOOST_TEST(converse.target(r) == "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse");
    r.stream = true;
    BOOST_TEST(converse.target(r) ==
               "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream");
    r.model = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v1:0";
    BOOST_TEST(converse.target(r) ==
               "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus."
               "anthropic.claude-v1%3A0/converse-stream");
    // Neither a dot segment nor a line break reaches the target.
    r.model = "..";
    BOOST_TEST(converse.target(r) == "/model/%2E%2E/converse-stream");
    r.model = "a b\r\n/../x";
    BOOST_TEST(converse.target(r) == "/model/a%20b%0D%0A%2F..%2Fx/converse-stream");
    BOOST_TEST((converse.framing() == stream_framing::aws_eventstream));
    BOOST_TEST(converse.auth_fields("k") == "Authorization: Bearer k\r\n");
    r.model.clear();
    std::string error;
    BOOST_TEST(converse.encode(r, error).empty());
    BOOST_TEST(error == "Bedrock needs a model id");
}

BOOST_AUTO_TEST_CASE(text_system_and_inference_config) {
    auto w = wire(from_openai(R"({"model":"m","max_tokens":300,"temperature":0.5,"top_p":0.9,
      "stop":["END","STOP"],"messages":[{"role":"system","content":"Be brief."},
      {"role":"user","content":"Hi"},{"role":"assistant","content":""},
      {"role":"user","content":[{"type":"text","text":"there"},{"type":"text","text":""}]}]})"));
    BOOST_TEST(json::serialize(w) ==
               R"({"messages":[{"role":"user","content":[{"text":"Hi"},{"text":"there"}]}],)"
               R"("system":[{"text":"Be brief."}],"inferenceConfig":{"maxTokens":300,)"
               R"("temperature":5E-1,"topP":9E-1,"stopSequences":["END","STOP"]}})");
    // Nothing asked: no inferenceConfig, no system, no toolConfig.
    auto plain = wire(from_openai(R"({"model":"m","messages":[{"role":"user","content":"Hi"}]})"));
    BOOST_TEST(json::serialize(plain) ==
               R"({"messages":[{"role":"user","content":[{"text":"Hi"}]}]})");
}

BOOST_AUTO_TEST_CASE(images_travel_as_bytes_of_a_format_bedrock_takes) {
    auto w = wire(from_openai(R"({"model":"m","messages":[{"role":"user","content":[
        {"type":"text","text":"Compare"},
        {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
        {"type":"image_url","image_url":{"url":"data:image/jpg;base64,QUJD"}}]}]})"));
    BOOST_TEST(json::serialize(w["messages"].as_array()[0].as_object()["content"]) ==
               R"([{"text":"Compare"},)"
               R"({"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}},)"
               R"({"image":{"format":"jpeg","source":{"bytes":"QUJD"}}}])");
    auto refused = [](std::string url, std::string_view why) {
        auto r = from_openai(R"({"model":"m","messages":[{"role":"user","content":[
            {"type":"image_url","image_url":{"url":")" +
                             url + R"("}}]}]})");
        std::string error;
        BOOST_TEST(converse.encode(r, error).empty());
        BOOST_TEST(error.find(why) != std::string::npos, error);
    };
    refused("https://example.com/cat.png", "send the image as a data: URL");
    refused("data:image/png,plain", "send the image as a data: URL");
    refused("data:image/svg+xml;base64,PHN2Zz4=", "not `image/svg+xml`");
    // The fake refuses what Bedrock refuses.
    BOOST_TEST(refusal(R"({"messages":[{"role":"user","content":[{"image":{"format":"bmp",
        "source":{"bytes":"QUJD"}}}]}]})")
                   .find("png, jpeg, gif or webp") != std::string::npos);
    BOOST_TEST(refusal(R"({"messages":[{"role":"user","content":[{"image":{"format":"png",
        "source":{"bytes":"not base64!"}}}]}]})")
                   .find("must be base64") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tools_and_each_tool_choice) {
    std::string tools = R"("tools":[
        {"type":"function","function":{"name":"read","description":"Reads a file",
          "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
        {"type":"function","function":{"name":"now"}}])";
    auto with = [&](std::string choice) {
        return wire(from_openai(R"({"model":"m","messages":[{"role":"user","content":"go"}],)" +
                                tools + choice + "}"));
    };
    auto automatic = with("");
    BOOST_TEST(json::serialize(automatic["toolConfig"]) ==
               R"({"tools":[{"toolSpec":{"name":"read","inputSchema":{"json":{"type":"object",)"
               R"("properties":{"path":{"type":"string"}},"required":["path"]}},)"
               R"("description":"Reads a file"}},)"
               R"({"toolSpec":{"name":"now","inputSchema":{"json":{"type":"object",)"
               R"("properties":{}}}}}]})");
    BOOST_TEST(json::serialize(with(R"(,"tool_choice":"auto")")["toolConfig"]) ==
               json::serialize(automatic["toolConfig"]));
    BOOST_TEST(json::serialize(with(R"(,"tool_choice":"required")")["toolConfig"].at(
                   "toolChoice")) == R"({"any":{}})");
    BOOST_TEST(
        json::serialize(
            with(R"(,"tool_choice":{"type":"function","function":{"name":"now"}})")["toolConfig"]
                .at("toolChoice")) == R"({"tool":{"name":"now"}})");
    // Converse has no `none`: the tools stay home.
    BOOST_TEST(!with(R"(,"tool_choice":"none")").contains("toolConfig"));
    // A choice naming no declared tool is Bedrock's refusal, as the fake shows.
    BOOST_TEST(refusal(R"({"messages":[{"role":"user","content":[{"text":"go"}]}],
        "toolConfig":{"tools":[{"toolSpec":{"name":"a","inputSchema":{"json":{}}}}],
        "toolChoice":{"tool":{"name":"b"}}}})")
                   .find("`b` is not one of the tools") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_multi_turn_tool_round_trip_keeps_bedrocks_rules) {
    auto r = from_openai(R"({"model":"m","messages":[
      {"role":"user","content":"Weather in Paris and Rome?"},
      {"role":"assistant","content":"Looking.","tool_calls":[
        {"id":"tooluse_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
        {"id":"tooluse_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},
      {"role":"tool","tool_call_id":"tooluse_1","content":"18C"},
      {"role":"tool","tool_call_id":"tooluse_2","content":""},
      {"role":"user","content":"Thanks. And Oslo?"},
      {"role":"assistant","tool_calls":[
        {"id":"tooluse_3","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},
      {"role":"tool","tool_call_id":"tooluse_3","content":"no such city"}],
      "tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}]})");
    r.messages.back().parts[0].result.is_error = true;
    auto w = wire(r);
    auto& messages = w["messages"].as_array();
    BOOST_TEST_REQUIRE(messages.size() == 5u);
    BOOST_TEST(
        json::serialize(messages[1]) ==
        R"({"role":"assistant","content":[{"text":"Looking."},)"
        R"({"toolUse":{"toolUseId":"tooluse_1","name":"weather","input":{"city":"Paris"}}},)"
        R"({"toolUse":{"toolUseId":"tooluse_2","name":"weather","input":{"city":"Rome"}}}]})");
    // Both results first, then the user's text, in one user turn; an empty result said in words.
    BOOST_TEST(json::serialize(messages[2]) ==
               R"({"role":"user","content":[)"
               R"({"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"18C"}]}},)"
               R"x({"toolResult":{"toolUseId":"tooluse_2","content":[{"text":"(no output)"}]}},)x"
               R"({"text":"Thanks. And Oslo?"}]})");
    BOOST_TEST(json::serialize(messages[4]) ==
               R"({"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_3",)"
               R"("content":[{"text":"no such city"}],"status":"error"}}]})");
}

BOOST_AUTO_TEST_CASE(tools_are_declared_when_the_history_holds_tool_blocks) {
    request r;
    r.model = "m";
    r.choice = tool_choice::none;  // and even when none is asked: Bedrock needs them declared
    r.messages.push_back({role::user, {part::of_text("go")}});
    r.messages.push_back({role::assistant, {part::of_call({"t1", "read", {}, {}})}});
    r.messages.push_back({role::tool, {part::of_result({"t1", "read", "A", false})}});
    auto w = wire(r);
    BOOST_TEST(json::serialize(w["toolConfig"]) ==
               R"({"tools":[{"toolSpec":{"name":"read","inputSchema":{"json":{"type":"object",)"
               R"("properties":{}}}}}]})");
}

// The fake refuses the broken conversations Bedrock refuses, so an encoder that wrote one fails.
BOOST_AUTO_TEST_CASE(the_fake_refuses_what_bedrock_refuses) {
    auto says = [](std::string body, std::string_view why) {
        auto said = refusal(body);
        BOOST_TEST(said.find(why) != std::string::npos, said << " for " << body);
    };
    std::string tools = R"("toolConfig":{"tools":[{"toolSpec":{"name":"read",
        "inputSchema":{"json":{"type":"object"}}}}]}})";
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]}],"stream":true})",
         "extraneous key [stream]");
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]}],
        "inferenceConfig":{"max_tokens":5}})",
         "extraneous key [max_tokens]");
    says(R"({"messages":[{"role":"user","content":[{"text":""}]}]})",
         "ContentBlock object at messages.0.content.0 is blank");
    says(R"({"messages":[{"role":"assistant","content":[{"text":"hi"}]}]})",
         "must start with a user message");
    says(R"({"messages":[{"role":"user","content":[{"text":"a"}]},
        {"role":"user","content":[{"text":"b"}]}]})",
         "must alternate");
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"read","input":{}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"t2","content":[{"text":"x"}]}}]}],)" +
             tools,
         "has toolUseId t2, which no toolUse block of the previous turn has");
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"read","input":{}}}]},
        {"role":"user","content":[{"text":"no result"}]}],)" +
             tools,
         "Expected toolResult blocks at messages.2.content for the following Ids: t1");
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"read","input":{}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":""}]}}]}],)" +
             tools,
         "ToolResultContentBlock object at messages.2.content.0.toolResult.content.0 is blank");
    says(R"({"messages":[{"role":"user","content":[{"text":"go"}]},
        {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"read","input":{}}}]},
        {"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"x"}]}}]}]})",
         "toolConfig field must be defined");
    // The credential: a key or a SigV4 Authorization, its signature verified with the fake's keys.
    auto r = received(R"({"messages":[{"role":"user","content":[{"text":"go"}]}]})");
    r.headers.clear();
    BOOST_TEST(fakes::converse_credential_refusal(r)->status == 403u);
    r.headers = {{"Authorization",
                  "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/bedrock/"
                  "aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"}};
    BOOST_TEST(fakes::converse_credential_refusal(r)->extra_headers.find(
                   "IncompleteSignatureException") != std::string::npos);
    r.headers.push_back({"X-Amz-Date", "20250101T000000Z"});
    auto refusal = [&](std::string_view type) {
        auto refused = fakes::converse_credential_refusal(r);
        return refused && refused->status == 403u &&
               refused->extra_headers.find(type) != std::string::npos;
    };
    BOOST_TEST(refusal("UnrecognizedClientException"));  // a key it does not know
    // Signed as the gateway signs: verified; a byte of the body changed, or another secret: not.
    namespace aws = gateway::upstream::aws;
    auto sign_with = [&](std::string secret, std::string token) {
        auto hash = aws::payload_hash(r.body);
        aws::request q{"POST", "/model/m/converse", "", {{"host", "bedrock.test"}}, hash};
        auto key_id = token.empty() ? fakes::fake_aws_key_id : fakes::fake_aws_temporary_key_id;
        auto s = aws::sign(q, {std::string(key_id), std::move(secret), token, {}}, "bedrock",
                           "us-east-1", std::chrono::system_clock::now());
        r.headers = {{"Host", "bedrock.test"},
                     {"Authorization", s.authorization},
                     {"X-Amz-Date", s.amz_date}};
        if (!token.empty()) r.headers.push_back({"X-Amz-Security-Token", token});
    };
    sign_with(std::string(fakes::fake_aws_secret), "");
    BOOST_TEST(!fakes::converse_credential_refusal(r));
    r.body += " ";
    BOOST_TEST(refusal("InvalidSignatureException"));
    sign_with("another secret", "");
    BOOST_TEST(refusal("InvalidSignatureException"));
    sign_with(std::string(fakes::fake_aws_secret), "token-1");
    BOOST_TEST(!fakes::converse_credential_refusal(r));
    sign_with(std::string(fakes::fake_aws_secret), std::string(fakes::fake_aws_expired_token));
    BOOST_TEST(refusal("ExpiredTokenException"));
}

BOOST_AUTO_TEST_CASE(a_reply_reads_back_with_reasoning_text_calls_and_cache_usage) {
    reply out;
    std::string error;
    BOOST_TEST_REQUIRE(converse.decode(R"({"output":{"message":{"role":"assistant","content":[
        {"reasoningContent":{"reasoningText":{"text":"Two cities.","signature":"SIG"}}},
        {"text":"Checking "},{"text":"both."},
        {"toolUse":{"toolUseId":"tooluse_a","name":"weather","input":{"city":"Paris"}}},
        {"toolUse":{"toolUseId":"tooluse_b","name":"now","input":{}}}]}},
      "stopReason":"tool_use",
      "usage":{"inputTokens":100,"outputTokens":7,"totalTokens":457,"cacheReadInputTokens":300,
        "cacheWriteInputTokens":50,"cacheDetails":[{"ttl":"1h","inputTokens":20},
        {"ttl":"5m","inputTokens":30}]},
      "metrics":{"latencyMs":321}})",
                                       out, error),
                       error);
    BOOST_TEST(
        testing::describe(out) ==
        R"(finish=tool_calls text=Checking both. call{tooluse_a,weather,{"city":"Paris"},{}})"
        R"( call{tooluse_b,now,{},{}} usage=450/7)");
    BOOST_TEST_REQUIRE((out.content.parts[0].what == part::kind::reasoning));
    BOOST_TEST(out.content.parts[0].text == "Two cities.");
    // inputTokens excludes the cache: added, each part once (pricing::cost's terms).
    BOOST_TEST(out.used.input == 450);
    BOOST_TEST(out.used.cache_read == 300);
    BOOST_TEST(out.used.cache_write == 30);
    BOOST_TEST(out.used.cache_write_1h == 20);
    BOOST_TEST(out.used.output == 7);
    BOOST_TEST(!out.used.unreadable);

    // Without cacheDetails every write is a 5-minute one; without the write total the details
    // are.
    auto usage_of = [](std::string usage) {
        reply r;
        std::string e;
        BOOST_TEST_REQUIRE(converse.decode(R"({"output":{"message":{"role":"assistant",
            "content":[{"text":"a"}]}},"stopReason":"end_turn","usage":)" +
                                               usage + "}",
                                           r, e),
                           e);
        return r.used;
    };
    auto u = usage_of(R"({"inputTokens":5,"outputTokens":1,"cacheWriteInputTokens":40})");
    BOOST_TEST(u.input == 45);
    BOOST_TEST(u.cache_write == 40);
    BOOST_TEST(u.cache_write_1h == 0);
    u = usage_of(
        R"({"inputTokens":5,"outputTokens":1,"cacheDetails":[{"ttl":"1h","inputTokens":8}]})");
    BOOST_TEST(u.input == 13);
    BOOST_TEST(u.cache_write_1h == 8);
    BOOST_TEST(u.cache_write == 0);
    u = usage_of(R"({"inputTokens":1e300,"outputTokens":-3,"cacheDetails":[{"ttl":"1h",
        "inputTokens":1099511627776},{"ttl":"1h","inputTokens":1099511627776}]})");
    BOOST_TEST(u.input == 1099511627776);  // each figure and each sum at most 2^40
    BOOST_TEST(u.output == 0);
    BOOST_TEST(u.unreadable);
}

BOOST_AUTO_TEST_CASE(stop_reasons_map_to_finish_reasons) {
    std::pair<std::string, std::string> cases[] = {{"end_turn", "stop"},
                                                   {"stop_sequence", "stop"},
                                                   {"tool_use", "tool_calls"},
                                                   {"max_tokens", "length"},
                                                   {"model_context_window_exceeded", "length"},
                                                   {"guardrail_intervened", "content_filter"},
                                                   {"content_filtered", "content_filter"},
                                                   {"something_new", "stop"}};
    for (const auto& [reason, finish] : cases) {
        reply out;
        std::string error;
        BOOST_TEST_REQUIRE(
            converse.decode(R"({"output":{"message":{"role":"assistant","content":[]}},)"
                            R"("stopReason":")" +
                                reason + R"("})",
                            out, error),
            error);
        BOOST_TEST(openai_finish_reason(out.why) == finish, reason);
    }
    reply out;
    std::string error;
    for (std::string body : {"", "[]", R"({"output":{}})", R"({"message":"x"})"}) {
        BOOST_TEST(!converse.decode(body, out, error), body);
        BOOST_TEST(error == "the upstream's answer is not a Converse response");
    }
}

// The fake's stream and its JSON answer read the same, however the transport cuts the bytes.
BOOST_AUTO_TEST_CASE(the_fakes_stream_assembles_at_every_split_as_its_json_answer_reads) {
    fakes::turn t{"Hello from Bedrock!", {{"weather", R"({"city":"Paris","days":3})"}}};
    auto whole = fakes::converse_answer(t, false, 7);
    reply expected;
    std::string error;
    BOOST_TEST_REQUIRE(converse.decode(whole.body, expected, error), error);
    auto stream = fakes::converse_answer(t, true, 7);
    BOOST_TEST(stream.content_type == "application/vnd.amazon.eventstream");
    std::string transcript;
    for (const auto& e : stream.events) transcript += e;
    for (std::size_t cut = 0; cut < transcript.size(); ++cut) {
        auto got = testing::assemble(converse, transcript, cut);
        BOOST_TEST_REQUIRE(got.ok, got.error << " cut " << cut);
        BOOST_TEST_REQUIRE(testing::describe(got.result) == testing::describe(expected),
                           "cut " << cut);
    }
    BOOST_TEST(testing::describe(expected) ==
               R"(finish=tool_calls text=Hello from Bedrock! )"
               R"(call{tooluse_fake7_0,weather,{"city":"Paris","days":3},{}} usage=10/5)");
}

// A stream of the shapes ConverseStream sends: reasoning (its signature goes nowhere), text, a
// call whose input arrives in pieces, the stop, then the metadata with the usage.
BOOST_AUTO_TEST_CASE(a_recorded_shape_stream_decodes_to_its_deltas) {
    std::string transcript =
        event("messageStart", R"({"p":"abcdefghijk","role":"assistant"})") +
        event(
            "contentBlockDelta",
            R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"The user "}},"p":"ab"})") +
        event("contentBlockDelta",
              R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"asks."}},"p":"a"})") +
        event(
            "contentBlockDelta",
            R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"EqoBCkgI"}},"p":"a"})") +
        event("contentBlockStop", R"({"contentBlockIndex":0,"p":"abcd"})") +
        event("contentBlockDelta",
              R"({"contentBlockIndex":1,"delta":{"text":"Let me check."},"p":"abcdef"})") +
        event("contentBlockStop", R"({"contentBlockIndex":1,"p":"abc"})") +
        event("contentBlockStart",
              R"({"contentBlockIndex":2,"p":"abc","start":{"toolUse":{"name":"weather",)"
              R"("toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"}}})") +
        event("contentBlockDelta",
              R"({"contentBlockIndex":2,"delta":{"toolUse":{"input":""}},"p":"abcdefgh"})") +
        event(
            "contentBlockDelta",
            R"({"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"city\": \"Pa"}},"p":"a"})") +
        event("contentBlockDelta",
              R"({"contentBlockIndex":2,"delta":{"toolUse":{"input":"ris\"}"}},"p":"abcd"})") +
        event("contentBlockStop", R"({"contentBlockIndex":2,"p":"abcdefghijklm"})") +
        event("messageStop", R"({"p":"abcdefghijklmnopqrstu","stopReason":"tool_use"})") +
        event(
            "metadata",
            R"({"metrics":{"latencyMs":1467},"p":"abcdef","usage":{"cacheReadInputTokens":1200,)"
            R"("cacheWriteInputTokens":0,"inputTokens":412,"outputTokens":87,"totalTokens":1699}})");

    stream_reader reader(converse, 1 << 20);
    std::vector<stream_delta> deltas;
    std::string error;
    BOOST_TEST_REQUIRE(reader.feed(transcript, deltas, error), error);
    BOOST_TEST_REQUIRE(reader.finish(deltas, error), error);
    std::string seen;
    for (const auto& d : deltas) {
        seen += std::to_string(static_cast<int>(d.what)) + ":" + std::to_string(d.index) + ":" +
                d.id + d.name + d.text + "|";
    }
    BOOST_TEST(seen ==
               "0:0:|5:0:The user |5:0:asks.|1:0:Let me check.|"
               "2:0:tooluse_kZJMlvQmRJ6eAyJE5GIl7Qweather|3:0:{\"city\": \"Pa|3:0:ris\"}|4:0:|");
    const auto& last = deltas.back();
    BOOST_TEST(openai_finish_reason(last.why) == "tool_calls");
    BOOST_TEST(last.used.input == 1612);
    BOOST_TEST(last.used.cache_read == 1200);
    BOOST_TEST(last.used.output == 87);

    for (std::size_t cut = 1; cut < transcript.size(); cut += 7) {
        auto got = testing::assemble(converse, transcript, cut);
        BOOST_TEST_REQUIRE(got.ok, got.error);
        BOOST_TEST_REQUIRE(testing::describe(got.result) ==
                           R"(finish=tool_calls text=Let me check. )"
                           R"(call{tooluse_kZJMlvQmRJ6eAyJE5GIl7Q,weather,{"city":"Paris"},{}})"
                           R"( usage=1612/87)");
    }
}

BOOST_AUTO_TEST_CASE(a_stream_without_its_metadata_ends_at_message_stop) {
    auto transcript =
        event("messageStart", R"({"role":"assistant"})") +
        event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hi"}})") +
        event("messageStop", R"({"stopReason":"max_tokens"})");
    auto got = testing::assemble(converse, transcript, 0);
    BOOST_TEST_REQUIRE(got.ok, got.error);
    BOOST_TEST(testing::describe(got.result) == "finish=length text=Hi");
    BOOST_TEST(!got.result.used.known);
    // Without messageStop it is not complete.
    auto cut = testing::assemble(converse, transcript.substr(0, transcript.size() - 60), 0);
    BOOST_TEST(!cut.ok);
}

// Exceptions mid-stream are the provider's errors, with the status a client should see; what
// came before them was handed out.
BOOST_AUTO_TEST_CASE(stream_exceptions_are_provider_errors) {
    std::pair<std::string, unsigned> cases[] = {
        {"throttlingException", 429},         {"validationException", 400},
        {"serviceUnavailableException", 503}, {"internalServerException", 500},
        {"modelStreamErrorException", 502},   {"someNewException", 502}};
    for (const auto& [type, status] : cases) {
        auto said = fed(type, R"({"message":"it went wrong"})");
        BOOST_TEST(said.status == status, type);
        BOOST_TEST(said.type == std::string(detail::error_type_for(status)), type);
        BOOST_TEST(said.message.find("it went wrong") != std::string::npos, said.message);
    }
    BOOST_TEST(fed("throttlingException", R"({"message":"Too many"})").message ==
               "ThrottlingException: Too many");
    BOOST_TEST(fed("", "{}").message.find("named no event") != std::string::npos);
    BOOST_TEST(fed("messageStart", "not json").message.find("unreadable messageStart") !=
               std::string::npos);

    auto transcript =
        event("messageStart", R"({"role":"assistant"})") +
        event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hi"}})") +
        fakes::converse_stream_exception(
            "modelStreamErrorException",
            "Model stream error: the model could not finish the answer.");
    stream_reader reader(converse, 1 << 20);
    std::vector<stream_delta> deltas;
    std::string error;
    BOOST_TEST(!reader.feed(transcript, deltas, error));
    BOOST_TEST(error ==
               "ModelStreamErrorException: Model stream error: the model could not "
               "finish the answer.");
    BOOST_TEST_REQUIRE(deltas.size() == 2u);
    BOOST_TEST(deltas[1].text == "Hi");

    // An event-stream error message (:message-type error) too.
    es::message m;
    m.headers = {es::header::of_string(":message-type", "error"),
                 es::header::of_string(":error-code", "InternalFailure"),
                 es::header::of_string(":error-message", "An internal error occurred")};
    stream_reader other(converse, 1 << 20);
    error.clear();
    BOOST_TEST(!other.feed(es::encode(m), deltas, error));
    BOOST_TEST(error == "InternalFailure: An internal error occurred");
}

BOOST_AUTO_TEST_CASE(broken_framing_and_block_order_are_stream_errors) {
    auto start = event("messageStart", R"({"role":"assistant"})");
    auto text = event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hi"}})");
    // A byte changed in flight: the message's CRC says so; what came before is kept.
    auto changed = text;
    changed[changed.size() - 10] ^= 1;
    stream_reader reader(converse, 1 << 20);
    std::vector<stream_delta> deltas;
    std::string error;
    BOOST_TEST(!reader.feed(start + changed, deltas, error));
    BOOST_TEST(error.find("message's CRC does not match") != std::string::npos, error);
    BOOST_TEST(deltas.size() == 1u);
    // A message larger than the reader's bound.
    stream_reader small(converse, 64);
    BOOST_TEST(
        !small.feed(start + event("contentBlockDelta", std::string(100, ' ')), deltas, error));
    BOOST_TEST(error.find("larger than the limit of 64") != std::string::npos, error);
    // The body ends inside a message: truncated, not complete.
    auto stop = event("messageStop", R"({"stopReason":"end_turn"})");
    auto cut = testing::assemble(converse, start + text + stop.substr(0, stop.size() - 1), 0);
    BOOST_TEST(!cut.ok);
    BOOST_TEST(cut.error.find("ended inside a message") != std::string::npos, cut.error);
    // Blocks come in order: an index past the next one, or none, is not Bedrock's stream.
    for (std::string bad :
         {R"({"contentBlockIndex":5,"delta":{"text":"x"}})",
          R"({"contentBlockIndex":-1,"delta":{"text":"x"}})",
          R"({"contentBlockIndex":1e300,"delta":{"text":"x"}})", R"({"delta":{"text":"x"}})"}) {
        auto got = testing::assemble(converse, start + event("contentBlockDelta", bad), 0);
        BOOST_TEST(!got.ok, bad);
        BOOST_TEST(got.error.find("a content block event has index") != std::string::npos,
                   got.error);
    }
    // Input for a block that is no call is dropped, as Anthropic's decoder drops it.
    auto stray = testing::assemble(
        converse,
        start + text +
            event("contentBlockDelta",
                  R"({"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}})") +
            stop,
        0);
    BOOST_TEST_REQUIRE(stray.ok, stray.error);
    BOOST_TEST(testing::describe(stray.result) == "finish=stop text=Hi");
}

// Every error Bedrock answers, by x-amzn-ErrorType or by the body's __type, as the client sees it.
BOOST_AUTO_TEST_CASE(error_answers_map_to_the_status_a_client_should_see) {
    struct expectation {
        unsigned bedrock;
        std::string type;
        unsigned client;
    };
    expectation cases[] = {{400, "ValidationException", 400},
                           {403, "AccessDeniedException", 403},
                           {404, "ResourceNotFoundException", 404},
                           {429, "ThrottlingException", 429},
                           {400, "ServiceQuotaExceededException", 429},
                           {429, "ModelNotReadyException", 503},
                           {503, "ServiceUnavailableException", 503},
                           {500, "InternalServerException", 500},
                           {424, "ModelErrorException", 502},
                           {408, "ModelTimeoutException", 504},
                           {403, "UnrecognizedClientException", 401},
                           {403, "InvalidSignatureException", 401},
                           {403, "ExpiredTokenException", 401},
                           {403, "IncompleteSignatureException", 401},
                           {403, "MissingAuthenticationTokenException", 401},
                           {418, "TeapotException", 418}};
    for (const auto& c : cases) {
        auto answer = fakes::converse_error(c.bedrock, c.type, "it says why");
        // x-amzn-ErrorType: Type:http://internal.amazon.com/coral/…
        auto field = answer.extra_headers.substr(answer.extra_headers.find(": ") + 2);
        field = field.substr(0, field.find("\r\n"));
        auto by_header = bedrock::read_error(answer.status, field, answer.body);
        BOOST_TEST(by_header.status == c.client, c.type);
        BOOST_TEST(by_header.type == std::string(detail::error_type_for(c.client)), c.type);
        BOOST_TEST(by_header.message == c.type + ": it says why");
        auto by_body =
            converse.decode_error(c.bedrock, R"({"__type":"com.amazon.coral.service#)" + c.type +
                                                 R"(","message":"it says why"})");
        BOOST_TEST(by_body.status == c.client, c.type);
        BOOST_TEST(by_body.message == c.type + ": it says why");
    }
    BOOST_TEST(detail::error_type_for(429) == "rate_limit_exceeded");
    // No type anywhere: the status stands and the body speaks (IAM spells it Message).
    auto bare = converse.decode_error(403, R"({"Message":"User is not authorized"})");
    BOOST_TEST(bare.status == 403u);
    BOOST_TEST(bare.message == "User is not authorized");
    auto text = converse.decode_error(502, "Bad Gateway");
    BOOST_TEST(text.status == 502u);
    BOOST_TEST(text.message == "Bad Gateway");
}

BOOST_AUTO_TEST_CASE(inference_profiles_list_exact_profiles_and_the_routes_that_target_them) {
    for (auto id : {"us.anthropic.claude-x-v1:0", "global.anthropic.claude-x", "eu.amazon.nova-pro",
                    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3"})
        BOOST_TEST(bedrock::is_inference_profile(id), id);
    for (auto id : {"anthropic.claude-x-v1:0", "amazon.nova-pro-v1:0", "gpt-4o", "us.anthropic",
                    "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x"})
        BOOST_TEST(!bedrock::is_inference_profile(id), id);

    std::vector<gateway::config::upstream_config> ups(2);
    ups[0].name = "openai";
    ups[1].name = "aws";
    ups[1].provider = provider::bedrock;
    ups[1].region = "eu-west-1";
    ups[1].models = {"anthropic.*", "us.anthropic.*", "eu.anthropic.claude-x-v1:0",
                     "anthropic.claude-y-v1:0"};
    std::vector<gateway::config::route_config> routes(3);
    routes[0].model = "house";
    routes[0].targets = {{"openai", "gpt-4o", 1, 0}, {"aws", "eu.anthropic.claude-x-v1:0", 1, 1}};
    routes[1].model = "house-*";  // a glob: no name to list
    routes[1].targets = {{"aws", "eu.anthropic.claude-x-v1:0", 1, 1}};
    routes[2].model = "plain";
    routes[2].targets = {{"openai", "gpt-4o", 1, 0}};
    auto listed = json::parse(bedrock::inference_profiles(ups, routes, {}, "SYSTEM_DEFINED"));
    auto expected = json::parse(R"({"inferenceProfileSummaries":[
      {"inferenceProfileArn":"arn:aws:bedrock:eu-west-1::inference-profile/house",
       "inferenceProfileId":"house","inferenceProfileName":"house",
       "description":"route `house` of contextgate",
       "models":[{"modelArn":"arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-x-v1:0"}],
       "status":"ACTIVE","type":"SYSTEM_DEFINED"},
      {"inferenceProfileArn":"arn:aws:bedrock:eu-west-1::inference-profile/eu.anthropic.claude-x-v1:0",
       "inferenceProfileId":"eu.anthropic.claude-x-v1:0",
       "inferenceProfileName":"eu.anthropic.claude-x-v1:0",
       "description":"upstream `aws` of contextgate",
       "models":[{"modelArn":"arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-x-v1:0"}],
       "status":"ACTIVE","type":"SYSTEM_DEFINED"}]})");
    BOOST_TEST(listed == expected, json::serialize(listed));
    BOOST_TEST(json::parse(bedrock::inference_profiles(ups, routes, {}, "")) == expected);
    // A key's globs cut the list; application profiles are none of the gateway's.
    auto cut = json::parse(bedrock::inference_profiles(ups, routes, {"eu.*"}, ""));
    BOOST_TEST(cut.at("inferenceProfileSummaries").as_array().size() == 1u);
    BOOST_TEST(bedrock::inference_profiles(ups, routes, {}, "APPLICATION") ==
               R"({"inferenceProfileSummaries":[]})");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_bedrock_test
