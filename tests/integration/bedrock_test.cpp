// Models on Amazon Bedrock behind /v1: the gateway in-process against the fake upstream's
// Converse, which verifies each request's SigV4 signature with the keys it knows and refuses
// what Bedrock refuses; credentials from the upstream's `aws:` block, or from web identity
// through a fake STS.
#include "gateway/providers/aws_eventstream.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/fake_aws.hpp"
#include "tests/support/fake_providers.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

namespace integration_bedrock_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
namespace fp = gateway::testing::fake_providers;

namespace {

// Model ids with the `:` every Bedrock id has, which travels as %3A and is signed as %253A:
// Claude, which /v1 reaches through InvokeModel, and another, through Converse.
const std::string claude = "anthropic.claude-sonnet-4-5-20250929-v1:0";
const std::string claude_path = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0";
const std::string llama = "meta.llama3-3-70b-instruct-v1:0";
const std::string llama_path = "/model/meta.llama3-3-70b-instruct-v1%3A0";

// The fake as an OpenAI-compatible upstream (gpt-*) and a Bedrock one (anthropic.*) signing with
// `keys` (none: the standard chain).
config::gateway_config with_bedrock(const fake_upstream& fake, config::aws_keys keys) {
    auto c = make_config({fake.base_url(), "http://127.0.0.1:" + std::to_string(fake.port())});
    c.upstreams[0].models = {"gpt-*"};
    auto& b = c.upstreams[1];
    b.name = "bedrock";
    b.provider = config::provider_kind::bedrock;
    b.tool_calling = config::tool_calling_mode::native;
    b.region = "us-east-1";
    b.aws = std::move(keys);
    b.models = {"anthropic.*", "us.anthropic.*", "meta.*"};
    return c;
}

config::aws_keys fake_keys(std::string secret = std::string(fp::fake_aws_secret)) {
    return {std::string(fp::fake_aws_key_id), std::move(secret), {}, {}};
}

response post(const running_gateway& gw, const std::string& path, const std::string& body,
              std::string_view headers = {}) {
    client c(gw.port());
    return c.request(make_request("POST", path, body,
                                  "Content-Type: application/json\r\n" + std::string(headers)));
}

std::string chat(const std::string& model, bool stream = false) {
    return R"({"model":")" + model + R"(","stream":)" + (stream ? "true" : "false") +
           R"(,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})";
}

std::string error_message(const response& r) {
    auto body = json::parse(r.body);
    return std::string(body.as_object().at("error").as_object().at("message").as_string());
}

const std::string weather_tools = R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather in a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";

// The AWS variables the chain reads, set for one test and put back after: the gateway reads the
// process's environment when it builds its configuration.
class aws_environment {
public:
    explicit aws_environment(std::map<std::string, std::string> set) {
        auto folder = temporary_folder();
        // Nothing of the machine's own: no keys, no profile, no shared files.
        set.emplace("AWS_SHARED_CREDENTIALS_FILE", folder + "/no-credentials");
        set.emplace("AWS_CONFIG_FILE", folder + "/no-config");
        set.emplace("AWS_EC2_METADATA_DISABLED", "true");
        for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                 "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION"})
            set.emplace(name, "");
        for (const auto& [name, value] : set) {
            const char* before = std::getenv(name.c_str());
            saved_.emplace(name, before ? std::optional<std::string>(before) : std::nullopt);
            if (value.empty())
                unsetenv(name.c_str());
            else
                setenv(name.c_str(), value.c_str(), 1);
        }
    }
    ~aws_environment() {
        for (const auto& [name, value] : saved_)
            if (value)
                setenv(name.c_str(), value->c_str(), 1);
            else
                unsetenv(name.c_str());
    }

private:
    std::map<std::string, std::optional<std::string>> saved_;
};

// A web identity on a pod: its token file and role, STS at `sts_url`.
std::map<std::string, std::string> web_identity(const std::string& sts_url) {
    auto token = temporary_folder() + "/token";
    std::ofstream(token) << "eyJhbGciOiJSUzI1NiJ9.e30.sig";
    return {{"AWS_WEB_IDENTITY_TOKEN_FILE", token},
            {"AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/bedrock"},
            {"AWS_ENDPOINT_URL_STS", sts_url}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bedrock)

BOOST_AUTO_TEST_CASE(a_chat_completion_reaches_converse_signed_with_the_id_encoded_once) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, "/v1/chat/completions", chat(llama), "Authorization: Bearer sk-client\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto body = json::parse(r.body).as_object();
    BOOST_TEST(body["object"] == json::value("chat.completion"));
    BOOST_TEST(body["model"] == json::value(llama));
    auto& choice = body["choices"].as_array()[0].as_object();
    BOOST_TEST(choice["message"].as_object()["content"] ==
               json::value("Hello from the fake upstream!"));
    BOOST_TEST(choice["finish_reason"] == json::value("stop"));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == llama_path + "/converse");
    // Signed by the gateway (the fake verified it); the client's key never goes there.
    BOOST_TEST(
        sent.header("authorization")
            .starts_with("AWS4-HMAC-SHA256 Credential=" + std::string(fp::fake_aws_key_id) + "/"));
    BOOST_TEST(sent.header("authorization").find("/us-east-1/bedrock/aws4_request") !=
               std::string::npos);
    BOOST_TEST(sent.header("x-amz-security-token").empty());
    auto wire = json::parse(sent.body).as_object();
    BOOST_TEST(!wire.contains("model"));
    BOOST_TEST(wire["system"].as_array()[0].as_object()["text"] == json::value("Be brief."));
}

BOOST_AUTO_TEST_CASE(a_stream_comes_from_converse_stream_frames_as_chunks) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, "/v1/chat/completions", chat(llama, true));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type").starts_with("text/event-stream"));
    auto s = read_chat_stream(r.body);
    BOOST_TEST(s.done);
    BOOST_TEST(s.error.empty(), s.error);
    BOOST_TEST(s.text == "Hello from the fake upstream!");
    BOOST_TEST(s.finish_reason == "stop");
    BOOST_TEST(fake.requests().back().target == llama_path + "/converse-stream");
}

BOOST_AUTO_TEST_CASE(a_tool_round_trip_goes_through_tool_use_and_tool_result) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    std::string ask = R"({"model":")" + llama + R"(","tools":)" + weather_tools +
                      R"(,"messages":[{"role":"user","content":"weather in Paris?"}]})";
    auto called = post(gw, "/v1/chat/completions", ask);
    BOOST_TEST_REQUIRE(called.status == 200u, called.body);
    auto choice = json::parse(called.body).as_object()["choices"].as_array()[0].as_object();
    BOOST_TEST(choice["finish_reason"] == json::value("tool_calls"));
    auto call = choice["message"].as_object()["tool_calls"].as_array()[0].as_object();
    auto id = std::string(call["id"].as_string());
    BOOST_TEST(call["function"].as_object()["name"] == json::value("get_weather"));
    BOOST_TEST(call["function"].as_object()["arguments"] == json::value(R"({"city":"Paris"})"));
    std::string answer = R"({"model":")" + llama + R"(","tools":)" + weather_tools +
                         R"(,"messages":[{"role":"user","content":"weather in Paris?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":")" +
                         id + R"(","type":"function","function":{"name":"get_weather",
        "arguments":"{\"city\":\"Paris\"}"}}]},
      {"role":"tool","tool_call_id":")" +
                         id + R"(","content":"sunny"}]})";
    auto done = post(gw, "/v1/chat/completions", answer);
    BOOST_TEST_REQUIRE(done.status == 200u, done.body);
    auto text = json::parse(done.body).as_object()["choices"].as_array()[0].as_object();
    BOOST_TEST(text["message"].as_object()["content"] ==
               json::value("Hello from the fake upstream!"));
    // The result went back as Converse's toolResult for the call's toolUseId.
    auto wire = json::parse(fake.requests().back().body).as_object();
    auto& turns = wire["messages"].as_array();
    BOOST_TEST_REQUIRE(turns.size() == 3u);
    auto& result = turns[2].as_object()["content"].as_array()[0].as_object()["toolResult"];
    BOOST_TEST(result.as_object()["toolUseId"] == json::value(id));
}

BOOST_AUTO_TEST_CASE(an_exception_in_the_event_stream_ends_the_clients_stream_with_its_reason) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    scripted_reply throttled{"A long answer that is cut.", "stop", 200, "", 0};
    throttled.stream_error = "Too many tokens, please wait before trying again.";
    fake.script({throttled});
    auto r = post(gw, "/v1/chat/completions", chat(llama, true));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.complete);
    auto s = read_chat_stream(r.body);
    BOOST_TEST(!s.text.empty());  // what came before it was relayed
    BOOST_TEST(s.error.find("ThrottlingException: Too many tokens") != std::string::npos, r.body);
}

BOOST_AUTO_TEST_CASE(messages_reach_converse_too) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, "/v1/messages",
                  R"({"model":")" + llama +
                      R"(","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})",
                  "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto body = json::parse(r.body).as_object();
    BOOST_TEST(body["type"] == json::value("message"));
    BOOST_TEST(body["content"].as_array()[0].as_object()["text"] ==
               json::value("Hello from the fake upstream!"));
    BOOST_TEST(fake.requests().back().target == llama_path + "/converse");
}

BOOST_AUTO_TEST_CASE(a_wrong_secret_is_bedrocks_signature_refusal_in_the_clients_envelope) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys("not-the-secret")));
    auto r = post(gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST(r.status == 401u, r.body);
    auto message = error_message(r);
    BOOST_TEST(message.find("InvalidSignatureException") != std::string::npos, message);
    BOOST_TEST(message.find("does not match the signature") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(a_bedrock_api_key_goes_as_bearer_without_signing) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, config::aws_keys{{}, {}, {}, "bedrock-api-key"}));
    auto r = post(gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto sent = fake.requests().back();
    BOOST_TEST(sent.header("authorization") == "Bearer bedrock-api-key");
    BOOST_TEST(sent.header("x-amz-date").empty());
}

BOOST_AUTO_TEST_CASE(temporary_keys_from_web_identity_sign_with_their_session_token) {
    fake_upstream fake;
    std::string token = "session-token-1";
    fake_aws_service sts([&](const aws_request&) {
        return aws_reply{200, sts_credentials_xml(std::string(fp::fake_aws_temporary_key_id),
                                                  std::string(fp::fake_aws_secret), token,
                                                  "2099-01-01T00:00:00Z")};
    });
    std::optional<running_gateway> gw;
    {
        aws_environment env(web_identity(sts.url()));
        gw.emplace(with_bedrock(fake, {}));
    }
    auto r = post(*gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(fake.requests().back().header("x-amz-security-token") == token);
    BOOST_TEST(sts.count() == 1u);
}

BOOST_AUTO_TEST_CASE(expired_session_credentials_are_refused_with_bedrocks_reason) {
    fake_upstream fake;
    fake_aws_service sts([](const aws_request&) {
        return aws_reply{200, sts_credentials_xml(std::string(fp::fake_aws_temporary_key_id),
                                                  std::string(fp::fake_aws_secret),
                                                  std::string(fp::fake_aws_expired_token),
                                                  "2099-01-01T00:00:00Z")};
    });
    std::optional<running_gateway> gw;
    {
        aws_environment env(web_identity(sts.url()));
        gw.emplace(with_bedrock(fake, {}));
    }
    auto r = post(*gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST(r.status == 401u, r.body);
    BOOST_TEST(error_message(r).find("ExpiredTokenException") != std::string::npos, r.body);
}

BOOST_AUTO_TEST_CASE(a_credentials_failure_is_a_502_that_says_why_and_the_gateway_serves_on) {
    fake_upstream fake;
    fake_aws_service sts([](const aws_request&) {
        return aws_reply{403, sts_error_xml("AccessDenied",
                                            "Not authorized to perform "
                                            "sts:AssumeRoleWithWebIdentity")};
    });
    std::optional<running_gateway> gw;
    {
        aws_environment env(web_identity(sts.url()));
        gw.emplace(with_bedrock(fake, {}));
    }
    auto before = fake.requests().size();
    for (bool stream : {false, true}) {
        auto r = post(*gw, "/v1/chat/completions", chat(claude, stream));
        BOOST_TEST(r.status == 502u, r.body);
        auto message = error_message(r);
        BOOST_TEST(message.find("no AWS credentials for upstream `bedrock` from web identity") !=
                       std::string::npos,
                   message);
        BOOST_TEST(message.find("AccessDenied") != std::string::npos, message);
    }
    BOOST_TEST(fake.requests().size() == before);  // nothing unsigned went to Bedrock
    auto other = post(*gw, "/v1/chat/completions",
                      R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(other.status == 200u, other.body);
}

BOOST_AUTO_TEST_CASE(a_route_moves_on_from_a_bedrock_target_without_credentials) {
    fake_upstream fake;
    fake_aws_service sts([](const aws_request&) {
        return aws_reply{400, sts_error_xml("InvalidIdentityToken", "Token is expired")};
    });
    auto c = with_bedrock(fake, {});
    config::route_config route;
    route.model = "smart";
    route.targets.push_back({"bedrock", claude, 1, 1});
    route.targets.push_back({"up0", "gpt-4o", 1, 0});
    c.routes.push_back(route);
    std::optional<running_gateway> gw;
    {
        aws_environment env(web_identity(sts.url()));
        gw.emplace(std::move(c));
    }
    for (bool stream : {false, true}) {
        auto r = post(*gw, "/v1/chat/completions", chat("smart", stream));
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        BOOST_TEST(fake.requests().back().target == "/v1/chat/completions");
    }
    BOOST_TEST(sts.count() >= 1u);
}

BOOST_AUTO_TEST_CASE(models_lists_its_configured_names_without_asking_bedrock) {
    fake_upstream fake;
    auto c = with_bedrock(fake, fake_keys());
    c.upstreams[1].models = {claude, "anthropic.*"};
    running_gateway gw(c);
    client listing(gw.port());
    auto r = listing.request(make_request("GET", "/v1/models"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.body.find("\"id\":\"" + claude + "\"") != std::string::npos, r.body);
    BOOST_TEST(r.body.find("gpt-4o") != std::string::npos, r.body);  // the other's own list
    // Bedrock's list is its control plane's: never asked of the runtime endpoint.
    for (const auto& sent : fake.requests())
        BOOST_TEST(!sent.target.starts_with("/models"), sent.target);
}

BOOST_AUTO_TEST_CASE(a_reload_finds_credentials_again_and_a_failing_chain_changes_nothing) {
    fake_upstream fake;
    auto c = with_bedrock(fake, fake_keys());
    running_gateway gw(c);
    // The keys gone, and the profile the environment names in neither file.
    auto next = c;
    next.upstreams[1].aws = {};
    gateway::app::reload_outcome refused;
    {
        aws_environment env(std::map<std::string, std::string>{{"AWS_PROFILE", "nobody"}});
        refused = gw.server().reload(next);
    }
    BOOST_TEST(!refused.applied);
    BOOST_TEST(refused.error.find("upstream `bedrock`") != std::string::npos, refused.error);
    BOOST_TEST(refused.error.find("nobody") != std::string::npos, refused.error);
    auto still = post(gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST(still.status == 200u, still.body);
    // New keys take over from the next request on (the old generation's are let go).
    next.upstreams[1].aws = fake_keys("not-the-secret");
    auto applied = gw.server().reload(next);
    BOOST_TEST_REQUIRE(applied.applied, applied.error);
    auto r = post(gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST(r.status == 401u, r.body);
}

// Bedrock's own runtime API below /bedrock, as the AWS SDK and Claude Code in Bedrock mode send it.
const std::string native_path = "/bedrock" + claude_path;
const std::string converse_body =
    R"({"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":64}})";
const std::string invoke_body = R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":64,)"
                                R"("messages":[{"role":"user","content":"hi"}]})";

// What an SDK signing for itself sends: none of it may reach Bedrock.
const std::string client_signature =
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIACLIENTSOWNKEY0001/20260101/us-east-1/bedrock/"
    "aws4_request, SignedHeaders=host;x-amz-date, Signature=0123\r\n"
    "X-Amz-Date: 20260101T000000Z\r\nX-Amz-Security-Token: the-clients-token\r\n"
    "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\n";

// The event-stream messages of a relayed body, each checked by its CRCs (a byte changed on the
// way breaks one): their :event-type headers, and the payloads.
std::vector<gateway::providers::aws_eventstream::message> frames_of(const std::string& body) {
    gateway::providers::aws_eventstream::decoder decoder(1 << 20);
    std::vector<gateway::providers::aws_eventstream::message> out;
    std::string error;
    BOOST_TEST_REQUIRE(decoder.feed(body, out, error), error);
    BOOST_TEST_REQUIRE(decoder.finish(error), error);
    return out;
}

void signed_by_the_gateway(const received_request& sent) {
    BOOST_TEST(
        sent.header("authorization")
            .starts_with("AWS4-HMAC-SHA256 Credential=" + std::string(fp::fake_aws_key_id) + "/"));
    BOOST_TEST(sent.header("x-amz-security-token").empty());
    BOOST_TEST(sent.header("x-amz-content-sha256").empty());
    BOOST_TEST(sent.raw.find("AKIACLIENTSOWNKEY") == std::string::npos);
    BOOST_TEST(sent.raw.find("the-clients-token") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(native_converse_goes_byte_exact_and_signed_by_the_gateway) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, native_path + "/converse", converse_body, client_signature);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto body = json::parse(r.body).as_object();
    BOOST_TEST(body["output"].as_object()["message"].as_object()["content"].as_array()[0] ==
               json::parse(R"({"text":"Hello from the fake upstream!"})"));
    BOOST_TEST(body["usage"].as_object()["inputTokens"] == json::value(10));
    auto sent = fake.requests().back();
    // The id came encoded once (%3A), was matched decoded and goes encoded once again.
    BOOST_TEST(sent.target == claude_path + "/converse");
    BOOST_TEST(sent.body == converse_body);
    signed_by_the_gateway(sent);
}

BOOST_AUTO_TEST_CASE(native_converse_stream_relays_the_event_stream_unchanged) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, native_path + "/converse-stream", converse_body, client_signature);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type") == "application/vnd.amazon.eventstream");
    std::vector<std::string> types;
    std::string text;
    for (const auto& m : frames_of(r.body)) {
        types.emplace_back(m.string_header(":event-type"));
        if (types.back() == "contentBlockDelta")
            text += json::parse(m.payload).at("delta").at("text").as_string();
    }
    BOOST_TEST_REQUIRE(!types.empty());
    BOOST_TEST(types.front() == "messageStart");
    BOOST_TEST(types.back() == "metadata");
    BOOST_TEST(text == "Hello from the fake upstream!");
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/converse-stream");
    BOOST_TEST(sent.body == converse_body);
    signed_by_the_gateway(sent);
}

BOOST_AUTO_TEST_CASE(native_invoke_takes_claudes_messages_body_whole_and_streamed) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, native_path + "/invoke", invoke_body, client_signature);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto body = json::parse(r.body).as_object();
    BOOST_TEST(body["type"] == json::value("message"));
    BOOST_TEST(body["content"].as_array()[0].as_object()["text"] ==
               json::value("Hello from the fake upstream!"));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/invoke");
    BOOST_TEST(sent.body == invoke_body);
    signed_by_the_gateway(sent);

    auto streamed =
        post(gw, native_path + "/invoke-with-response-stream", invoke_body, client_signature);
    BOOST_TEST_REQUIRE(streamed.status == 200u, streamed.body);
    auto frames = frames_of(streamed.body);
    BOOST_TEST_REQUIRE(!frames.empty());
    for (const auto& m : frames) BOOST_TEST(m.string_header(":event-type") == "chunk");
    BOOST_TEST(json::parse(frames.front().payload).as_object().contains("bytes"));
    sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/invoke-with-response-stream");
    BOOST_TEST(sent.body == invoke_body);
    signed_by_the_gateway(sent);
}

BOOST_AUTO_TEST_CASE(a_route_named_on_a_native_path_sends_its_targets_id_in_the_path) {
    fake_upstream fake;
    auto c = with_bedrock(fake, fake_keys());
    config::route_config route;
    route.model = "house:claude";
    route.targets.push_back({"bedrock", claude, 1, 1});
    route.targets.push_back({"bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0", 1, 0});
    c.routes.push_back(route);
    running_gateway gw(c);
    // The route's name comes encoded like any id; its first target's id goes in the path.
    auto r = post(gw, "/bedrock/model/house%3Aclaude/converse-stream", converse_body);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(frames_of(r.body).back().string_header(":event-type") == "metadata");
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/converse-stream");
    BOOST_TEST(sent.body == converse_body);
}

BOOST_AUTO_TEST_CASE(native_paths_refuse_what_they_cannot_forward) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto served = fake.requests().size();
    // A model no upstream serves, one whose upstream is no Bedrock, a path Bedrock's runtime
    // does not have here: none goes upstream.
    BOOST_TEST(post(gw, "/bedrock/model/amazon.nova-pro-v1%3A0/converse", converse_body).status ==
               404u);
    auto other = post(gw, "/bedrock/model/gpt-4o/converse", converse_body);
    BOOST_TEST(other.status == 400u);
    BOOST_TEST(error_message(other).find("only to a Bedrock upstream") != std::string::npos,
               other.body);
    auto unknown = post(gw, native_path + "/count-tokens", converse_body);
    BOOST_TEST(unknown.status == 400u);
    BOOST_TEST(error_message(unknown).find("no Bedrock runtime path") != std::string::npos,
               unknown.body);
    BOOST_TEST(fake.requests().size() == served);
}

BOOST_AUTO_TEST_CASE(native_paths_take_virtual_keys_and_their_usage_reaches_the_ledger) {
    fake_upstream fake;
    auto c = with_bedrock(fake, fake_keys());
    c.admin.api_key = "admin-key-0123456789";
    const std::string secret = "sk-bedrock-team-0123456789";
    config::virtual_key k;
    k.id = "cfg-team";
    k.name = "team";
    k.digest = config::key_digest(secret);
    c.admin.keys.push_back(k);
    running_gateway gw(c);
    // Claude Code with CLAUDE_CODE_SKIP_BEDROCK_AUTH=1 sends no credential; an SDK signing for
    // itself sends AWS's: neither is a key of this gateway.
    BOOST_TEST(post(gw, native_path + "/converse", converse_body).status == 401u);
    BOOST_TEST(post(gw, native_path + "/converse", converse_body, client_signature).status == 401u);
    auto served = fake.requests().size();
    for (const auto& [operation, body] :
         {std::pair{"/converse", converse_body}, std::pair{"/converse-stream", converse_body},
          std::pair{"/invoke", invoke_body},
          std::pair{"/invoke-with-response-stream", invoke_body}}) {
        auto key = std::string(operation).ends_with("stream")
                       ? "x-api-key: " + secret + "\r\n"
                       : "Authorization: Bearer " + secret + "\r\n";
        auto r = post(gw, native_path + operation, body, key);
        BOOST_TEST(r.status == 200u, operation << ": " << r.body);
        auto sent = fake.requests().back();
        BOOST_TEST(sent.raw.find(secret) == std::string::npos);
        signed_by_the_gateway(sent);
    }
    BOOST_TEST(fake.requests().size() == served + 4);
    // Each answer reported 10 tokens in and 5 out: Converse's usage, its stream's metadata,
    // Claude's Messages usage, and its stream's chunks.
    json::array rows;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        client admin(gw.port());
        auto r = admin.request(make_request("GET", "/admin/usage?group_by=model", "",
                                            "Authorization: Bearer admin-key-0123456789\r\n"));
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        rows = json::parse(r.body).at("data").as_array();
        if (!rows.empty() && rows[0].at("requests").as_int64() >= 4) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    BOOST_TEST_REQUIRE(rows.size() == 1u);
    BOOST_TEST(rows[0].at("model") == json::value(claude));
    BOOST_TEST(rows[0].at("requests") == 4);
    BOOST_TEST(rows[0].at("input_tokens") == 40);
    BOOST_TEST(rows[0].at("output_tokens") == 20);
}

// Claude on Bedrock from /v1: InvokeModel with the Messages body.

const std::string anthropic_headers = "anthropic-version: 2023-06-01\r\nx-api-key: sk-client\r\n";
const std::string claude_tools =
    R"([{"name":"get_weather","description":"Weather in a city","input_schema":)"
    R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}])";

// The events of an Anthropic stream, in order: each one's `event:` name and its data.
std::vector<std::pair<std::string, json::value>> anthropic_events(const std::string& body) {
    std::vector<std::pair<std::string, json::value>> out;
    std::size_t at = 0;
    while (at < body.size()) {
        auto end = body.find("\n\n", at);
        if (end == std::string::npos) end = body.size();
        std::string name, data;
        std::size_t line = at;
        while (line < end) {
            auto eol = std::min(body.find('\n', line), end);
            auto text = body.substr(line, eol - line);
            if (text.starts_with("event: ")) name = text.substr(7);
            if (text.starts_with("data: ")) data = text.substr(6);
            line = eol + 1;
        }
        if (!name.empty()) out.emplace_back(name, json::parse(data));
        at = end + 2;
    }
    return out;
}

// A streamed Messages answer assembled as the Anthropic SDK does: its content blocks (thinking
// with its signature, text, tool_use with its input) and its stop reason.
struct assembled_message {
    json::array content;
    std::string stop_reason;
};
assembled_message assemble(const std::string& body) {
    assembled_message m;
    std::vector<std::string> inputs;
    for (auto& [name, data] : anthropic_events(body)) {
        auto& o = data.as_object();
        if (name == "content_block_start") {
            m.content.push_back(o["content_block"]);
            inputs.emplace_back();
        } else if (name == "content_block_delta") {
            auto& block = m.content.at(o["index"].as_int64()).as_object();
            auto& d = o["delta"].as_object();
            auto type = d["type"].as_string();
            if (type == "text_delta")
                block["text"] =
                    std::string(block["text"].as_string()) + std::string(d["text"].as_string());
            if (type == "thinking_delta")
                block["thinking"] = std::string(block["thinking"].as_string()) +
                                    std::string(d["thinking"].as_string());
            if (type == "signature_delta") block["signature"] = d["signature"];
            if (type == "input_json_delta")
                inputs.at(o["index"].as_int64()) += d["partial_json"].as_string();
        } else if (name == "message_delta") {
            m.stop_reason = o["delta"].as_object()["stop_reason"].as_string();
        }
    }
    for (std::size_t i = 0; i < m.content.size(); ++i)
        if (!inputs[i].empty()) m.content[i].as_object()["input"] = json::parse(inputs[i]);
    return m;
}

BOOST_AUTO_TEST_CASE(messages_reach_claude_through_invoke_model_with_their_own_body) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    // cache_control and top_k: what Converse has no field for.
    auto body = [](const std::string& model) {
        return R"({"model":")" + model +
               R"(","max_tokens":64,"top_k":5,"system":[{"type":"text","text":"Be brief.",)"
               R"("cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":)"
               R"([{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]})";
    };
    auto r = post(gw, "/v1/messages", body(claude), anthropic_headers);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto answer = json::parse(r.body).as_object();
    BOOST_TEST(answer["type"] == json::value("message"));
    BOOST_TEST(answer["content"].as_array()[0].as_object()["text"] ==
               json::value("Hello from the fake upstream!"));
    BOOST_TEST(answer["usage"].as_object()["input_tokens"] == json::value(10));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/invoke");
    BOOST_TEST(sent.header("authorization").starts_with("AWS4-HMAC-SHA256 Credential="));
    BOOST_TEST(sent.raw.find("sk-client") == std::string::npos);
    auto wire = json::parse(sent.body).as_object();
    BOOST_TEST(wire.begin()->key() == "anthropic_version");
    BOOST_TEST(wire["anthropic_version"] == json::value("bedrock-2023-05-31"));
    BOOST_TEST(!wire.contains("model"));
    BOOST_TEST(!wire.contains("stream"));
    BOOST_TEST(wire["top_k"] == json::value(5));
    BOOST_TEST(wire["system"].as_array()[0].as_object()["cache_control"] ==
               json::parse(R"({"type":"ephemeral"})"));
    BOOST_TEST(wire["messages"].as_array()[0].at("content").as_array()[0].at("cache_control") ==
               json::parse(R"({"type":"ephemeral","ttl":"1h"})"));
    // A cross-region inference profile goes the same way, its id in the path.
    const std::string profile = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    auto profiled = post(gw, "/v1/messages", body(profile), anthropic_headers);
    BOOST_TEST_REQUIRE(profiled.status == 200u, profiled.body);
    BOOST_TEST(fake.requests().back().target ==
               "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke");
}

BOOST_AUTO_TEST_CASE(a_messages_stream_is_anthropics_events_from_invoke_chunks) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r =
        post(gw, "/v1/messages",
             R"({"model":")" + claude +
                 R"(","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
             anthropic_headers);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.header("content-type").starts_with("text/event-stream"));
    auto events = anthropic_events(r.body);
    BOOST_TEST_REQUIRE(events.size() >= 2u, r.body);
    BOOST_TEST(events.front().first == "message_start");
    BOOST_TEST(events.back().first == "message_stop");
    auto m = assemble(r.body);
    BOOST_TEST(m.content.at(0).at("text") == json::value("Hello from the fake upstream!"));
    BOOST_TEST(m.stop_reason == "end_turn");
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/invoke-with-response-stream");
    BOOST_TEST(!json::parse(sent.body).as_object().contains("stream"));
}

BOOST_AUTO_TEST_CASE(thinking_and_its_signature_go_round_a_tool_call_through_invoke) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto ask = [&](bool stream, const std::string& then) {
        return R"({"model":")" + claude + R"(","max_tokens":2048,"stream":)" +
               (stream ? "true" : "false") +
               R"(,"thinking":{"type":"enabled","budget_tokens":1024},"tools":)" + claude_tools +
               R"(,"messages":[{"role":"user","content":"weather in Paris?"})" + then + "]}";
    };
    auto called = post(gw, "/v1/messages", ask(true, ""), anthropic_headers);
    BOOST_TEST_REQUIRE(called.status == 200u, called.body);
    auto m = assemble(called.body);
    BOOST_TEST(m.stop_reason == "tool_use");
    BOOST_TEST_REQUIRE(m.content.size() == 2u, called.body);
    auto thinking = m.content[0].as_object();
    BOOST_TEST(thinking["type"] == json::value("thinking"));
    BOOST_TEST(thinking["signature"] ==
               json::value(fp::thinking_signature(thinking["thinking"].as_string())));
    auto call = m.content[1].as_object();
    BOOST_TEST(call["name"] == json::value("get_weather"));
    BOOST_TEST(call["input"] == json::parse(R"({"city":"Paris"})"));
    // The assistant turn goes back whole, thinking first: the fake checks its signature.
    auto answered = [&](const json::value& turn) {
        return ask(false, R"(,{"role":"assistant","content":)" + json::serialize(turn) +
                              R"(},{"role":"user","content":[{"type":"tool_result",)"
                              R"("tool_use_id":")" +
                              std::string(call["id"].as_string()) + R"(","content":"sunny"}]})");
    };
    auto done = post(gw, "/v1/messages", answered(m.content), anthropic_headers);
    BOOST_TEST_REQUIRE(done.status == 200u, done.body);
    auto content = json::parse(done.body).at("content").as_array();
    BOOST_TEST(content.back().at("text") == json::value("Hello from the fake upstream!"));
    auto wire = json::parse(fake.requests().back().body);
    BOOST_TEST(wire.at("messages").as_array()[1].at("content").as_array()[0] == m.content[0]);
    // A signature changed on the way is refused, in Anthropic's envelope.
    auto forged = m.content;
    forged[0].as_object()["signature"] = "forged";
    auto refused = post(gw, "/v1/messages", answered(forged), anthropic_headers);
    BOOST_TEST(refused.status == 400u, refused.body);
    auto error = json::parse(refused.body).as_object();
    BOOST_TEST(error["type"] == json::value("error"));
    BOOST_TEST(error["error"].at("type") == json::value("invalid_request_error"));
    BOOST_TEST(std::string(error["error"].at("message").as_string()).find("Invalid `signature`") !=
                   std::string::npos,
               refused.body);
}

BOOST_AUTO_TEST_CASE(chat_completions_reach_claude_through_invoke_whole_streamed_and_with_tools) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    auto r = post(gw, "/v1/chat/completions", chat(claude));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto choice = json::parse(r.body).at("choices").as_array()[0];
    BOOST_TEST(choice.at("message").at("content") == json::value("Hello from the fake upstream!"));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == claude_path + "/invoke");
    auto wire = json::parse(sent.body).as_object();
    BOOST_TEST(wire["anthropic_version"] == json::value("bedrock-2023-05-31"));
    BOOST_TEST(!wire.contains("model"));
    BOOST_TEST(wire["system"] == json::value("Be brief."));

    auto streamed = post(gw, "/v1/chat/completions", chat(claude, true));
    BOOST_TEST_REQUIRE(streamed.status == 200u, streamed.body);
    auto s = read_chat_stream(streamed.body);
    BOOST_TEST(s.done);
    BOOST_TEST(s.error.empty(), s.error);
    BOOST_TEST(s.text == "Hello from the fake upstream!");
    BOOST_TEST(s.finish_reason == "stop");
    BOOST_TEST(fake.requests().back().target == claude_path + "/invoke-with-response-stream");

    std::string ask = R"({"model":")" + claude + R"(","tools":)" + weather_tools +
                      R"(,"messages":[{"role":"user","content":"weather in Paris?"}]})";
    auto called = post(gw, "/v1/chat/completions", ask);
    BOOST_TEST_REQUIRE(called.status == 200u, called.body);
    auto call = json::parse(called.body)
                    .at("choices")
                    .as_array()[0]
                    .at("message")
                    .at("tool_calls")
                    .as_array()[0];
    auto id = std::string(call.at("id").as_string());
    BOOST_TEST(call.at("function").at("arguments") == json::value(R"({"city":"Paris"})"));
    std::string answer = R"({"model":")" + claude + R"(","tools":)" + weather_tools +
                         R"(,"messages":[{"role":"user","content":"weather in Paris?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":")" +
                         id + R"(","type":"function","function":{"name":"get_weather",
        "arguments":"{\"city\":\"Paris\"}"}}]},
      {"role":"tool","tool_call_id":")" +
                         id + R"(","content":"sunny"}]})";
    auto done = post(gw, "/v1/chat/completions", answer);
    BOOST_TEST_REQUIRE(done.status == 200u, done.body);
    auto turns = json::parse(fake.requests().back().body).at("messages").as_array();
    BOOST_TEST_REQUIRE(turns.size() == 3u);
    BOOST_TEST(turns[2].at("content").as_array()[0].at("tool_use_id") == json::value(id));
}

BOOST_AUTO_TEST_CASE(an_exception_mid_invoke_stream_ends_each_clients_stream_with_its_reason) {
    fake_upstream fake;
    running_gateway gw(with_bedrock(fake, fake_keys()));
    scripted_reply throttled{"A long answer that is cut.", "stop", 200, "", 0};
    throttled.stream_error = "Too many tokens, please wait before trying again.";
    fake.script({throttled, throttled});
    auto r =
        post(gw, "/v1/messages",
             R"({"model":")" + claude +
                 R"(","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
             anthropic_headers);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.complete);
    auto events = anthropic_events(r.body);
    BOOST_TEST_REQUIRE(events.size() >= 2u, r.body);
    BOOST_TEST(events.front().first == "message_start");  // what came before it was relayed
    BOOST_TEST(events.back().first == "error");
    auto error = events.back().second.at("error");
    BOOST_TEST(error.at("type") == json::value("rate_limit_error"));
    BOOST_TEST(std::string(error.at("message").as_string()).find("ThrottlingException: Too many") !=
                   std::string::npos,
               r.body);
    auto chat_stream = post(gw, "/v1/chat/completions", chat(claude, true));
    BOOST_TEST_REQUIRE(chat_stream.status == 200u, chat_stream.body);
    auto s = read_chat_stream(chat_stream.body);
    BOOST_TEST(s.error.find("ThrottlingException: Too many tokens") != std::string::npos,
               chat_stream.body);
}

// Claude Code in Bedrock mode lists the inference profiles: answered from the configuration.
BOOST_AUTO_TEST_CASE(inference_profiles_are_the_profiles_and_routes_the_gateway_serves) {
    fake_upstream fake;
    auto c = with_bedrock(fake, fake_keys());
    const std::string us = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    const std::string global = "global.anthropic.claude-haiku-4-5-20251001-v1:0";
    c.upstreams[1].models = {"anthropic.*", us, global, "meta.*"};
    config::route_config house;
    house.model = "house-claude";
    house.targets.push_back({"bedrock", us, 1, 1});
    c.routes.push_back(house);
    config::route_config other;
    other.model = "house-gpt";
    other.targets.push_back({"up0", "gpt-4o", 1, 0});
    c.routes.push_back(other);
    c.admin.api_key = "admin-key-0123456789";
    const std::string secret = "sk-bedrock-team-0123456789";
    config::virtual_key k;
    k.id = "cfg-team";
    k.name = "team";
    k.digest = config::key_digest(secret);
    k.models = {"us.*", "house-*"};
    c.admin.keys.push_back(k);
    running_gateway gw(c);
    auto served = fake.requests().size();
    auto list = [&](const std::string& query, const std::string& headers) {
        client listing(gw.port());
        return listing.request(
            make_request("GET", "/bedrock/inference-profiles" + query, "", headers));
    };
    // Claude Code with CLAUDE_CODE_SKIP_BEDROCK_AUTH=1 and no key: refused, as on the runtime
    // paths.
    BOOST_TEST(list("?type=SYSTEM_DEFINED", "").status == 401u);
    auto key = "Authorization: Bearer " + secret + "\r\n";
    auto r = list("?type=SYSTEM_DEFINED", key);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type") == "application/json");
    auto summaries = json::parse(r.body).at("inferenceProfileSummaries").as_array();
    std::vector<std::string> ids;
    for (const auto& p : summaries) ids.emplace_back(p.at("inferenceProfileId").as_string());
    // The key's globs take the route and the us. profile, not the global. one.
    BOOST_TEST(ids == (std::vector<std::string>{"house-claude", us}), r.body);
    auto profile = summaries[1].as_object();
    BOOST_TEST(profile["inferenceProfileArn"] ==
               json::value("arn:aws:bedrock:us-east-1::inference-profile/" + us));
    BOOST_TEST(profile["status"] == json::value("ACTIVE"));
    BOOST_TEST(profile["type"] == json::value("SYSTEM_DEFINED"));
    BOOST_TEST(profile["models"].as_array()[0].at("modelArn") ==
               json::value("arn:aws:bedrock:us-east-1::foundation-model/"
                           "anthropic.claude-sonnet-4-5-20250929-v1:0"));
    auto route = summaries[0].as_object();
    BOOST_TEST(route["models"] == profile["models"]);
    // No application profiles here; and nothing was asked of Bedrock.
    auto application = list("?type=APPLICATION", key);
    BOOST_TEST_REQUIRE(application.status == 200u, application.body);
    BOOST_TEST(json::parse(application.body).at("inferenceProfileSummaries").as_array().empty());
    BOOST_TEST(fake.requests().size() == served);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_bedrock_test
