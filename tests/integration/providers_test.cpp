// Claude and Gemini behind /v1/chat/completions, and their native paths passed through: the
// gateway in-process against the fake upstream, which speaks both dialects and refuses what the
// real APIs refuse.
#include "gateway/passthrough/translator.hpp"

#include "gateway/sse/event_parser.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/schema_dag.hpp"
#include "tests/support/stream_grammar.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace integration_providers_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

struct providers_fixture {
    fake_upstream fake;
    config::gateway_config cfg = three_providers(fake, config::auth_mode::replace);
    running_gateway gw{cfg};

    response post(const std::string& body, std::string_view headers = {}) {
        client c(gw.port());
        return c.request(make_request("POST", "/v1/chat/completions", body,
                                      "Content-Type: application/json\r\n" + std::string(headers)));
    }
};

const std::string weather_tools = R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather in a city",
   "parameters":{"type":"object","additionalProperties":false,
                 "properties":{"city":{"type":"string"}},"required":["city"]}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}])";

}  // namespace

BOOST_AUTO_TEST_SUITE(providers)

BOOST_AUTO_TEST_CASE(claude_answers_as_a_chat_completion_with_our_key) {
    providers_fixture f;
    auto r = f.post(
        R"({"model":"claude-sonnet","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})",
        "Authorization: Bearer sk-client\r\nanthropic-beta: tools-2025\r\nx-trace-id: t-1\r\n"
        "OpenAI-Organization: org-x\r\n"
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"
        "tracestate: vendor=x\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto body = json::parse(r.body).as_object();
    BOOST_TEST(body["object"] == json::value("chat.completion"));
    BOOST_TEST(body["model"] == json::value("claude-sonnet"));
    auto& message = body["choices"].as_array()[0].as_object()["message"].as_object();
    BOOST_TEST(message["content"] == json::value("Hello from the fake upstream!"));
    BOOST_TEST(body["choices"].as_array()[0].as_object()["finish_reason"] == json::value("stop"));
    BOOST_TEST(body["usage"].as_object()["total_tokens"] == json::value(15));
    auto sent = f.fake.requests().back();
    BOOST_TEST(sent.target == "/v1/messages");
    BOOST_TEST(sent.header("x-api-key") == "sk-ant-gateway");  // auth: replace
    BOOST_TEST(sent.header("anthropic-version") == "2023-06-01");
    BOOST_TEST(sent.header("authorization").empty());
    // anthropic-beta and the client's own x-* fields go along; OpenAI's fields do not.
    BOOST_TEST(sent.header("anthropic-beta") == "tools-2025");
    BOOST_TEST(sent.header("x-trace-id") == "t-1");
    BOOST_TEST(sent.header("openai-organization").empty());
    // The client's trace context, so the provider's spans join its trace.
    BOOST_TEST(sent.header("traceparent") ==
               "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    BOOST_TEST(sent.header("tracestate") == "vendor=x");
    auto wire = json::parse(sent.body).as_object();
    BOOST_TEST(wire["system"] == json::value("Be brief."));
    BOOST_TEST(wire.contains("max_tokens"));
}

BOOST_AUTO_TEST_CASE(claude_streams_parallel_tool_calls_as_chunks) {
    providers_fixture f;
    auto r =
        f.post(R"({"model":"claude-sonnet","stream":true,"stream_options":{"include_usage":true},
                        "messages":[{"role":"user","content":"weather and time?"}],"tools":)" +
               weather_tools + "}");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type").starts_with("text/event-stream"));
    auto s = read_chat_stream(r.body);
    BOOST_TEST(s.done);
    BOOST_TEST(s.error.empty(), s.error);
    BOOST_TEST(s.finish_reason == "tool_calls");
    BOOST_TEST_REQUIRE(s.calls.size() == 2u);
    BOOST_TEST(s.calls[0]["name"] == json::value("get_weather"));
    BOOST_TEST(s.calls[0]["arguments"] == json::value(R"({"city":"Paris"})"));
    BOOST_TEST(s.calls[1]["name"] == json::value("get_time"));
    BOOST_TEST(s.calls[1]["arguments"] == json::value("{}"));  // Anthropic streamed ""
    // The usage chunk comes last, without choices.
    BOOST_TEST(s.chunks.back()["choices"].as_array().empty());
    BOOST_TEST(s.chunks.back()["usage"].as_object()["prompt_tokens"] == json::value(10));
}

BOOST_AUTO_TEST_CASE(claude_results_go_back_in_one_user_turn_and_a_missing_one_is_claudes_400) {
    providers_fixture f;
    std::string history = R"({"model":"claude-sonnet","tools":)" + weather_tools + R"(,"messages":[
      {"role":"user","content":"weather and time?"},
      {"role":"assistant","content":null,"tool_calls":[
        {"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
        {"id":"toolu_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"toolu_1","content":"sunny"})";
    auto ok = f.post(history + R"(,{"role":"tool","tool_call_id":"toolu_2","content":"noon"}]})");
    BOOST_TEST_REQUIRE(ok.status == 200u, ok.body);
    auto wire = json::parse(f.fake.requests().back().body).as_object();
    BOOST_TEST(wire["messages"].as_array().size() == 3u);
    auto missing = f.post(history + "]}");
    BOOST_TEST(missing.status == 400u);
    auto error = json::parse(missing.body).as_object()["error"].as_object();
    BOOST_TEST(std::string(error["message"].as_string()).find("without `tool_result`") !=
                   std::string::npos,
               missing.body);
    BOOST_TEST(error["type"] == json::value("invalid_request_error"));
}

BOOST_AUTO_TEST_CASE(gemini_signatures_and_ids_travel_in_the_reply_and_come_back) {
    providers_fixture f;
    auto first = f.post(
        R"({"model":"gemini-fast","messages":[{"role":"user","content":"weather?"}],"tools":)" +
        weather_tools + "}");
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(f.fake.requests().back().target == "/v1beta/models/gemini-3-flash:generateContent");
    BOOST_TEST(f.fake.requests().back().header("x-goog-api-key") == "g-gateway");
    auto reply = json::parse(first.body).as_object();
    auto message = reply["choices"].as_array()[0].as_object()["message"].as_object();
    auto& calls = message["tool_calls"].as_array();
    BOOST_TEST_REQUIRE(calls.size() == 2u);
    BOOST_TEST(calls[0]
                   .as_object()["extra_content"]
                   .as_object()["google"]
                   .as_object()["thought_signature"]
                   .as_string()
                   .starts_with("fake-sig-"));
    BOOST_TEST(reply["choices"].as_array()[0].as_object()["finish_reason"] ==
               json::value("tool_calls"));

    // The client sends the assistant message back unchanged, with both results.
    auto turn = [&](const json::object& assistant) {
        json::array messages{json::object{{"role", "user"}, {"content", "weather?"}}, assistant};
        for (auto& c : assistant.at("tool_calls").as_array())
            messages.push_back(
                {{"role", "tool"}, {"tool_call_id", c.as_object().at("id")}, {"content", "42"}});
        json::object body{{"model", "gemini-fast"},
                          {"messages", messages},
                          {"tools", json::parse(weather_tools)}};
        return f.post(json::serialize(body));
    };
    auto second = turn(message);
    BOOST_TEST_REQUIRE(second.status == 200u, second.body);
    auto wire = json::parse(f.fake.requests().back().body).as_object();
    auto& contents = wire["contents"].as_array();
    BOOST_TEST_REQUIRE(contents.size() == 3u);
    BOOST_TEST(json::serialize(contents[2].as_object()["parts"].as_array()[0]) ==
               R"({"functionResponse":{"name":"get_weather","response":{"content":"42"}}})");

    // A client that rebuilds the assistant message from its own types drops extra_content (Qwen
    // Code): the signature comes back in the call id it echoes, and Gemini takes the turn.
    auto signature = calls[0].at("extra_content").at("google").at("thought_signature");
    auto stripped = message;
    for (auto& c : stripped["tool_calls"].as_array()) c.as_object().erase("extra_content");
    auto echoed = turn(stripped);
    BOOST_TEST_REQUIRE(echoed.status == 200u, echoed.body);
    auto resent = json::parse(f.fake.requests().back().body);
    const auto& model_turn = resent.at("contents").at(1).at("parts").as_array();
    BOOST_TEST(model_turn[0].at("thoughtSignature") == signature);
    BOOST_TEST(!model_turn[0].at("functionCall").as_object().contains("id"));  // synthesized

    // Calls from another model (neither extra_content nor our id): Gemini's documented
    // placeholder on the turn's first call, rather than a refused turn.
    auto foreign = stripped;
    auto& foreign_calls = foreign["tool_calls"].as_array();
    for (std::size_t i = 0; i < foreign_calls.size(); ++i)
        foreign_calls[i].as_object()["id"] = "call_other_" + std::to_string(i);
    auto placeholder = turn(foreign);
    BOOST_TEST_REQUIRE(placeholder.status == 200u, placeholder.body);
    auto sent = json::parse(f.fake.requests().back().body);
    const auto& parts = sent.at("contents").at(1).at("parts").as_array();
    BOOST_TEST(parts[0].at("thoughtSignature").as_string() == "skip_thought_signature_validator");
    BOOST_TEST(!parts[1].as_object().contains("thoughtSignature"));
}

BOOST_AUTO_TEST_CASE(gemini_streams_text_as_it_comes) {
    providers_fixture f;
    auto r = f.post(
        R"({"model":"gemini-pro","stream":true,"messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(f.fake.requests().back().target ==
               "/v1beta/models/gemini-pro:streamGenerateContent?alt=sse");
    auto s = read_chat_stream(r.body);
    BOOST_TEST(s.done);
    BOOST_TEST(s.text == "Hello from the fake upstream!");
    BOOST_TEST(s.finish_reason == "stop");
    BOOST_TEST(s.chunks.size() >= 3u);  // role, two text pieces, finish
}

BOOST_AUTO_TEST_CASE(provider_errors_keep_status_message_and_retry_after) {
    providers_fixture f;
    auto r = f.post(R"({"model":"claude-sonnet","messages":[{"role":"user","content":"hi"}]})",
                    "x-fake-status: 429\r\n");
    BOOST_TEST(r.status == 429u);
    BOOST_TEST(r.header("retry-after") == "7");
    auto error = json::parse(r.body).as_object()["error"].as_object();
    BOOST_TEST(error["message"] == json::value("fake error 429"));
    BOOST_TEST(error["type"] == json::value("rate_limit_exceeded"));
    auto g = f.post(R"({"model":"gemini-pro","messages":[{"role":"user","content":"hi"}]})",
                    "x-fake-status: 503\r\n");
    BOOST_TEST(g.status == 503u);
}

BOOST_AUTO_TEST_CASE(untranslatable_fields_are_refused_by_name_before_the_upstream) {
    providers_fixture f;
    auto before = f.fake.requests().size();
    auto r =
        f.post(R"({"model":"claude-sonnet","n":2,"messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(r.status == 400u);
    auto error = json::parse(r.body).as_object()["error"].as_object();
    BOOST_TEST(error["param"] == json::value("n"));
    auto other = f.post(
        R"({"model":"gemini-pro","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]})");
    BOOST_TEST(other.status == 400u);
    auto embeddings = client(f.gw.port())
                          .request(make_request("POST", "/v1/embeddings",
                                                R"({"model":"claude-sonnet","input":"x"})"));
    BOOST_TEST(embeddings.status == 400u);
    BOOST_TEST(f.fake.requests().size() == before);
}

BOOST_AUTO_TEST_CASE(an_upstream_that_dies_mid_stream_ends_the_translation_with_an_error_event) {
    providers_fixture f;
    auto r = f.post(
        R"({"model":"claude-sonnet","stream":true,"messages":[{"role":"user","content":"hi"}]})",
        "x-fake-reset-after: 3\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.complete);  // the chunked body still ends properly
    auto s = read_chat_stream(r.body);
    BOOST_TEST(!s.done);
    BOOST_TEST(!s.error.empty());
}

BOOST_AUTO_TEST_CASE(a_client_that_hangs_up_cancels_the_translated_request) {
    providers_fixture f;
    client c(f.gw.port());
    c.send(make_request(
        "POST", "/v1/chat/completions",
        R"({"model":"claude-sonnet","stream":true,"messages":[{"role":"user","content":"hi"}]})",
        "x-fake-stall-after: 2\r\n"));
    response head;
    BOOST_TEST_REQUIRE(c.read_header(head));
    BOOST_TEST_REQUIRE(f.fake.wait_connections_open(1, 5s));
    c.close();
    BOOST_TEST(f.fake.wait_connections_open(0, 5s));
}

BOOST_AUTO_TEST_CASE(models_lists_the_openai_upstreams_models_and_every_configured_name) {
    providers_fixture f;
    auto r = client(f.gw.port())
                 .request(make_request("GET", "/v1/models", {}, "Authorization: Bearer sk-c\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    auto data = json::parse(r.body).as_object()["data"].as_array();
    std::vector<std::string> ids;
    for (auto& m : data) ids.push_back(std::string(m.as_object()["id"].as_string()));
    // What the OpenAI upstream lists (asked with the client's key) that its glob takes, then
    // the others' lists (asked with the gateway's keys) and configured names.
    std::vector<std::string> expected{"gpt-4o-mini",     "gpt-4o",           "claude-sonnet-4-5",
                                      "claude-opus-4-1", "claude-haiku-4-5", "gemini-fast",
                                      "gemini-2.5-pro",  "gemini-2.5-flash"};
    BOOST_TEST(ids == expected, boost::test_tools::per_element());
    std::size_t openai_lists = 0;
    for (const auto& asked : f.fake.requests())
        if (asked.target == "/v1/models") {
            ++openai_lists;
            BOOST_TEST(asked.header("authorization") == "Bearer sk-c");
        }
    BOOST_TEST(openai_lists == 1u);
    // An OpenAI upstream that cannot answer is left out; the rest still is listed.
    f.fake.stop();
    auto without = client(f.gw.port()).request(make_request("GET", "/v1/models"));
    BOOST_TEST_REQUIRE(without.status == 200u);
    BOOST_TEST(without.body.find("\"gemini-fast\"") != std::string::npos, without.body);
    BOOST_TEST(without.body.find("gpt-4o") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(native_paths_pass_through_unchanged_with_the_providers_key) {
    providers_fixture f;
    std::string body =
        R"({"model":"claude-sonnet", "max_tokens": 5,"messages":[{"role":"user","content":"hi"}]})";
    auto r =
        client(f.gw.port())
            .request(make_request(
                "POST", "/v1/messages?beta=true", body,
                "x-fake-mode: echo\r\nx-api-key: sk-client\r\nanthropic-version: 2023-06-01\r\n"
                "anthropic-beta: prompt-caching-2024-07-31\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.body.starts_with("POST /v1/messages?beta=true HTTP/1.1\r\n"));
    BOOST_TEST(r.body.substr(r.body.find("\r\n\r\n") + 4) == body);
    BOOST_TEST(r.body.find("x-api-key: sk-ant-gateway\r\n") != std::string::npos);
    BOOST_TEST(r.body.find("sk-client") == std::string::npos);  // auth: replace
    BOOST_TEST(r.body.find("anthropic-beta: prompt-caching-2024-07-31\r\n") != std::string::npos);

    std::string gbody = R"({"contents":[{"parts":[{"text":"hi"}]}]})";
    auto g =
        client(f.gw.port())
            .request(make_request("POST", "/v1beta/models/gemini-pro:streamGenerateContent?alt=sse",
                                  gbody, "x-fake-mode: echo\r\n"));
    BOOST_TEST_REQUIRE(g.status == 200u);
    BOOST_TEST(g.body.starts_with(
        "POST /v1beta/models/gemini-pro:streamGenerateContent?alt=sse HTTP/1.1\r\n"));
    BOOST_TEST(g.body.find("x-goog-api-key: g-gateway\r\n") != std::string::npos);
    BOOST_TEST(g.body.substr(g.body.find("\r\n\r\n") + 4) == gbody);

    // A real answer relayed as the provider sent it.
    auto real = client(f.gw.port())
                    .request(make_request("POST", "/v1/messages", body,
                                          "anthropic-version: 2023-06-01\r\n"));
    BOOST_TEST_REQUIRE(real.status == 200u, real.body);
    BOOST_TEST(json::parse(real.body).as_object()["type"] == json::value("message"));
}

BOOST_AUTO_TEST_CASE(openai_upstreams_stay_byte_for_byte) {
    providers_fixture f;
    std::string body = R"({"model":"gpt-4o",  "n": 2, "messages":[]})";
    auto r = f.post(body, "x-fake-mode: echo\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.body.substr(r.body.find("\r\n\r\n") + 4) == body);
}

// A model name is written into Gemini's request target: one holding CR/LF smuggled a second
// request (with the gateway's key) onto the pooled connection, one holding /../ reached other
// Gemini paths. The name is refused before anything is sent; the next request is answered as
// itself.
BOOST_AUTO_TEST_CASE(a_gemini_model_name_cannot_smuggle_a_request_or_leave_its_path) {
    providers_fixture f;
    for (std::string model :
         {"gemini-x:generateContent HTTP/1.1\\r\\nHost: x\\r\\nx-goog-api-key: k\\r\\n\\r\\n"
          "POST /v1beta/files",
          "gemini-x/../../files", "gemini-%2e%2e%2Ffiles", "gemini-x?key=1"}) {
        auto r =
            f.post(R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hi"}]})");
        BOOST_TEST(r.status == 400u, model << ": " << r.body);
        BOOST_TEST(r.body.find("not a Gemini model name") != std::string::npos, r.body);
    }
    BOOST_TEST(f.fake.requests().empty());
    auto ok = f.post(R"({"model":"gemini-2.5-pro","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(ok.status == 200u, ok.body);
    BOOST_TEST_REQUIRE(f.fake.requests().size() == 1u);
    BOOST_TEST(f.fake.requests()[0].target == "/v1beta/models/gemini-2.5-pro:generateContent");
}

// Under `auth: forward` (the default), a translated request used the client's bearer token as the
// provider key even when it was one of the gateway's virtual keys. The passthrough's rule holds on
// every path: the virtual key never leaves, the upstream's own key goes instead.
BOOST_AUTO_TEST_CASE(a_virtual_key_is_never_sent_to_a_translated_provider) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::forward);
    config::virtual_key key;
    key.id = "cfg-v";
    key.name = "v";
    key.digest = config::key_digest("sk-cg-virtual-0123456789");
    c.admin.keys = {key};
    running_gateway gw(c);
    for (std::string model : {"claude-sonnet-4-5", "gemini-2.5-pro"}) {
        client cl(gw.port());
        auto r = cl.request(make_request(
            "POST", "/v1/chat/completions",
            R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hi"}]})",
            "Content-Type: application/json\r\nAuthorization: Bearer "
            "sk-cg-virtual-0123456789\r\n"));
        BOOST_TEST(r.status == 200u, model << ": " << r.body);
    }
    auto seen = fake.requests();
    BOOST_TEST_REQUIRE(seen.size() == 2u);
    BOOST_TEST(seen[0].header("x-api-key") == "sk-ant-gateway");
    BOOST_TEST(seen[1].header("x-goog-api-key") == "g-gateway");
    for (const auto& r : seen) BOOST_TEST(r.raw.find("sk-cg-virtual") == std::string::npos, r.raw);
    // Gemini's ?key= convention: a virtual key there is accepted and never forwarded either.
    client cl(gw.port());
    auto native = cl.request(make_request(
        "POST",
        "/v1beta/models/gemini-2.5-pro:generateContent?key=sk-cg-virtual-0123456789&alt=sse",
        R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
        "Content-Type: application/json\r\n"));
    BOOST_TEST(native.status == 200u, native.body);
    BOOST_TEST_REQUIRE(fake.requests().size() == 3u);
    auto last = fake.requests()[2];
    BOOST_TEST(last.target == "/v1beta/models/gemini-2.5-pro:generateContent?alt=sse");
    BOOST_TEST(last.header("x-goog-api-key") == "g-gateway");
    BOOST_TEST(last.raw.find("sk-cg-virtual") == std::string::npos, last.raw);
}

// A provider (or a proxy before it) that answers a streamed request with one whole JSON reply:
// the client that asked for a stream gets the chunks a stream of that reply would have given.
BOOST_AUTO_TEST_CASE(a_whole_reply_to_a_streamed_request_reaches_the_client_as_a_stream) {
    for (std::string model : {"claude-sonnet-4-5", "gemini-2.5-pro"}) {
        providers_fixture f;
        scripted_reply whole;
        whole.content = "All in one piece.";
        whole.calls = {{"get_weather", R"({"city":"Paris"})"}};
        whole.whole = true;
        f.fake.script({whole});
        auto r = f.post(R"({"model":")" + model +
                        R"(","stream":true,"messages":[{"role":"user","content":"weather?"}],)"
                        R"("tools":)" +
                        weather_tools + "}");
        BOOST_TEST_REQUIRE(r.status == 200u, model << ": " << r.body);
        BOOST_TEST(r.header("content-type").starts_with("text/event-stream"), model);
        auto s = read_chat_stream(r.body);
        BOOST_TEST(s.done, model);
        BOOST_TEST(s.error.empty(), s.error);
        BOOST_TEST(s.text == "All in one piece.", model);
        BOOST_TEST_REQUIRE(s.calls.size() == 1u, model);
        BOOST_TEST(s.calls[0]["name"].as_string() == "get_weather");
        BOOST_TEST(json::parse(s.calls[0]["arguments"].as_string()) ==
                   json::parse(R"({"city":"Paris"})"));
        BOOST_TEST(s.finish_reason == "tool_calls", model);
    }
}

BOOST_AUTO_TEST_SUITE_END()

// Claude Code's API and Codex's, answered by every other provider (docs/providers.md).
BOOST_AUTO_TEST_SUITE(any_agent_any_model)

namespace {

response post_to(providers_fixture& f, std::string_view path, const std::string& body,
                 std::string_view headers = {}) {
    client c(f.gw.port());
    return c.request(make_request("POST", path, body,
                                  "Content-Type: application/json\r\n" + std::string(headers)));
}

BOOST_AUTO_TEST_CASE(an_upstream_without_a_key_is_named_with_the_setting_to_change) {
    // Anthropic refuses a request without x-api-key. A client that sends no key of its own (the
    // console, a local tool) is told which setting is missing, not only "x-api-key required".
    fake_upstream fake;
    auto cfg = three_providers(fake, config::auth_mode::forward);
    cfg.upstreams[1].api_key.clear();
    running_gateway gw{cfg};
    client c(gw.port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions",
                     R"({"model":"claude-sonnet","messages":[{"role":"user","content":"hi"}]})",
                     "Content-Type: application/json\r\n"));
    BOOST_TEST(r.status == 401u, r.body);
    auto message = std::string(json::parse(r.body).at("error").at("message").as_string());
    BOOST_TEST(message.find("the gateway sent it no key: set `api_key` on upstream `up1`") !=
                   std::string::npos,
               message);
    BOOST_TEST(message.find("x-api-key header is required") != std::string::npos, message);
    BOOST_TEST(fake.requests().back().header("x-api-key").empty());
}

BOOST_AUTO_TEST_CASE(a_translated_request_that_is_no_json_or_lacks_a_field_says_so_plainly) {
    providers_fixture f;
    auto before = f.fake.requests().size();
    // Malformed JSON is an invalid body, not an unsupported parameter.
    auto broken = f.post(R"({"model":"claude-sonnet","messages":[)");
    BOOST_TEST(broken.status == 400u);
    auto e1 = json::parse(broken.body).at("error").as_object();
    BOOST_TEST(e1.at("code") == "invalid_json");
    BOOST_TEST(e1.at("type") == "invalid_request_error");
    BOOST_TEST(e1.at("message").as_string().starts_with("The request body is not valid JSON"));
    // A missing field is named once, with OpenAI's code for it.
    auto empty = f.post(R"({"model":"claude-sonnet","messages":[]})");
    BOOST_TEST(empty.status == 400u);
    auto e2 = json::parse(empty.body).at("error").as_object();
    BOOST_TEST(e2.at("message") == "`messages` must be a non-empty array");
    BOOST_TEST(e2.at("param") == "messages");
    BOOST_TEST(e2.at("code") == "missing_required_parameter");
    // The same in Anthropic's envelope for a Messages client on a translated target.
    auto m = post_to(f, "/v1/messages", R"({"model":"gpt-4o","max_tokens":8,"messages":[]})",
                     "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST(m.status == 400u);
    BOOST_TEST(json::parse(m.body).at("error").at("message") ==
               "messages: must be a non-empty array");
    BOOST_TEST(f.fake.requests().size() == before);
}

const std::string claude_headers =
    "x-api-key: sk-client\r\nanthropic-version: 2023-06-01\r\n"
    "anthropic-beta: interleaved-thinking-2025-05-14\r\n";

const std::string read_tool =
    R"([{"name":"Read","description":"Reads a file","input_schema":{"type":"object",
        "properties":{"path":{"type":"string"}},"required":["path"]}}])";

// The Messages stream's tool_use blocks: (id, name, input as assembled).
std::vector<std::array<std::string, 3>> tool_uses(const std::string& body) {
    std::vector<std::array<std::string, 3>> out;
    for (const auto& [name, data] : sse_events(body)) {
        auto o = json::parse(data).as_object();
        if (name == "content_block_start" && o.at("content_block").at("type") == "tool_use")
            out.push_back({std::string(o.at("content_block").at("id").as_string()),
                           std::string(o.at("content_block").at("name").as_string()), ""});
        if (name == "content_block_delta" && o.at("delta").at("type") == "input_json_delta")
            out.back()[2] += o.at("delta").at("partial_json").as_string();
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(messages_reach_an_openai_compatible_model_and_its_calls_come_back) {
    providers_fixture f;
    auto first = post_to(f, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":100,"stream":true,"tools":)" +
                             read_tool + R"(,"messages":[{"role":"user","content":"Read a."}]})",
                         claude_headers);
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("content-type").starts_with("text/event-stream"));
    BOOST_TEST(check_messages_stream(first.body) == "", first.body);
    auto heard = f.fake.requests().back();
    BOOST_TEST(heard.target == "/v1/chat/completions");
    BOOST_TEST(heard.header("anthropic-version").empty());
    BOOST_TEST(heard.header("anthropic-beta").empty());
    auto sent = json::parse(heard.body);
    BOOST_TEST(sent.at("tools").at(0).at("function").at("name") == "Read");
    BOOST_TEST(sent.at("max_tokens") == 100);
    auto calls = tool_uses(first.body);
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST(calls[0][1] == "get_weather");  // the fake's canned OpenAI call
    BOOST_TEST(json::parse(calls[0][2]).is_object());
    BOOST_TEST(first.body.find(R"("stop_reason":"tool_use")") != std::string::npos);

    // The next turn: Claude Code sends the tool_use back with its result.
    json::array content{json::object{{"type", "tool_use"},
                                     {"id", calls[0][0]},
                                     {"name", calls[0][1]},
                                     {"input", json::parse(calls[0][2])}}};
    json::object body{
        {"model", "gpt-4o"},
        {"max_tokens", 100},
        {"tools", json::parse(read_tool)},
        {"messages",
         json::array{
             json::object{{"role", "user"}, {"content", "Read a."}},
             json::object{{"role", "assistant"}, {"content", content}},
             json::object{{"role", "user"},
                          {"content", json::array{json::object{{"type", "tool_result"},
                                                               {"tool_use_id", calls[0][0]},
                                                               {"content", "contents of a"}}}}}}}};
    auto second = post_to(f, "/v1/messages", json::serialize(body), claude_headers);
    BOOST_TEST_REQUIRE(second.status == 200u, second.body);
    auto answer = json::parse(second.body).as_object();
    BOOST_TEST(answer.at("type") == "message");
    BOOST_TEST(answer.at("role") == "assistant");
    BOOST_TEST(answer.at("model") == "gpt-4o");
    auto resent = json::parse(f.fake.requests().back().body);
    const auto& messages = resent.at("messages").as_array();
    BOOST_TEST(messages.at(2).at("role") == "tool");
    BOOST_TEST(messages.at(2).at("tool_call_id").as_string() == calls[0][0]);
    BOOST_TEST(messages.at(2).at("content") == "contents of a");
}

BOOST_AUTO_TEST_CASE(messages_reach_gemini_and_its_signature_survives_the_round_trip) {
    providers_fixture f;
    auto first = post_to(f, "/v1/messages",
                         R"({"model":"gemini-fast","max_tokens":100,"stream":true,"tools":)" +
                             read_tool + R"(,"messages":[{"role":"user","content":"Read a."}]})",
                         claude_headers);
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(check_messages_stream(first.body) == "", first.body);
    BOOST_TEST(f.fake.requests().back().target ==
               "/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse");
    auto calls = tool_uses(first.body);
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST(calls[0][0].starts_with("cgs1-"));  // the thought signature rides in the id
    // Gemini refuses a model turn whose call lost its signature: this one is taken.
    json::object body{
        {"model", "gemini-fast"},
        {"max_tokens", 100},
        {"tools", json::parse(read_tool)},
        {"messages",
         json::array{
             json::object{{"role", "user"}, {"content", "Read a."}},
             json::object{{"role", "assistant"},
                          {"content",
                           json::array{json::object{{"type", "tool_use"},
                                                    {"id", calls[0][0]},
                                                    {"name", "Read"},
                                                    {"input", json::parse(calls[0][2])}}}}},
             json::object{{"role", "user"},
                          {"content", json::array{json::object{{"type", "tool_result"},
                                                               {"tool_use_id", calls[0][0]},
                                                               {"is_error", true},
                                                               {"content", "no such file"}}}}}}}};
    auto second = post_to(f, "/v1/messages", json::serialize(body), claude_headers);
    BOOST_TEST_REQUIRE(second.status == 200u, second.body);
    auto resent = json::parse(f.fake.requests().back().body);
    const auto& parts = resent.at("contents").at(1).at("parts").as_array();
    BOOST_TEST(parts.at(0).at("thoughtSignature").as_string().starts_with("fake-sig-"));
    BOOST_TEST(
        resent.at("contents").at(2).at("parts").at(0).at("functionResponse").at("response") ==
        json::parse(R"({"error":"no such file"})"));
}

BOOST_AUTO_TEST_CASE(count_tokens_is_estimated_on_a_translated_route_and_forwarded_to_claude) {
    providers_fixture f;
    auto before = f.fake.requests().size();
    auto r = post_to(f, "/v1/messages/count_tokens",
                     R"({"model":"gemini-pro","messages":[{"role":"user","content":"abcdefgh"}]})",
                     claude_headers);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(json::parse(r.body).at("input_tokens") == 2);
    BOOST_TEST(r.header("x-contextgate-estimate") == "true");
    BOOST_TEST(f.fake.requests().size() == before);  // no model was asked
    auto claude = post_to(f, "/v1/messages/count_tokens",
                          R"({"model":"claude-sonnet","messages":[{"role":"user","content":"a"}]})",
                          claude_headers + "x-fake-mode: echo\r\n");
    BOOST_TEST(claude.body.starts_with("POST /v1/messages/count_tokens HTTP/1.1\r\n"), claude.body);
}

BOOST_AUTO_TEST_CASE(messages_errors_come_in_anthropics_envelope_before_any_byte) {
    providers_fixture f;
    auto limited = post_to(
        f, "/v1/messages",
        R"({"model":"gpt-4o","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
        claude_headers + "x-fake-status: 429\r\n");
    BOOST_TEST(limited.status == 429u, limited.body);
    BOOST_TEST(limited.header("retry-after") == "7");
    auto body = json::parse(limited.body);
    BOOST_TEST(body.at("type") == "error");
    BOOST_TEST(body.at("error").at("type") == "rate_limit_error");

    auto refused = post_to(
        f, "/v1/messages",
        R"({"model":"gpt-4o","max_tokens":9,"top_k":3,"messages":[{"role":"user","content":"hi"}]})",
        claude_headers);
    BOOST_TEST(refused.status == 400u);
    BOOST_TEST(json::parse(refused.body).at("error").at("type") == "invalid_request_error");
    BOOST_TEST(refused.body.find("top_k") != std::string::npos);

    auto bad_json = post_to(f, "/v1/messages", "{\"model\":\"gpt-4o\",", claude_headers);
    BOOST_TEST(bad_json.status == 400u);
    BOOST_TEST(json::parse(bad_json.body).at("type") == "error");

    // A stream cut after output ends with Anthropic's error event, never a second lifecycle.
    auto cut = post_to(
        f, "/v1/messages",
        R"({"model":"gpt-4o","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
        claude_headers + "x-fake-reset-after: 2\r\n");
    BOOST_TEST(cut.status == 200u);
    BOOST_TEST(check_messages_stream(cut.body) == "", cut.body);
    BOOST_TEST(sse_events(cut.body).back().first == "error");
}

BOOST_AUTO_TEST_CASE(responses_reach_claude_and_gemini_as_codex_expects) {
    providers_fixture f;
    const std::string tools =
        R"([{"type":"function","name":"shell","parameters":{"type":"object","properties":
            {"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}},
            {"type":"custom","name":"apply_patch","description":"Patch files."}])";
    for (std::string model : {"claude-sonnet", "gemini-pro"}) {
        BOOST_TEST_CONTEXT(model) {
            auto first = post_to(f, "/v1/responses",
                                 R"({"model":")" + model +
                                     R"(","stream":true,"store":false,"instructions":"Be Codex.",
                                 "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"ls"}]}],
                                 "tools":)" +
                                     tools + "}");
            BOOST_TEST_REQUIRE(first.status == 200u, first.body);
            BOOST_TEST(check_responses_stream(first.body) == "", first.body);
            auto events = sse_events(first.body);
            auto done = json::parse(events.back().second);
            BOOST_TEST(done.at("type") == "response.completed");
            BOOST_TEST(done.at("response").at("model").as_string() == model);
            const auto& output = done.at("response").at("output").as_array();
            BOOST_TEST_REQUIRE(!output.empty());
            // The canned answer calls the first two tools: shell, and the patch tool as a
            // custom_tool_call with its raw input.
            BOOST_TEST(output.at(0).at("type") == "function_call");
            BOOST_TEST(output.at(0).at("name") == "shell");
            BOOST_TEST(output.at(1).at("type") == "custom_tool_call");
            BOOST_TEST(output.at(1).at("input").is_string());

            // The round trip: the calls and their outputs go back as items.
            json::array input{json::parse(
                R"({"type":"message","role":"user","content":[{"type":"input_text","text":"ls"}]})")};
            json::object call = output.at(0).as_object();
            input.push_back(call);
            input.push_back({{"type", "function_call_output"},
                             {"call_id", call.at("call_id")},
                             {"output", "a.txt"}});
            json::object custom = output.at(1).as_object();
            input.push_back(custom);
            input.push_back({{"type", "custom_tool_call_output"},
                             {"call_id", custom.at("call_id")},
                             {"output", "Done!"}});
            json::object body{{"model", model},
                              {"store", false},
                              {"input", input},
                              {"tools", json::parse(tools)}};
            auto second = post_to(f, "/v1/responses", json::serialize(body));
            BOOST_TEST_REQUIRE(second.status == 200u, second.body);
            auto answer = json::parse(second.body);
            BOOST_TEST(answer.at("object") == "response");
            BOOST_TEST(answer.at("status") == "completed");
        }
    }
}

BOOST_AUTO_TEST_CASE(responses_translate_for_an_openai_compatible_server_without_them) {
    fake_upstream fake;
    auto cfg = three_providers(fake, config::auth_mode::replace);
    cfg.upstreams[0].translate_responses = true;
    running_gateway gw{cfg};
    client c(gw.port());
    auto r = c.request(make_request("POST", "/v1/responses",
                                    R"({"model":"gpt-4o","stream":true,"input":"hi"})",
                                    "Content-Type: application/json\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(fake.requests().back().target == "/v1/chat/completions");
    BOOST_TEST(check_responses_stream(r.body) == "", r.body);
    BOOST_TEST(r.body.find("Hello from the fake upstream!") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(responses_errors_carry_the_codes_codex_acts_on_and_websockets_are_refused) {
    fake_upstream fake;
    auto cfg = three_providers(fake, config::auth_mode::replace);
    cfg.upstreams[0].translate_responses = true;
    running_gateway gw{cfg};
    client c(gw.port());
    auto limited = c.request(make_request(
        "POST", "/v1/responses", R"({"model":"claude-sonnet","stream":true,"input":"hi"})",
        "Content-Type: application/json\r\nx-fake-status: 429\r\n"));
    BOOST_TEST(limited.status == 429u, limited.body);
    BOOST_TEST(limited.header("retry-after") == "7");
    BOOST_TEST(json::parse(limited.body).at("error").at("code") == "rate_limit_exceeded");
    // An upstream that serves no Responses endpoint has no WebSocket one either: refused at once,
    // so Codex falls back to HTTP.
    client ws(gw.port());
    auto refused = ws.request(make_request("GET", "/v1/responses", "",
                                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                           "Sec-WebSocket-Version: 13\r\n"
                                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"));
    BOOST_TEST(refused.status == 400u, refused.body);
    BOOST_TEST(refused.body.find("responses: translate") != std::string::npos, refused.body);
    BOOST_TEST(fake.requests().size() == 1u);  // only the 429 reached it
}

BOOST_AUTO_TEST_CASE(responses_state_and_server_tools_are_refused_by_name) {
    providers_fixture f;
    auto r = post_to(f, "/v1/responses",
                     R"({"model":"claude-sonnet","input":"hi","previous_response_id":"resp_1"})");
    BOOST_TEST(r.status == 400u);
    BOOST_TEST(json::parse(r.body).at("error").at("param") == "previous_response_id");
    // Native OpenAI upstreams keep the Responses API as it is, state included.
    auto native = post_to(f, "/v1/responses",
                          R"({"model":"gpt-4o","input":"hi","previous_response_id":"resp_1"})",
                          "x-fake-mode: echo\r\n");
    BOOST_TEST(native.status == 200u);
    BOOST_TEST(native.body.starts_with("POST /v1/responses HTTP/1.1\r\n"));
}

BOOST_AUTO_TEST_SUITE_END()

// Gemini CLI's API answered by the other providers.
BOOST_AUTO_TEST_SUITE(gemini_clients_any_model)

using any_agent_any_model::post_to;

namespace {
const std::string gemini_tools =
    R"([{"functionDeclarations":[{"name":"read_file","description":"Reads a file",
        "parametersJsonSchema":{"type":"object","properties":{"path":{"type":"string"}},
                                "required":["path"]}}]}])";

// The parts of every response in a Gemini stream, in order.
std::vector<json::object> parts_of(const std::string& body) {
    std::vector<json::object> out;
    for (const auto& [name, data] : sse_events(body)) {
        auto response = json::parse(data);
        if (!response.as_object().contains("candidates")) continue;
        for (const auto& p : response.at("candidates").at(0).at("content").at("parts").as_array())
            out.push_back(p.as_object());
    }
    return out;
}
}  // namespace

BOOST_AUTO_TEST_CASE(gemini_cli_reaches_an_openai_compatible_model_and_claude) {
    providers_fixture f;
    for (std::string model : {"gpt-4o", "claude-sonnet"}) {
        BOOST_TEST_CONTEXT(model) {
            auto path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse";
            auto first = post_to(f, path,
                                 R"({"contents":[{"role":"user","parts":[{"text":"Read a."}]}],
                                     "systemInstruction":{"parts":[{"text":"Be Gemini CLI."}]},
                                     "tools":)" +
                                     gemini_tools + "}",
                                 "x-goog-api-key: client-key\r\n");
            BOOST_TEST_REQUIRE(first.status == 200u, first.body);
            BOOST_TEST(first.header("content-type").starts_with("text/event-stream"));
            BOOST_TEST(check_gemini_stream(first.body) == "", first.body);
            auto parts = parts_of(first.body);
            json::object call;
            for (const auto& p : parts)
                if (p.contains("functionCall")) call = p.at("functionCall").as_object();
            BOOST_TEST_REQUIRE(!call.empty(), first.body);
            BOOST_TEST(call.at("args").is_object());
            BOOST_TEST(!call.at("id").as_string().empty());

            // The round trip: the call and its response, matched by the id Gemini CLI echoes.
            json::object body{
                {"contents",
                 json::array{
                     json::parse(R"({"role":"user","parts":[{"text":"Read a."}]})"),
                     json::object{{"role", "model"},
                                  {"parts", json::array{json::object{{"functionCall", call}}}}},
                     json::object{
                         {"role", "user"},
                         {"parts", json::array{json::object{
                                       {"functionResponse",
                                        {{"id", call.at("id")},
                                         {"name", call.at("name")},
                                         {"response", {{"output", "contents of a"}}}}}}}}}}},
                {"tools", json::parse(gemini_tools)}};
            auto second =
                post_to(f, "/v1beta/models/" + model + ":generateContent", json::serialize(body));
            BOOST_TEST_REQUIRE(second.status == 200u, second.body);
            auto answer = json::parse(second.body);
            BOOST_TEST(answer.at("candidates").at(0).at("content").at("role") == "model");
            BOOST_TEST(answer.at("modelVersion").as_string() == model);
            BOOST_TEST(f.fake.requests().back().body.find("contents of a") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(without_alt_sse_the_stream_is_one_json_array) {
    providers_fixture f;
    auto r = post_to(f, "/v1beta/models/gpt-4o:streamGenerateContent",
                     R"({"contents":[{"parts":[{"text":"hi"}]}]})");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type").starts_with("application/json"));
    BOOST_TEST(check_gemini_stream(r.body, false) == "", r.body);
}

BOOST_AUTO_TEST_CASE(count_tokens_errors_and_refusals_in_geminis_shapes) {
    providers_fixture f;
    auto before = f.fake.requests().size();
    auto counted = post_to(f, "/v1beta/models/claude-sonnet:countTokens",
                           R"({"contents":[{"parts":[{"text":"abcdefgh"}]}]})");
    BOOST_TEST_REQUIRE(counted.status == 200u, counted.body);
    BOOST_TEST(json::parse(counted.body).at("totalTokens") == 2);
    BOOST_TEST(f.fake.requests().size() == before);

    auto limited = post_to(f, "/v1beta/models/gpt-4o:streamGenerateContent?alt=sse",
                           R"({"contents":[{"parts":[{"text":"hi"}]}]})", "x-fake-status: 429\r\n");
    BOOST_TEST(limited.status == 429u);
    BOOST_TEST(json::parse(limited.body).at("error").at("status") == "RESOURCE_EXHAUSTED");

    auto refused = post_to(
        f, "/v1beta/models/gpt-4o:generateContent",
        R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"candidateCount":3}})");
    BOOST_TEST(refused.status == 400u);
    BOOST_TEST(json::parse(refused.body).at("error").at("status") == "INVALID_ARGUMENT");
    BOOST_TEST(refused.body.find("candidateCount") != std::string::npos);

    // Other Gemini methods are not translated: refused, not sent to the Gemini upstream.
    auto embed = post_to(f, "/v1beta/models/gpt-4o:embedContent", R"({"content":{}})");
    BOOST_TEST(embed.status == 400u);
    // A Gemini model keeps the passthrough.
    auto native = post_to(f, "/v1beta/models/gemini-pro:generateContent",
                          R"({"contents":[{"parts":[{"text":"hi"}]}]})", "x-fake-mode: echo\r\n");
    BOOST_TEST(native.body.starts_with("POST /v1beta/models/gemini-pro:generateContent HTTP/1.1"));
    // Gemini's stable API (/v1/models/…, what @google/genai asks by default) is the same API.
    auto stable = post_to(f, "/v1/models/gemini-pro:generateContent",
                          R"({"contents":[{"parts":[{"text":"hi"}]}]})", "x-fake-mode: echo\r\n");
    BOOST_TEST(stable.body.starts_with("POST /v1beta/models/gemini-pro:generateContent HTTP/1.1"),
               stable.body);
    auto translated = post_to(f, "/v1/models/gpt-4o:generateContent",
                              R"({"contents":[{"parts":[{"text":"hi"}]}]})");
    BOOST_TEST(translated.status == 200u, translated.body);
    BOOST_TEST(json::parse(translated.body).as_object().contains("candidates"));
}

// A schema of about 1.3 KB whose definitions refer to each other 8 times a level: `$ref` to
// `#/$defs/d{top}` inlines 8^(8 - top) leaves.
json::object fanned_schema(int top) {
    auto defs = gateway::testing::schema_dag_defs();
    return {{"type", "object"},
            {"properties", {{"x", {{"$ref", "#/$defs/d" + std::to_string(top)}}}}},
            {"$defs", std::move(defs)}};
}

// 40 small tools whose `$defs` form a DAG (each inlines to about 20,000 nodes, within what one
// tool may) made a 20 MB body for Gemini: inlining is bounded per request, and such a request is
// refused with 400 in the client's own envelope, whatever API it speaks.
BOOST_AUTO_TEST_CASE(schema_inlining_for_gemini_is_bounded_per_request_in_every_client_api) {
    providers_fixture f;
    auto tools_as = [](std::string_view api, int count) {
        json::array tools;
        for (int i = 0; i < count; ++i) {
            auto name = "t" + std::to_string(i);
            if (api == "chat")
                tools.push_back({{"type", "function"},
                                 {"function", {{"name", name}, {"parameters", fanned_schema(4)}}}});
            else if (api == "messages")
                tools.push_back({{"name", name}, {"input_schema", fanned_schema(4)}});
            else
                tools.push_back(
                    {{"type", "function"}, {"name", name}, {"parameters", fanned_schema(4)}});
        }
        return tools;
    };
    auto ask = [&](std::string_view api, int tools) {
        json::object body{{"model", "gemini-pro"}, {"tools", tools_as(api, tools)}};
        if (api == "chat") {
            body["messages"] = json::array{{{"role", "user"}, {"content", "hi"}}};
            return post_to(f, "/v1/chat/completions", json::serialize(body));
        }
        if (api == "messages") {
            body["max_tokens"] = 9;
            body["messages"] = json::array{{{"role", "user"}, {"content", "hi"}}};
            return post_to(f, "/v1/messages", json::serialize(body),
                           any_agent_any_model::claude_headers);
        }
        body["input"] = "hi";
        return post_to(f, "/v1/responses", json::serialize(body));
    };
    auto before = f.fake.requests().size();
    for (std::string api : {"chat", "messages", "responses"}) {
        BOOST_TEST_CONTEXT(api) {
            auto refused = ask(api, 40);
            BOOST_TEST(refused.status == 400u, refused.body.substr(0, 300));
            auto error = json::parse(refused.body);
            BOOST_TEST(error.at("error").at("message").as_string().find(
                           "once their `$ref`s are inlined") != std::string::npos,
                       refused.body.substr(0, 300));
            if (api == "messages") BOOST_TEST(error.at("type") == "error");
        }
    }
    BOOST_TEST(f.fake.requests().size() == before);  // nothing reached Gemini
    // One such tool is inlined and sent.
    auto one = ask("chat", 1);
    BOOST_TEST(one.status == 200u, one.body.substr(0, 300));
    BOOST_TEST_REQUIRE(f.fake.requests().size() == before + 1);
    BOOST_TEST(f.fake.requests().back().body.find("$ref") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_providers_test
