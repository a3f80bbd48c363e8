#include "gateway/providers/vertex.hpp"

#include "gateway/config/hosting.hpp"
#include "gateway/providers/openai.hpp"
#include "tests/support/fake_vertex.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace providers_vertex_test {

using namespace gateway::providers;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

config::upstream_config vertex_upstream(std::string location = "us-east5") {
    config::upstream_config up;
    up.name = "vertex";
    up.provider = config::provider_kind::gemini;
    up.host = config::hosting::vertex;
    up.project = "my-project";
    up.location = std::move(location);
    return up;
}

request from_openai(std::string_view body) {
    request r;
    openai::parse_failure f;
    BOOST_TEST_REQUIRE(openai::parse_chat_request(body, r, f), f.param + ": " + f.message);
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_vertex)

BOOST_AUTO_TEST_CASE(claude_speaks_anthropic_and_the_rest_gemini_on_vertex_only) {
    auto up = vertex_upstream();
    BOOST_TEST((config::dialect_for(up, "claude-sonnet-4-5@20250929") ==
                config::provider_kind::anthropic));
    BOOST_TEST((config::dialect_for(up, "gemini-2.5-flash") == config::provider_kind::gemini));
    // A direct Gemini upstream that is asked for a claude-* name still speaks Gemini.
    up.host = config::hosting::direct;
    BOOST_TEST((config::dialect_for(up, "claude-x") == config::provider_kind::gemini));
}

BOOST_AUTO_TEST_CASE(targets_name_the_project_location_publisher_and_method) {
    auto up = vertex_upstream();
    BOOST_TEST(vertex::target(up, "gemini-2.5-flash", "generateContent") ==
               "/v1/projects/my-project/locations/us-east5/publishers/google/models/"
               "gemini-2.5-flash:generateContent");
    BOOST_TEST(vertex::target(up, "claude-sonnet-4-5@20250929", "streamRawPredict") ==
               "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
               "claude-sonnet-4-5@20250929:streamRawPredict");
    // The API version a client asked of Vertex's own paths.
    BOOST_TEST(vertex::target(up, "gemini-2.5-flash", "generateContent", "v1beta1") ==
               "/v1beta1/projects/my-project/locations/us-east5/publishers/google/models/"
               "gemini-2.5-flash:generateContent");
    // A dialect's model target is put below them, its query kept; any other target is not.
    auto global = vertex_upstream("global");
    BOOST_TEST(
        vertex::wire_target(global, "/models/gemini-2.5-pro:streamGenerateContent?alt=sse") ==
        "/v1/projects/my-project/locations/global/publishers/google/models/"
        "gemini-2.5-pro:streamGenerateContent?alt=sse");
    BOOST_TEST(vertex::wire_target(global, "/models") == "/models");
    BOOST_TEST(vertex::wire_target(global, "/models/a/b:x") == "/models/a/b:x");
    // The translated requests' targets.
    auto r =
        from_openai(R"({"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(vertex::claude_adapter().target(r) == "/models/claude-sonnet-4-5:rawPredict");
    r.stream = true;
    BOOST_TEST(vertex::claude_adapter().target(r) == "/models/claude-sonnet-4-5:streamRawPredict");
}

BOOST_AUTO_TEST_CASE(raw_predict_bodies_lose_the_model_and_name_vertex_s_version) {
    std::string body =
        R"({ "model" : "claude-x", "max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a \"model\": b","cache_control":{"type":"ephemeral"}}]}],"thinking":{"type":"enabled","budget_tokens":1024} , "stream": true })";
    BOOST_TEST(vertex::raw_predict_method(body) == "streamRawPredict");
    BOOST_TEST_REQUIRE(vertex::to_raw_predict(body));
    BOOST_TEST(
        body ==
        R"({"anthropic_version":"vertex-2023-10-16","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a \"model\": b","cache_control":{"type":"ephemeral"}}]}],"thinking":{"type":"enabled","budget_tokens":1024},"stream": true})");
    // A version the client gave is replaced; an empty object gets only Vertex's.
    std::string versioned = R"({"anthropic_version":"bedrock-2023-05-31","stream":false})";
    BOOST_TEST(vertex::raw_predict_method(versioned) == "rawPredict");
    BOOST_TEST_REQUIRE(vertex::to_raw_predict(versioned));
    BOOST_TEST(versioned == R"({"anthropic_version":"vertex-2023-10-16","stream":false})");
    std::string empty = " {} ";
    BOOST_TEST_REQUIRE(vertex::to_raw_predict(empty));
    BOOST_TEST(empty == R"( {"anthropic_version":"vertex-2023-10-16"})");
    // No object, or one cut short: left as it was (the upstream refuses it).
    for (std::string bad : {"[1]", R"({"model":"x")", R"({"a" 1})", ""}) {
        auto before = bad;
        BOOST_TEST(!vertex::to_raw_predict(bad));
        BOOST_TEST(bad == before);
        BOOST_TEST(vertex::raw_predict_method(bad) == "rawPredict");
    }
}

BOOST_AUTO_TEST_CASE(translated_claude_requests_are_what_the_fake_vertex_takes) {
    auto r = from_openai(
        R"({"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})");
    std::string error;
    auto body = vertex::claude_adapter().encode(r, error);
    BOOST_TEST_REQUIRE(!body.empty(), error);
    gateway::testing::received_request received;
    received.method = "POST";
    received.target =
        "/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:"
        "rawPredict";
    received.body = body;
    received.headers = {{"Authorization", "Bearer token"}};
    auto call = gateway::testing::fake_vertex::read_path(received.target);
    BOOST_TEST_REQUIRE(call.has_value());
    auto refused = gateway::testing::fake_vertex::refusal(received, json::parse(body), *call, {});
    BOOST_TEST(!refused.has_value(), (refused ? refused->body : std::string()));
    auto sent = json::parse(body).as_object();
    BOOST_TEST(!sent.contains("model"));
    BOOST_TEST(sent["anthropic_version"] == json::value("vertex-2023-10-16"));
}

BOOST_AUTO_TEST_CASE(native_paths_name_a_publisher_model_and_method_it_forwards) {
    auto claude = vertex::read_native_path(
        "/vertex/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict");
    BOOST_TEST_REQUIRE(claude.has_value());
    BOOST_TEST(claude->publisher == "anthropic");
    BOOST_TEST(claude->model == "claude-sonnet-4-5@20250929");
    BOOST_TEST(claude->method == "streamRawPredict");
    auto gemini = vertex::read_native_path(
        "/vertex/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:"
        "countTokens");
    BOOST_TEST_REQUIRE(gemini.has_value());
    BOOST_TEST(gemini->method == "countTokens");
    BOOST_TEST(claude->version == "v1");
    // Google's SDKs in Vertex mode ask v1beta1 unless told otherwise.
    auto beta = vertex::read_native_path(
        "/vertex/v1beta1/projects/p/locations/global/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent");
    BOOST_TEST_REQUIRE(beta.has_value());
    BOOST_TEST(beta->version == "v1beta1");
    BOOST_TEST(beta->model == "gemini-2.5-flash");
    BOOST_TEST(beta->method == "streamGenerateContent");
    for (std::string_view other : {
             "/vertex/v1/projects/p/locations/l/publishers/anthropic/models/c:generateContent",
             "/vertex/v1/projects/p/locations/l/publishers/google/models/g:rawPredict",
             "/vertex/v1/projects/p/locations/l/publishers/meta/models/m:rawPredict",
             "/vertex/v1/projects/p/locations/l/publishers/google/models/g",
             "/vertex/v1/projects/p/locations/l/publishers/google/models/a/b:generateContent",
             "/vertex/v1/projects//locations/l/publishers/google/models/g:generateContent",
             "/vertex/v2/projects/p/locations/l/publishers/google/models/g:generateContent",
             "/vertex/v1beta/projects/p/locations/l/publishers/google/models/g:generateContent",
             "/vertex/v1beta1projects/p/locations/l/publishers/google/models/g:generateContent",
             "/vertexv1/projects/p/locations/l/publishers/google/models/g:generateContent",
         })
        BOOST_TEST(!vertex::read_native_path(other).has_value(), other);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_vertex_test
