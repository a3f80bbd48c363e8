// Models on Google Vertex AI behind /v1 and behind the gateway's /vertex: the gateway in-process
// against the fake upstream's Vertex AI (Gemini below publishers/google, Claude's rawPredict below
// publishers/anthropic), which refuses a request without a good access token, a rawPredict body
// that names its model or another version, and what Gemini and Claude refuse themselves. The
// tokens come from the fake Google token issuer, through a service-account key file.
#include "tests/integration/harness.hpp"
#include "tests/support/fake_google.hpp"
#include "tests/support/fake_providers.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <thread>
#include <tuple>

namespace integration_vertex_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

const std::string claude = "claude-sonnet-4-5@20250929";
const std::string gemini = "gemini-2.5-flash";
const std::string below = "/v1/projects/my-project/locations/us-east5/publishers/";
const std::string claude_path = below + "anthropic/models/" + claude;
const std::string gemini_path = below + "google/models/" + gemini;

// A service account, its key file, and the fake Google token endpoint that takes its assertions
// and issues tokens that live `lifetime`.
class google_account {
public:
    explicit google_account(std::chrono::seconds lifetime = std::chrono::seconds(3600))
        : oauth_(account_, lifetime), key_file_(temporary_folder() + "/service-account.json") {
        std::ofstream(key_file_) << account_.key_file(oauth_.token_uri());
    }
    const std::string& key_file() const { return key_file_; }
    std::string check(std::string_view token) const { return oauth_.check(token); }
    std::size_t issued() const { return oauth_.issued(); }

private:
    test_service_account account_;
    fake_google_oauth oauth_;
    std::string key_file_;
};

// The fake as an OpenAI-compatible upstream (gpt-*) and a Vertex AI one (gemini-*, claude-*)
// whose tokens `google` issues.
config::gateway_config with_vertex(const fake_upstream& fake, const google_account& google) {
    auto c = make_config({fake.base_url(), "http://127.0.0.1:" + std::to_string(fake.port())});
    c.upstreams[0].models = {"gpt-*"};
    auto& v = c.upstreams[1];
    v.name = "vertex";
    v.provider = config::provider_kind::gemini;
    v.host = config::hosting::vertex;
    v.tool_calling = config::tool_calling_mode::native;
    v.project = "my-project";
    v.location = "us-east5";
    v.credentials_file = google.key_file();
    v.models = {"gemini-*", "claude-*"};
    return c;
}

// A fake Vertex whose tokens must be `google`'s, and live.
fake_options checked_by(const google_account& google) {
    fake_options o;
    o.vertex_tokens = [&google](std::string_view token) { return google.check(token); };
    return o;
}

response post(const running_gateway& gw, const std::string& path, const std::string& body,
              std::string_view headers = {}) {
    client c(gw.port());
    return c.request(make_request("POST", path, body,
                                  "Content-Type: application/json\r\n" + std::string(headers)));
}

std::string chat(const std::string& model, bool stream = false, std::string extra = "") {
    return R"({"model":")" + model + R"(","stream":)" + (stream ? "true" : "false") + extra +
           R"(,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})";
}

std::string error_message(const response& r) {
    auto body = json::parse(r.body);
    return std::string(body.as_object().at("error").as_object().at("message").as_string());
}

const std::string weather_tools = R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather in a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";

// Sent with the gateway's token, never a credential of the client's.
void authorised_by_the_gateway(const google_account& google, const received_request& sent) {
    auto authorization = sent.header("authorization");
    BOOST_TEST_REQUIRE(authorization.starts_with("Bearer "));
    BOOST_TEST(google.check(std::string_view(authorization).substr(7)).empty(), authorization);
    BOOST_TEST(sent.raw.find("sk-client") == std::string::npos);
    BOOST_TEST(sent.raw.find("ya29.the-clients-own") == std::string::npos);
    BOOST_TEST(sent.header("x-api-key").empty());
    BOOST_TEST(sent.header("x-goog-api-key").empty());
}

std::string text_of_message(const response& r) {
    auto body = json::parse(r.body).as_object();
    return std::string(body["content"].as_array()[0].as_object()["text"].as_string());
}

std::string text_of_candidate(const json::value& v) {
    return std::string(
        v.at("candidates").at(0).at("content").at("parts").at(0).at("text").as_string());
}

// The text of an SSE stream of JSON events: each event's text by `text_of`, concatenated.
template <class Read>
std::string text_of_events(const std::string& body, Read text_of) {
    std::string text;
    std::size_t at = 0;
    while ((at = body.find("data: ", at)) != std::string::npos) {
        auto end = body.find('\n', at);
        auto data = body.substr(at + 6, end - at - 6);
        at = end;
        boost::system::error_code ec;
        auto v = json::parse(data, ec);
        if (!ec) text += text_of(v);
    }
    return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vertex)

BOOST_AUTO_TEST_CASE(chat_completions_reach_gemini_and_claude_whole_and_streamed) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    for (const auto& [model, path, method] :
         {std::tuple{gemini, gemini_path, std::string(":generateContent")},
          std::tuple{claude, claude_path, std::string(":rawPredict")}}) {
        auto r =
            post(gw, "/v1/chat/completions", chat(model), "Authorization: Bearer sk-client\r\n");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        auto body = json::parse(r.body).as_object();
        BOOST_TEST(body["model"] == json::value(model));
        BOOST_TEST(body["choices"].at(0).at("message").at("content") ==
                   json::value("Hello from the fake upstream!"));
        auto sent = fake.requests().back();
        BOOST_TEST(sent.target == path + method);
        authorised_by_the_gateway(google, sent);
        auto wire = json::parse(sent.body).as_object();
        BOOST_TEST(!wire.contains("model"));

        auto s = post(gw, "/v1/chat/completions", chat(model, true));
        BOOST_TEST_REQUIRE(s.status == 200u, s.body);
        auto stream = read_chat_stream(s.body);
        BOOST_TEST(stream.done);
        BOOST_TEST(stream.error.empty(), stream.error);
        BOOST_TEST(stream.text == "Hello from the fake upstream!");
        BOOST_TEST(stream.finish_reason == "stop");
        sent = fake.requests().back();
        BOOST_TEST(sent.target == (model == gemini ? gemini_path + ":streamGenerateContent?alt=sse"
                                                   : claude_path + ":streamRawPredict"));
        authorised_by_the_gateway(google, sent);
    }
    auto claude_body = json::parse(fake.requests().back().body).as_object();
    BOOST_TEST(claude_body["anthropic_version"] == json::value("vertex-2023-10-16"));
    BOOST_TEST(claude_body["system"] == json::value("Be brief."));
}

BOOST_AUTO_TEST_CASE(responses_reach_both_translated) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    for (const auto& model : {gemini, claude}) {
        auto r = post(gw, "/v1/responses", R"({"model":")" + model + R"(","input":"hi"})");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        auto body = json::parse(r.body);
        BOOST_TEST(body.at("status") == json::value("completed"));
        BOOST_TEST(r.body.find("Hello from the fake upstream!") != std::string::npos, r.body);
        auto s =
            post(gw, "/v1/responses", R"({"model":")" + model + R"(","input":"hi","stream":true})");
        BOOST_TEST_REQUIRE(s.status == 200u, s.body);
        BOOST_TEST(s.body.find("response.completed") != std::string::npos, s.body);
    }
}

BOOST_AUTO_TEST_CASE(a_messages_client_keeps_its_body_but_for_the_model_and_version) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    // What Converse or a translation would lose: a thinking block's signature, cache_control.
    const std::string rest =
        R"("max_tokens":64,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"Hm.","signature":"c2lnbmF0dXJl"},{"type":"text","text":"Yes?"}]},{"role":"user","content":"go on"}])";
    for (bool stream : {false, true}) {
        auto body =
            R"({"model":")" + claude + R"(",)" + rest + (stream ? R"(,"stream":true})" : "}");
        auto r = post(gw, "/v1/messages", body,
                      "anthropic-version: 2023-06-01\r\nx-api-key: sk-client\r\n");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        auto sent = fake.requests().back();
        BOOST_TEST(sent.target == claude_path + (stream ? ":streamRawPredict" : ":rawPredict"));
        BOOST_TEST(sent.body == R"({"anthropic_version":"vertex-2023-10-16",)" + rest +
                                    (stream ? R"(,"stream":true})" : "}"));
        authorised_by_the_gateway(google, sent);
        if (stream) {
            BOOST_TEST(r.header("content-type").starts_with("text/event-stream"));
            BOOST_TEST(r.body.find("event: message_stop") != std::string::npos, r.body);
        } else {
            BOOST_TEST(text_of_message(r) == "Hello from the fake upstream!");
        }
    }
    // count_tokens: Vertex's Claude has none at these paths, the gateway estimates.
    auto counted =
        post(gw, "/v1/messages/count_tokens",
             R"({"model":")" + claude + R"(","messages":[{"role":"user","content":"hi"}]})",
             "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(counted.status == 200u, counted.body);
    BOOST_TEST(counted.header("x-contextgate-estimate") == "true");
}

BOOST_AUTO_TEST_CASE(a_generate_content_client_keeps_its_body_byte_for_byte) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    const std::string body =
        R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}], "generationConfig": {"temperature": 0.5}})";
    auto r = post(gw, "/v1beta/models/" + gemini + ":generateContent", body,
                  "x-goog-api-key: sk-client\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(text_of_candidate(json::parse(r.body)) == "Hello from the fake upstream!");
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == gemini_path + ":generateContent");
    BOOST_TEST(sent.body == body);
    authorised_by_the_gateway(google, sent);

    auto s =
        post(gw, "/v1beta/models/" + gemini + ":streamGenerateContent?alt=sse&key=sk-client", body);
    BOOST_TEST_REQUIRE(s.status == 200u, s.body);
    BOOST_TEST(text_of_events(s.body, text_of_candidate) == "Hello from the fake upstream!");
    sent = fake.requests().back();
    // The client's key in the query never goes there either.
    BOOST_TEST(sent.target == gemini_path + ":streamGenerateContent?alt=sse");
    BOOST_TEST(sent.body == body);
    authorised_by_the_gateway(google, sent);

    auto counted = post(gw, "/v1beta/models/" + gemini + ":countTokens", body);
    BOOST_TEST_REQUIRE(counted.status == 200u, counted.body);
    BOOST_TEST(json::parse(counted.body).at("totalTokens") == json::value(12));
    BOOST_TEST(fake.requests().back().target == gemini_path + ":countTokens");
}

BOOST_AUTO_TEST_CASE(each_dialect_reaches_the_other_publisher_translated) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    // Gemini's API to Claude on Vertex, Anthropic's to Gemini on Vertex.
    auto g = post(gw, "/v1beta/models/" + claude + ":generateContent",
                  R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})");
    BOOST_TEST_REQUIRE(g.status == 200u, g.body);
    BOOST_TEST(text_of_candidate(json::parse(g.body)) == "Hello from the fake upstream!");
    BOOST_TEST(fake.requests().back().target == claude_path + ":rawPredict");
    auto m =
        post(gw, "/v1/messages",
             R"({"model":")" + gemini +
                 R"(","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
             "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST(m.body.find("event: message_stop") != std::string::npos, m.body);
    BOOST_TEST(fake.requests().back().target == gemini_path + ":streamGenerateContent?alt=sse");
}

BOOST_AUTO_TEST_CASE(a_tool_round_trip_reaches_gemini_and_claude) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    for (const auto& model : {gemini, claude}) {
        std::string ask = R"({"model":")" + model + R"(","tools":)" + weather_tools +
                          R"(,"messages":[{"role":"user","content":"weather in Paris?"}]})";
        auto called = post(gw, "/v1/chat/completions", ask);
        BOOST_TEST_REQUIRE(called.status == 200u, called.body);
        auto choice = json::parse(called.body).as_object()["choices"].as_array()[0].as_object();
        BOOST_TEST(choice["finish_reason"] == json::value("tool_calls"));
        auto call = choice["message"].as_object()["tool_calls"].as_array()[0].as_object();
        auto id = std::string(call["id"].as_string());
        BOOST_TEST(call["function"].as_object()["name"] == json::value("get_weather"));
        // Gemini's call carries its thought signature back (extra_content): sent as it came.
        std::string extra;
        if (auto* e = call.if_contains("extra_content"))
            extra = R"(,"extra_content":)" + json::serialize(*e);
        std::string answer = R"({"model":")" + model + R"(","tools":)" + weather_tools +
                             R"(,"messages":[{"role":"user","content":"weather in Paris?"},
          {"role":"assistant","content":null,"tool_calls":[{"id":")" +
                             id + R"(","type":"function","function":{"name":"get_weather",
            "arguments":"{\"city\":\"Paris\"}"})" +
                             extra + R"(}]},
          {"role":"tool","tool_call_id":")" +
                             id + R"(","content":"sunny"}]})";
        auto done = post(gw, "/v1/chat/completions", answer);
        BOOST_TEST_REQUIRE(done.status == 200u, done.body);
        auto text = json::parse(done.body).as_object()["choices"].as_array()[0].as_object();
        BOOST_TEST(text["message"].as_object()["content"] ==
                   json::value("Hello from the fake upstream!"));
        BOOST_TEST(fake.requests().back().body.find("sunny") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(vertex_errors_are_mapped_and_a_429_cools_the_target) {
    google_account google;
    fake_upstream fake(checked_by(google));
    auto c = with_vertex(fake, google);
    // A route from Claude on Vertex to a model of the OpenAI-compatible upstream.
    config::route_config route;
    route.model = "house";
    route.targets.push_back({"vertex", claude, 1, 1});
    route.targets.push_back({"up0", "gpt-4o", 1, 0});
    c.routes.push_back(route);
    running_gateway gw(c);
    // Without a route, Vertex's RESOURCE_EXHAUSTED is the client's 429, in its envelope.
    fake.script({{"Quota exceeded for aiplatform.googleapis.com", "stop", 429, "", 0}});
    auto refused = post(gw, "/v1/chat/completions", chat(gemini));
    BOOST_TEST(refused.status == 429u, refused.body);
    BOOST_TEST(error_message(refused).find("Quota exceeded") != std::string::npos, refused.body);
    // On a route it cools Claude on Vertex: the next target answers, and the next request
    // goes there first.
    fake.script({{"Quota exceeded", "stop", 429, "", 0}, {"from gpt"}, {"from gpt again"}});
    auto routed = post(gw, "/v1/chat/completions", chat("house"));
    BOOST_TEST_REQUIRE(routed.status == 200u, routed.body);
    BOOST_TEST(routed.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(routed.header("x-contextgate-attempts") == "2");
    auto next = post(gw, "/v1/chat/completions", chat("house"));
    BOOST_TEST_REQUIRE(next.status == 200u, next.body);
    BOOST_TEST(next.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(next.header("x-contextgate-attempts") == "1");
}

BOOST_AUTO_TEST_CASE(a_route_target_on_vertex_hears_its_own_model_in_the_path) {
    google_account google;
    fake_upstream fake(checked_by(google));
    auto c = with_vertex(fake, google);
    config::route_config route;
    route.model = "house:fast";
    route.targets.push_back({"vertex", gemini, 1, 1});
    c.routes.push_back(route);
    running_gateway gw(c);
    auto r = post(gw, "/v1/chat/completions", chat("house:fast"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(fake.requests().back().target == gemini_path + ":generateContent");
    auto g = post(gw, "/v1beta/models/house:fast:generateContent",
                  R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})");
    BOOST_TEST_REQUIRE(g.status == 200u, g.body);
    BOOST_TEST(fake.requests().back().target == gemini_path + ":generateContent");
}

// Vertex AI's own paths, as Claude Code (CLAUDE_CODE_USE_VERTEX) and @google/genai (vertexai:
// true) send them: the client's project and location are its own.
const std::string native = "/vertex/v1/projects/client-project/locations/europe-west1/publishers/";
const std::string raw_body =
    R"({"anthropic_version":"vertex-2023-10-16","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})";
const std::string gemini_body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
const std::string clients_own = "Authorization: Bearer ya29.the-clients-own\r\n";

BOOST_AUTO_TEST_CASE(native_paths_go_byte_exact_below_the_upstreams_project_and_location) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    struct asked {
        std::string path, body, upstream_target;
    };
    for (const auto& a : {
             asked{native + "anthropic/models/" + claude + ":rawPredict", raw_body,
                   claude_path + ":rawPredict"},
             asked{native + "anthropic/models/" + claude + ":streamRawPredict", raw_body,
                   claude_path + ":streamRawPredict"},
             asked{native + "google/models/" + gemini + ":generateContent", gemini_body,
                   gemini_path + ":generateContent"},
             asked{native + "google/models/" + gemini + ":streamGenerateContent?alt=sse",
                   gemini_body, gemini_path + ":streamGenerateContent?alt=sse"},
             asked{native + "google/models/" + gemini + ":countTokens", gemini_body,
                   gemini_path + ":countTokens"},
         }) {
        auto r = post(gw, a.path, a.body, clients_own);
        BOOST_TEST_REQUIRE(r.status == 200u, a.path << ": " << r.body);
        auto sent = fake.requests().back();
        BOOST_TEST(sent.target == a.upstream_target);
        BOOST_TEST(sent.body == a.body);
        authorised_by_the_gateway(google, sent);
    }
    auto streamed = post(gw, native + "anthropic/models/" + claude + ":streamRawPredict", raw_body);
    BOOST_TEST(streamed.header("content-type").starts_with("text/event-stream"));
    BOOST_TEST(streamed.body.find("event: message_stop") != std::string::npos, streamed.body);
}

BOOST_AUTO_TEST_CASE(native_paths_of_v1beta1_ask_the_upstream_the_same_version) {
    // @google/genai in Vertex mode asks v1beta1 unless told otherwise; the fake Vertex, as
    // Vertex, serves both versions and nothing else.
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    const std::string beta = "/vertex/v1beta1/projects/client-project/locations/europe-west1/";
    const std::string beta_below = "/v1beta1/projects/my-project/locations/us-east5/publishers/";
    for (const auto& method :
         {std::string(":generateContent"), std::string(":streamGenerateContent?alt=sse")}) {
        auto r = post(gw, beta + "publishers/google/models/" + gemini + method, gemini_body,
                      clients_own);
        BOOST_TEST_REQUIRE(r.status == 200u, method << ": " << r.body);
        auto sent = fake.requests().back();
        BOOST_TEST(sent.target == beta_below + "google/models/" + gemini + method);
        BOOST_TEST(sent.body == gemini_body);
        authorised_by_the_gateway(google, sent);
    }
    auto claude_beta =
        post(gw, beta + "publishers/anthropic/models/" + claude + ":rawPredict", raw_body);
    BOOST_TEST_REQUIRE(claude_beta.status == 200u, claude_beta.body);
    BOOST_TEST(fake.requests().back().target ==
               beta_below + "anthropic/models/" + claude + ":rawPredict");
    // Another version is no path the gateway serves: refused, nothing forwarded.
    auto served = fake.requests().size();
    auto other = post(
        gw,
        "/vertex/v2/projects/p/locations/l/publishers/google/models/" + gemini + ":generateContent",
        gemini_body);
    BOOST_TEST(other.status == 400u, other.body);
    BOOST_TEST(other.body.find("no Vertex AI path") != std::string::npos, other.body);
    BOOST_TEST(fake.requests().size() == served);
}

BOOST_AUTO_TEST_CASE(a_native_paths_project_or_location_may_be_named_models) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    for (const auto& where : {std::string("/projects/models/locations/europe-west1/"),
                              std::string("/projects/client-project/locations/models/")}) {
        auto r = post(gw,
                      "/vertex/v1" + where + "publishers/google/models/" + gemini +
                          ":streamGenerateContent?alt=sse",
                      gemini_body, clients_own);
        BOOST_TEST_REQUIRE(r.status == 200u, where << ": " << r.body);
        BOOST_TEST(fake.requests().back().target == gemini_path + ":streamGenerateContent?alt=sse");
    }
}

BOOST_AUTO_TEST_CASE(native_paths_bill_and_authorise_only_the_gateway) {
    // Google also takes an access token in the query, and bills the project x-goog-user-project
    // names: neither of the client's goes with the gateway's token.
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    struct asked {
        std::string query, upstream_query;
    };
    for (const auto& a : {
             asked{"?access_token=ya29.the-clients-own", ""},
             asked{"?alt=sse&access%5Ftoken=ya29.the-clients-own", "?alt=sse"},
             asked{"?access_token=ya29.the-clients-own&alt=sse", "?alt=sse"},
         }) {
        auto method = a.upstream_query.empty() ? ":generateContent" : ":streamGenerateContent";
        auto r = post(gw, native + "google/models/" + gemini + method + a.query, gemini_body,
                      "x-goog-user-project: someone-elses-project\r\n");
        BOOST_TEST_REQUIRE(r.status == 200u, a.query << ": " << r.body);
        auto sent = fake.requests().back();
        BOOST_TEST(sent.target == gemini_path + method + a.upstream_query);
        BOOST_TEST(sent.header("x-goog-user-project").empty());
        authorised_by_the_gateway(google, sent);
    }
}

BOOST_AUTO_TEST_CASE(native_paths_refuse_what_they_cannot_forward) {
    google_account google;
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    auto served = fake.requests().size();
    // A method the gateway does not forward, a model no upstream serves, one whose upstream is
    // no Vertex AI upstream: none goes upstream.
    auto unknown = post(gw, native + "anthropic/models/" + claude + ":predict", raw_body);
    BOOST_TEST(unknown.status == 400u, unknown.body);
    BOOST_TEST(unknown.body.find("no Vertex AI path") != std::string::npos, unknown.body);
    BOOST_TEST(post(gw, native + "google/models/imagen-4:generateContent", gemini_body).status ==
               404u);
    auto other = post(gw, native + "google/models/gpt-4o:generateContent", gemini_body);
    BOOST_TEST(other.status == 400u, other.body);
    BOOST_TEST(other.body.find("no Vertex AI upstream") != std::string::npos, other.body);
    BOOST_TEST(fake.requests().size() == served);
    // A publisher's path for the other publisher's model: the fake Vertex's 404 is relayed.
    auto mixed = post(gw, native + "google/models/" + claude + ":generateContent", gemini_body);
    BOOST_TEST(mixed.status >= 400u, mixed.body);
}

BOOST_AUTO_TEST_CASE(native_paths_take_virtual_keys_and_their_usage_reaches_the_ledger) {
    google_account google;
    fake_upstream fake(checked_by(google));
    auto c = with_vertex(fake, google);
    c.admin.api_key = "admin-key-0123456789";
    const std::string secret = "sk-vertex-team-0123456789";
    config::virtual_key k;
    k.id = "cfg-team";
    k.name = "team";
    k.digest = config::key_digest(secret);
    c.admin.keys.push_back(k);
    running_gateway gw(c);
    // Claude Code with CLAUDE_CODE_SKIP_VERTEX_AUTH=1 sends no credential; a Google SDK sends its
    // own token: neither is a key of this gateway.
    auto path = native + "anthropic/models/" + claude + ":rawPredict";
    BOOST_TEST(post(gw, path, raw_body).status == 401u);
    BOOST_TEST(post(gw, path, raw_body, clients_own).status == 401u);
    for (const auto& key :
         {"Authorization: Bearer " + secret + "\r\n", "x-api-key: " + secret + "\r\n"}) {
        auto r = post(gw, path, raw_body, key);
        BOOST_TEST(r.status == 200u, r.body);
        BOOST_TEST(fake.requests().back().raw.find(secret) == std::string::npos);
        authorised_by_the_gateway(google, fake.requests().back());
    }
    json::array rows;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        client admin(gw.port());
        auto r = admin.request(make_request("GET", "/admin/usage?group_by=model", "",
                                            "Authorization: Bearer admin-key-0123456789\r\n"));
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        rows = json::parse(r.body).at("data").as_array();
        if (!rows.empty() && rows[0].at("requests").as_int64() >= 2) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    BOOST_TEST_REQUIRE(rows.size() == 1u);
    BOOST_TEST(rows[0].at("model") == json::value(claude));
    BOOST_TEST(rows[0].at("requests") == 2);
    BOOST_TEST(rows[0].at("input_tokens") == 20);
    BOOST_TEST(rows[0].at("output_tokens") == 10);
}

BOOST_AUTO_TEST_CASE(only_messages_itself_falls_back_to_rawpredict) {
    // A route whose first target (Anthropic's own API, down) counts tokens: Claude on Vertex, its
    // fallback, has no count_tokens at rawPredict, which answers Messages only.
    google_account google;
    fake_upstream fake(checked_by(google));
    auto c = with_vertex(fake, google);
    auto down = c.upstreams[0];
    down.name = "anthropic-down";
    down.provider = config::provider_kind::anthropic;
    down.endpoint.port = unused_port();
    down.models = {"down-*"};
    c.upstreams.push_back(down);
    config::route_config route;
    route.model = "house:claude";
    route.targets.push_back({"anthropic-down", claude, 1, 2});
    route.targets.push_back({"vertex", claude, 1, 1});
    c.routes.push_back(route);
    running_gateway gw(c);
    const std::string anthropic = "anthropic-version: 2023-06-01\r\n";
    auto counted =
        post(gw, "/v1/messages/count_tokens",
             R"({"model":"house:claude","messages":[{"role":"user","content":"hi"}]})", anthropic);
    BOOST_TEST(counted.status >= 400u, counted.body);
    for (const auto& sent : fake.requests()) BOOST_TEST(sent.target.empty(), sent.target);
    auto r = post(
        gw, "/v1/messages",
        R"({"model":"house:claude","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})",
        anthropic);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(fake.requests().back().target == claude_path + ":rawPredict");
}

BOOST_AUTO_TEST_CASE(claude_on_vertex_behind_a_route_alias_is_cached_as_anthropics) {
    // The name the client gave (the route's) says nothing of the dialect the answer came in.
    google_account google;
    fake_upstream fake(checked_by(google));
    auto c = with_vertex(fake, google);
    config::route_config route;
    route.model = "house:claude";
    route.targets.push_back({"vertex", claude, 1, 1});
    route.cache.ttl = std::chrono::minutes(10);
    c.routes.push_back(route);
    running_gateway gw(c);
    const std::string body =
        R"({"model":"house:claude","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})";
    // The answer is stored just after the client has it: asked again until a hit (up to 5 s).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::string cache;
    while (cache != "hit" && std::chrono::steady_clock::now() < deadline) {
        auto r = post(gw, "/v1/messages", body, "anthropic-version: 2023-06-01\r\n");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        cache = r.header("x-contextgate-cache");
        if (cache != "hit") std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    BOOST_TEST(cache == "hit");
}

BOOST_AUTO_TEST_CASE(a_refused_token_is_googles_401_in_the_clients_envelope) {
    // The gateway's tokens come from `google`; the fake Vertex knows only `other`'s.
    google_account google;
    google_account other;
    fake_upstream fake(checked_by(other));
    running_gateway gw(with_vertex(fake, google));
    auto r = post(gw, "/v1/chat/completions", chat(gemini));
    BOOST_TEST(r.status == 401u, r.body);
    BOOST_TEST(error_message(r).find("invalid authentication credentials") != std::string::npos,
               r.body);
}

BOOST_AUTO_TEST_CASE(short_lived_tokens_are_renewed_before_vertex_would_refuse_them) {
    // Tokens that live 3 s, asked for back to back over 10 s, whole and streamed, by both
    // publishers: the fake Vertex refuses a token past its expiry, and none is.
    google_account google(std::chrono::seconds(3));
    fake_upstream fake(checked_by(google));
    running_gateway gw(with_vertex(fake, google));
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int sent = 0;
    while (std::chrono::steady_clock::now() < until) {
        auto r = post(gw, "/v1/chat/completions", chat(sent % 2 ? gemini : claude, sent % 3 == 0));
        BOOST_TEST_REQUIRE(r.status == 200u, "request " << sent << ": " << r.body);
        ++sent;
    }
    BOOST_TEST(sent > 20);
    BOOST_TEST(google.issued() >= 4u);  // renewed as each neared its end, not once
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_vertex_test
