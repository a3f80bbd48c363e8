#include "gateway/providers/bedrock_invoke.hpp"

#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/openai.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/unit/providers/stream_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace providers_bedrock_invoke_test {

using namespace gateway::providers;
namespace json = boost::json;
namespace fakes = gateway::testing::fake_providers;
namespace es = gateway::providers::aws_eventstream;

namespace {

// InvokeModelWithResponseStream's answer for `t` as the fake Bedrock frames it, in one string.
std::string invoke_stream(const fakes::turn& t) {
    std::string out;
    for (const auto& frame : fakes::invoke_answer(t, "anthropic.claude-x", true, 1).events)
        out += frame;
    return out;
}

// The same answer as Anthropic streams it: its SSE events, in one string.
std::string anthropic_stream(const fakes::turn& t) {
    std::string out;
    for (const auto& event : fakes::anthropic_answer(t, "anthropic.claude-x", true, 1).events)
        out += event;
    return out;
}

std::string exception_frame(std::string_view type, std::string_view message) {
    return fakes::converse_stream_exception(type, message);
}

// One `chunk` message carrying `event` as its base64 `bytes`.
std::string chunk_frame(std::string_view event) {
    static constexpr char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string b64;
    for (std::size_t i = 0; i < event.size(); i += 3) {
        std::uint32_t n = std::uint8_t(event[i]) << 16;
        if (i + 1 < event.size()) n |= std::uint8_t(event[i + 1]) << 8;
        if (i + 2 < event.size()) n |= std::uint8_t(event[i + 2]);
        b64 += alphabet[(n >> 18) & 63];
        b64 += alphabet[(n >> 12) & 63];
        b64 += i + 1 < event.size() ? alphabet[(n >> 6) & 63] : '=';
        b64 += i + 2 < event.size() ? alphabet[n & 63] : '=';
    }
    es::message m;
    m.headers = {es::header::of_string(":message-type", "event"),
                 es::header::of_string(":event-type", "chunk")};
    m.payload = json::serialize(json::object{{"bytes", b64}});
    return es::encode(m);
}

// `bytes` through messages_events, cut every `cut` bytes; false when it ended in an error.
bool rewrite(std::string_view bytes, std::size_t cut, std::string& out) {
    bedrock::messages_events events(1 << 20);
    for (std::size_t at = 0; at < bytes.size(); at += cut)
        if (!events.feed(bytes.substr(at, cut), out)) return false;
    return events.finish(out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_bedrock_invoke)

BOOST_AUTO_TEST_CASE(claude_models_profiles_and_their_arns_invoke_and_others_do_not) {
    for (auto id : {"anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-x-v1:0",
                    "eu.anthropic.claude-x", "apac.anthropic.claude-x", "global.anthropic.claude-x",
                    "us-gov.anthropic.claude-x",
                    "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x-v1:0",
                    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
                    "us.anthropic.claude-x-v1:0"})
        BOOST_TEST(bedrock::invokes(id), id);
    for (auto id : {"amazon.nova-pro-v1:0", "us.amazon.nova-pro-v1:0", "meta.llama3-70b",
                    "anthropic", "claude-sonnet-4-5", ".anthropic.claude", "US.anthropic.claude",
                    "arn:aws:bedrock:us-east-1::foundation-model/meta.llama3"})
        BOOST_TEST(!bedrock::invokes(id), id);
}

BOOST_AUTO_TEST_CASE(the_clients_body_keeps_its_members_without_model_and_stream) {
    std::string error;
    bool stream = false;
    auto body = bedrock::invoke_body(
        R"({"model":"m","max_tokens":5,"stream":true,"system":[{"type":"text","text":"s",)"
        R"("cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}],)"
        R"("thinking":{"type":"enabled","budget_tokens":1024}})",
        stream, error);
    BOOST_TEST(error.empty());
    BOOST_TEST(stream);
    BOOST_TEST(body ==
               R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"system":[{"type":)"
               R"("text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":)"
               R"("user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":1024}})");
    // A version the client gave is Bedrock's one.
    body =
        bedrock::invoke_body(R"({"anthropic_version":"2023-06-01","max_tokens":1})", stream, error);
    BOOST_TEST(!stream);
    BOOST_TEST(body == R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":1})");
    BOOST_TEST(bedrock::invoke_body("[1]", stream, error).empty());
    BOOST_TEST(error == "the request body is not a JSON object");
}

BOOST_AUTO_TEST_CASE(a_deep_tool_schema_is_as_welcome_as_at_the_door) {
    // 44 levels of nesting: more than Boost.JSON's default 32, less than ingress's 64.
    std::string schema = "{}";
    for (int i = 0; i < 20; ++i) schema = R"({"type":"object","properties":{"x":)" + schema + "}}";
    std::string error;
    bool stream = false;
    auto body = bedrock::invoke_body(
        R"({"max_tokens":5,"tools":[{"name":"t","input_schema":)" + schema + "}]}", stream, error);
    BOOST_TEST(error.empty(), error);
    BOOST_TEST(body.find(R"("anthropic_version":"bedrock-2023-05-31")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_event_on_several_lines_is_one_data_line_and_a_type_with_one_is_refused) {
    std::string out;
    BOOST_TEST(rewrite(chunk_frame("{\"type\":\"ping\",\n\"n\":1}"), 4, out));
    BOOST_TEST(out == "event: ping\ndata: {\"type\":\"ping\",\"n\":1}\n\n");
    out.clear();
    BOOST_TEST(!rewrite(chunk_frame(R"({"type":"ping\ndata: x"})"), 4, out));
    BOOST_TEST(out.starts_with("event: error\n"), out);
}

BOOST_AUTO_TEST_CASE(a_chunk_holds_its_event_in_base64_with_or_without_padding) {
    BOOST_TEST(*bedrock::chunk_event(R"({"bytes":"eyJ0eXBlIjoicGluZyJ9","p":"abc"})") ==
               R"({"type":"ping"})");
    BOOST_TEST(*bedrock::chunk_event(R"({"bytes":"YWI="})") == "ab");
    BOOST_TEST(*bedrock::chunk_event(R"({"bytes":"YWI"})") == "ab");
    BOOST_TEST(!bedrock::chunk_event(R"({"bytes":"YW*="})"));
    BOOST_TEST(!bedrock::chunk_event(R"({"other":1})"));
    BOOST_TEST(!bedrock::chunk_event("not json"));
}

BOOST_AUTO_TEST_CASE(the_stream_becomes_anthropics_events_however_its_frames_are_cut) {
    fakes::turn t{"Hello there", {{"get_weather", R"({"city":"Paris"})"}}, "", "Let me see."};
    auto frames = invoke_stream(t);
    auto expected = anthropic_stream(t);
    for (std::size_t cut : {std::size_t(1), std::size_t(7), frames.size()}) {
        std::string out;
        BOOST_TEST(rewrite(frames, cut, out), "cut " << cut);
        BOOST_TEST(out == expected, "cut " << cut);
    }
}

BOOST_AUTO_TEST_CASE(an_exception_a_broken_frame_or_a_cut_end_is_anthropics_error_event) {
    auto frames = invoke_stream({"Hello", {}, "", ""});
    std::string out;
    BOOST_TEST(!rewrite(frames.substr(0, frames.size() - 3), 5, out));
    BOOST_TEST(out.ends_with("\n\n"));
    BOOST_TEST(
        out.find("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"") !=
            std::string::npos,
        out);

    out.clear();
    BOOST_TEST(!rewrite(exception_frame("throttlingException", "Too many tokens"), 3, out));
    BOOST_TEST(out ==
               "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
               "\"message\":\"ThrottlingException: Too many tokens\"}}\n\n");

    // A byte changed: the frame's CRC no longer holds, and nothing after it is written.
    auto broken = frames;
    broken[broken.size() / 2] ^= 0x20;
    out.clear();
    bedrock::messages_events events(1 << 20);
    BOOST_TEST(!events.feed(broken, out));
    BOOST_TEST(out.ends_with("\n\n"));
    BOOST_TEST(out.find("event: error") != std::string::npos);
    auto after = out.size();
    BOOST_TEST(!events.feed(frames, out));
    BOOST_TEST(out.size() == after);
}

BOOST_AUTO_TEST_CASE(translated_clients_are_encoded_as_invoke_bodies_and_read_back) {
    const auto& invoke = bedrock::invoke_adapter();
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(
        openai::parse_chat_request(
            R"({"model":"us.anthropic.claude-x-v1:0","stream":true,"messages":[)"
            R"({"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})",
            r, f),
        f.message);
    BOOST_TEST(invoke.target(r) ==
               "/model/us.anthropic.claude-x-v1%3A0/invoke-with-response-stream");
    std::string error;
    auto body = json::parse(invoke.encode(r, error)).as_object();
    BOOST_TEST(body.begin()->key() == "anthropic_version");
    BOOST_TEST(!body.contains("model"));
    BOOST_TEST(!body.contains("stream"));
    BOOST_TEST(body["system"] == json::value("Be brief."));
    // The strict fake takes it.
    gateway::testing::received_request sent;
    sent.method = "POST";
    sent.target = invoke.target(r);
    sent.body = json::serialize(body);
    sent.headers = {{"Authorization", "Bearer bedrock-api-key"}};
    auto refused = fakes::invoke_refusal(sent, body, "us.anthropic.claude-x-v1%3A0");
    BOOST_TEST(!refused, (refused ? refused->body : ""));

    for (std::size_t cut : {std::size_t(0), std::size_t(1), std::size_t(11)}) {
        auto got = testing::assemble(
            invoke, invoke_stream({"Hello", {{"get_weather", R"({"city":"Paris"})"}}, "", ""}),
            cut);
        BOOST_TEST(got.ok, got.error);
        BOOST_TEST(
            testing::describe(got.result) ==
            R"(finish=tool_calls text=Hello call{toolu_fake_1_0,get_weather,{"city":"Paris"},{}} usage=10/5)");
    }
    auto throttled = testing::assemble(invoke, exception_frame("throttlingException", "slow"), 0);
    BOOST_TEST(!throttled.ok);
    BOOST_TEST(throttled.error == "ThrottlingException: slow");
    gateway::config::upstream_config up;
    up.provider = provider::bedrock;
    BOOST_TEST(&adapter_for(up, "eu.anthropic.claude-x") == &invoke);
    BOOST_TEST(&adapter_for(up, "amazon.nova-pro-v1:0") == &bedrock::converse_adapter());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_bedrock_invoke_test
