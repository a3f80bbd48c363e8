// Azure OpenAI behind /v1: the gateway in-process against the fake upstream's Azure resource
// (fake_azure.hpp), which takes only its `api-key`, needs an api-version it knows on the
// deployments API, knows its deployments, and answers as Azure does: a content filter's 400 and
// finish_reason, a 429 with retry-after-ms.
#include "tests/integration/harness.hpp"
#include "tests/support/fake_azure.hpp"
#include "tests/support/fake_google.hpp"
#include "tests/support/fake_providers.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <thread>

namespace integration_azure_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

constexpr const char* admin_key = "admin-key-0123456789";
const std::string api_version = "2024-10-21";

// The fake as an Azure OpenAI resource (gpt-*), its key the gateway's (`auth: replace`), gpt-4o
// served by the deployment prod-gpt4o and gpt-4o-mini by its namesake.
config::gateway_config with_azure(const fake_upstream& fake, std::string version = api_version) {
    auto c = make_config({"http://127.0.0.1:" + std::to_string(fake.port())});
    c.admin.api_key = admin_key;
    auto& a = c.upstreams[0];
    a.name = "azure";
    a.host = config::hosting::azure;
    a.provider = config::provider_kind::openai;
    a.tool_calling = config::tool_calling_mode::native;
    a.api_key = std::string(fake_azure::api_key);
    a.auth = config::auth_mode::replace;
    a.api_version = std::move(version);
    if (a.api_version != "v1") a.deployments = {{"gpt-4o", "prod-gpt4o"}};
    a.models = {"gpt-*", "prod-*"};
    return c;
}

// The fake as an Azure OpenAI resource that takes the Entra ID tokens of application client-1
// of tenant-1 (and no key), and the gateway's upstream for it with that application.
struct entra_resource {
    fake_entra entra{"tenant-1", "client-1", "secret-1"};
    fake_upstream fake{checking(entra)};
    config::gateway_config config = with_entra_id(with_azure(fake), entra);

    static fake_options checking(const fake_entra& entra) {
        fake_options options;
        options.azure_tokens = [&entra](std::string_view token) { return entra.check(token); };
        return options;
    }
    static config::gateway_config with_entra_id(config::gateway_config c, const fake_entra& entra) {
        auto& a = c.upstreams[0];
        a.api_key.clear();
        a.azure = {"tenant-1", "client-1", "secret-1", entra.authority()};
        return c;
    }
};

std::string deployed(std::string_view deployment, std::string_view operation) {
    return "/openai/deployments/" + std::string(deployment) + std::string(operation) +
           "?api-version=" + api_version;
}

response post(const running_gateway& gw, const std::string& path, const std::string& body,
              std::string_view headers = {}) {
    client c(gw.port());
    return c.request(make_request("POST", path, body,
                                  "Content-Type: application/json\r\n" + std::string(headers)));
}

std::string chat(const std::string& model, bool stream = false, std::string_view text = "hi") {
    return R"({"model":")" + model + R"(","stream":)" + (stream ? "true" : "false") +
           R"(,"messages":[{"role":"user","content":")" + std::string(text) + R"("}]})";
}

json::object error_of(const response& r) {
    return json::parse(r.body).as_object().at("error").as_object();
}

// The entry of upstream `name` in GET /admin/health.
json::object upstream_health(const running_gateway& gw, std::string_view name) {
    client c(gw.port());
    auto r = c.request(make_request("GET", "/admin/health", "",
                                    std::string("Authorization: Bearer ") + admin_key + "\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    auto health = json::parse(r.body);
    for (const auto& u : health.at("upstreams").as_array())
        if (u.at("name").as_string() == name) return u.as_object();
    BOOST_FAIL("no upstream " << name << " in /admin/health");
    return {};
}

std::string health_text(const json::object& u) {
    const auto& v = u.at("health");
    return v.is_string() ? std::string(v.as_string()) : std::string();
}

const std::string weather_tools = R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather in a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";

}  // namespace

BOOST_AUTO_TEST_SUITE(azure)

BOOST_AUTO_TEST_CASE(a_chat_completion_goes_to_its_deployment_byte_for_byte_with_api_key) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    // Spacing and member order of the client's own: the body goes as it came.
    std::string body =
        R"({ "messages" : [{"role":"user","content":"hi"}], "model":"gpt-4o", "n": 1 })";
    auto r = post(gw, "/v1/chat/completions", body, "Authorization: Bearer sk-client\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto answer = json::parse(r.body).as_object();
    BOOST_TEST(answer["object"] == json::value("chat.completion"));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == deployed("prod-gpt4o", "/chat/completions"));
    BOOST_TEST(sent.header("api-key") == fake_azure::api_key);
    BOOST_TEST(sent.header("authorization").empty());  // the client's key never goes
    BOOST_TEST(sent.body == body);
}

BOOST_AUTO_TEST_CASE(a_model_without_a_deployment_entry_is_its_own_deployment) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    auto r = post(gw, "/v1/chat/completions", chat("gpt-4o-mini"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(fake.requests().back().target == deployed("gpt-4o-mini", "/chat/completions"));
    // A deployment the resource does not have: Azure's 404, the client's answer as it is.
    auto missing = post(gw, "/v1/chat/completions", chat("gpt-5-nano"));
    BOOST_TEST(missing.status == 404u, missing.body);
    BOOST_TEST(error_of(missing)["code"] == json::value("DeploymentNotFound"));
    BOOST_TEST(health_text(upstream_health(gw, "azure")) != "cooling");
}

BOOST_AUTO_TEST_CASE(a_stream_is_relayed_as_it_comes) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    auto r = post(gw, "/v1/chat/completions", chat("gpt-4o", true));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("content-type").starts_with("text/event-stream"));
    auto s = read_chat_stream(r.body);
    BOOST_TEST(s.done);
    BOOST_TEST(s.text.starts_with("Hello from the fake upstream!"), s.text);
    BOOST_TEST(fake.requests().back().target == deployed("prod-gpt4o", "/chat/completions"));
}

BOOST_AUTO_TEST_CASE(a_tool_round_trip_goes_through_the_deployment) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    std::string ask = R"({"model":"gpt-4o","tools":)" + weather_tools +
                      R"(,"messages":[{"role":"user","content":"weather in Paris?"}]})";
    auto called = post(gw, "/v1/chat/completions", ask);
    BOOST_TEST_REQUIRE(called.status == 200u, called.body);
    auto choice = json::parse(called.body).as_object()["choices"].as_array()[0].as_object();
    BOOST_TEST(choice["finish_reason"] == json::value("tool_calls"));
    auto call = choice["message"].as_object()["tool_calls"].as_array()[0].as_object();
    auto id = std::string(call["id"].as_string());
    std::string answer = R"({"model":"gpt-4o","tools":)" + weather_tools +
                         R"(,"messages":[{"role":"user","content":"weather in Paris?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":")" +
                         id + R"(","type":"function","function":{"name":"get_weather",
        "arguments":"{\"city\":\"Paris\"}"}}]},
      {"role":"tool","tool_call_id":")" +
                         id + R"(","content":"sunny"}]})";
    auto done = post(gw, "/v1/chat/completions", answer);
    BOOST_TEST_REQUIRE(done.status == 200u, done.body);
    auto text = json::parse(done.body).as_object()["choices"].as_array()[0].as_object();
    BOOST_TEST(text["finish_reason"] == json::value("stop"));
    BOOST_TEST(fake.requests().back().target == deployed("prod-gpt4o", "/chat/completions"));
}

BOOST_AUTO_TEST_CASE(every_client_dialect_reaches_the_deployment) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    // Anthropic's Messages, translated to the deployment's Chat Completions.
    auto messages = post(gw, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":64,"messages":[{"role":"user",
                             "content":"hi"}]})",
                         "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(messages.status == 200u, messages.body);
    BOOST_TEST(json::parse(messages.body).as_object()["type"] == json::value("message"));
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == deployed("prod-gpt4o", "/chat/completions"));
    BOOST_TEST(sent.header("api-key") == fake_azure::api_key);
    // Gemini's generateContent, streamed.
    auto gemini = post(gw, "/v1beta/models/gpt-4o:streamGenerateContent?alt=sse",
                       R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})");
    BOOST_TEST_REQUIRE(gemini.status == 200u, gemini.body);
    BOOST_TEST(gemini.body.find(R"("text":" fake")") != std::string::npos, gemini.body);
    BOOST_TEST(fake.requests().back().target == deployed("prod-gpt4o", "/chat/completions"));
    // Responses: Azure's is below /openai, the deployment named by the body's model.
    auto responses = post(gw, "/v1/responses", R"({"model":"gpt-4o-mini","input":"hi"})");
    BOOST_TEST_REQUIRE(responses.status == 200u, responses.body);
    BOOST_TEST(fake.requests().back().target == "/openai/responses?api-version=" + api_version);
}

BOOST_AUTO_TEST_CASE(the_v1_api_takes_openais_paths_with_the_model_in_the_body) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake, "v1"));
    auto r = post(gw, "/v1/chat/completions", chat("prod-gpt4o"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == "/openai/v1/chat/completions");
    BOOST_TEST(sent.header("api-key") == fake_azure::api_key);
    auto translated = post(gw, "/v1/messages",
                           R"({"model":"prod-gpt4o","max_tokens":64,"messages":[{"role":"user",
                               "content":"hi"}]})",
                           "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(translated.status == 200u, translated.body);
    BOOST_TEST(fake.requests().back().target == "/openai/v1/chat/completions");
}

BOOST_AUTO_TEST_CASE(the_clients_own_key_goes_as_api_key_and_a_bearer_key_is_refused) {
    fake_upstream fake;
    auto c = with_azure(fake);
    c.upstreams[0].api_key.clear();
    c.upstreams[0].auth = config::auth_mode::forward;
    running_gateway gw(c);
    auto own = post(gw, "/v1/chat/completions", chat("gpt-4o"),
                    "api-key: " + std::string(fake_azure::api_key) + "\r\n");
    BOOST_TEST_REQUIRE(own.status == 200u, own.body);
    BOOST_TEST(fake.requests().back().header("api-key") == fake_azure::api_key);
    // A key as a Bearer token is no Entra ID token: Azure's 401, the client's own answer.
    auto bearer = post(gw, "/v1/chat/completions", chat("gpt-4o"),
                       "Authorization: Bearer " + std::string(fake_azure::api_key) + "\r\n");
    BOOST_TEST(bearer.status == 401u, bearer.body);
    BOOST_TEST(fake.requests().back().header("api-key").empty());
}

BOOST_AUTO_TEST_CASE(an_api_version_the_resource_does_not_know_is_its_400) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake, "2019-01-01"));
    auto r = post(gw, "/v1/chat/completions", chat("gpt-4o"));
    BOOST_TEST(r.status == 400u, r.body);
    BOOST_TEST(error_of(r)["message"] == json::value("API version not supported"));
}

BOOST_AUTO_TEST_CASE(the_model_list_is_its_models_and_deployments) {
    fake_upstream fake;
    auto c = with_azure(fake);
    c.upstreams[0].models = {"gpt-*", "o3-mini"};
    running_gateway gw(c);
    client cl(gw.port());
    auto r = cl.request(make_request("GET", "/v1/models"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    std::set<std::string> ids;
    auto listed = json::parse(r.body);
    for (const auto& m : listed.at("data").as_array())
        ids.insert(std::string(m.at("id").as_string()));
    BOOST_TEST(ids.count("gpt-4o") == 1u, r.body);
    BOOST_TEST(ids.count("o3-mini") == 1u, r.body);
    // Azure's deployments API has no list of deployments: it is not asked.
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(a_content_filter_refusal_is_the_clients_answer_and_cools_nothing) {
    fake_upstream fake;
    auto c = with_azure(fake);
    // A second target that would answer: the filter's answer is final, nothing falls back.
    c.upstreams.push_back(make_config(fake).upstreams[0]);
    c.upstreams[1].name = "openai";
    c.upstreams[1].models = {"other-*"};
    config::route_config route;
    route.model = "smart";
    route.targets.push_back({"azure", "gpt-4o", 1, 0});
    route.targets.push_back({"openai", "fake-model", 1, 1});
    c.routes.push_back(route);
    running_gateway gw(c);
    auto r = post(gw, "/v1/chat/completions", chat("smart", false, fake_azure::filtered_prompt));
    BOOST_TEST_REQUIRE(r.status == 400u, r.body);
    auto error = error_of(r);
    BOOST_TEST(error["code"] == json::value("content_filter"));
    BOOST_TEST(error["innererror"].as_object().contains("content_filter_result"));
    BOOST_TEST(fake.requests().size() == 1u);  // no fallback
    // Translated: the filter's 400 in the client's dialect.
    auto messages = post(gw, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":64,"messages":[{"role":"user",
                             "content":")" +
                             std::string(fake_azure::filtered_prompt) + R"("}]})",
                         "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(messages.status == 400u, messages.body);
    auto said = json::parse(messages.body).as_object();
    BOOST_TEST(said["type"] == json::value("error"));
    BOOST_TEST(said["error"].as_object()["message"].as_string().find("content management policy") !=
                   std::string::npos,
               messages.body);
    BOOST_TEST(health_text(upstream_health(gw, "azure")) != "cooling");
    BOOST_TEST(post(gw, "/v1/chat/completions", chat("smart")).status == 200u);
    BOOST_TEST(fake.requests().back().target == deployed("prod-gpt4o", "/chat/completions"));
}

BOOST_AUTO_TEST_CASE(an_answer_the_filter_cut_keeps_its_finish_reason_or_the_nearest) {
    fake_upstream fake;
    running_gateway gw(with_azure(fake));
    auto chat_answer =
        post(gw, "/v1/chat/completions", chat("gpt-4o", false, fake_azure::filtered_answer));
    BOOST_TEST_REQUIRE(chat_answer.status == 200u, chat_answer.body);
    auto choice = json::parse(chat_answer.body).as_object()["choices"].as_array()[0].as_object();
    BOOST_TEST(choice["finish_reason"] == json::value("content_filter"));
    auto streamed =
        post(gw, "/v1/chat/completions", chat("gpt-4o", true, fake_azure::filtered_answer));
    BOOST_TEST_REQUIRE(streamed.status == 200u, streamed.body);
    BOOST_TEST(read_chat_stream(streamed.body).finish_reason == "content_filter");
    // Anthropic's nearest: a refusal.
    auto messages = post(gw, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":64,"messages":[{"role":"user",
                             "content":")" +
                             std::string(fake_azure::filtered_answer) + R"("}]})",
                         "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(messages.status == 200u, messages.body);
    BOOST_TEST(json::parse(messages.body).as_object()["stop_reason"] == json::value("refusal"));
    BOOST_TEST(health_text(upstream_health(gw, "azure")) != "cooling");
}

BOOST_AUTO_TEST_CASE(a_429_tells_the_client_when_to_retry_and_cools_the_upstream_that_long) {
    fake_upstream fake;
    auto c = with_azure(fake);
    c.health.cooldown = config::duration(100);
    running_gateway gw(c);
    auto r = post(gw, "/v1/chat/completions", chat("gpt-4o"), "x-fake-status: 429\r\n");
    BOOST_TEST_REQUIRE(r.status == 429u, r.body);
    BOOST_TEST(r.header("retry-after-ms") == "1500");
    BOOST_TEST(r.header("retry-after") == "2");
    // Cooled for Azure's 1.5 s, not the configured 100 ms.
    auto until = clock::now() + 5s;
    auto u = upstream_health(gw, "azure");
    while (health_text(u) != "cooling" && clock::now() < until) {
        std::this_thread::sleep_for(10ms);
        u = upstream_health(gw, "azure");
    }
    BOOST_TEST_REQUIRE(health_text(u) == "cooling");
    BOOST_TEST(u.at("cooling_for_ms").as_int64() > 1000);
    // Translated (a gateway of its own, where Azure is not cooling yet): the same hints.
    running_gateway fresh(with_azure(fake));
    auto messages = post(fresh, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":64,"messages":[{"role":"user",
                             "content":"hi"}]})",
                         "anthropic-version: 2023-06-01\r\nx-fake-status: 429\r\n");
    BOOST_TEST(messages.status == 429u, messages.body);
    BOOST_TEST(messages.header("retry-after-ms") == "1500");
}

BOOST_AUTO_TEST_CASE(an_entra_id_application_sends_its_token_and_never_the_clients_key) {
    entra_resource resource;
    auto& [entra, fake, c] = resource;
    c.upstreams[0].auth = config::auth_mode::forward;
    running_gateway gw(c);
    auto r = post(gw, "/v1/chat/completions", chat("gpt-4o"),
                  "Authorization: Bearer sk-client\r\napi-key: client-key\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto sent = fake.requests().back();
    BOOST_TEST(sent.target == deployed("prod-gpt4o", "/chat/completions"));
    BOOST_TEST(sent.header("authorization").starts_with("Bearer eyJ0eXAiOiJKV1Qi.fake-entra-"));
    BOOST_TEST(sent.header("api-key").empty());
    // Translated requests carry the same token, fetched once.
    auto messages = post(gw, "/v1/messages",
                         R"({"model":"gpt-4o","max_tokens":64,"messages":[{"role":"user",
                             "content":"hi"}]})",
                         "anthropic-version: 2023-06-01\r\nx-api-key: sk-ant-client\r\n");
    BOOST_TEST_REQUIRE(messages.status == 200u, messages.body);
    BOOST_TEST(fake.requests().back().header("authorization") == sent.header("authorization"));
    BOOST_TEST(entra.issued() == 1u);
}

// An Entra ID upstream's health probe carries its current token, as its requests do: the
// resource answers the probe, and the upstream is healthy (without the token Azure refuses the
// probe, 401, and the upstream would be down with no request having failed).
BOOST_AUTO_TEST_CASE(an_entra_id_upstreams_probe_carries_its_token) {
    entra_resource resource;
    auto& [entra, fake, c] = resource;
    c.upstreams[0].probe_interval = config::duration(20);
    running_gateway gw(c);
    BOOST_TEST_REQUIRE(fake.wait_requests(2, std::chrono::seconds(5)));
    auto probe = fake.requests().front();
    BOOST_TEST(probe.method == "GET");
    BOOST_TEST(probe.target == "/openai/models?api-version=" + api_version);
    BOOST_TEST(probe.header("authorization").starts_with("Bearer eyJ0eXAiOiJKV1Qi.fake-entra-"));
    std::string health;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (health != "healthy" && std::chrono::steady_clock::now() < until) {
        client admin(gw.port());
        auto r =
            admin.request(make_request("GET", "/admin/health", "",
                                       std::string("Authorization: Bearer ") + admin_key + "\r\n"));
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        auto listed = json::parse(r.body);
        for (const auto& u : listed.at("upstreams").as_array())
            if (u.at("name") == "azure") health = u.at("health").as_string();
        if (health != "healthy") std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    BOOST_TEST(health == "healthy");
    BOOST_TEST(entra.issued() == 1u);  // the requests' token, not one per probe
}

// The issue's route across the three clouds: Azure fails, then Vertex AI, and Bedrock answers,
// charged at its own price; once their cooldowns end the route is back on Azure, charged at
// Azure's. Each cloud is a fake of its own, so that each can be told to fail once.
BOOST_AUTO_TEST_CASE(a_route_falls_back_from_azure_to_vertex_to_bedrock_and_back) {
    namespace fp = gateway::testing::fake_providers;
    test_service_account account;
    fake_google_oauth google(account);
    auto key_file = temporary_folder() + "/service-account.json";
    std::ofstream(key_file) << account.key_file(google.token_uri());
    fake_upstream azure_fake;
    fake_options checked;
    checked.vertex_tokens = [&](std::string_view token) { return google.check(token); };
    fake_upstream vertex_fake(checked);
    fake_upstream bedrock_fake;
    azure_fake.script({{.content = "", .status = 503}, {.content = "back on azure"}});
    vertex_fake.script({{.content = "", .status = 503}});

    auto c = with_azure(azure_fake);
    c.health.cooldown = config::duration(300);
    auto v = make_config({"http://127.0.0.1:" + std::to_string(vertex_fake.port())}).upstreams[0];
    v.name = "vertex";
    v.provider = config::provider_kind::gemini;
    v.host = config::hosting::vertex;
    v.tool_calling = config::tool_calling_mode::native;
    v.project = "my-project";
    v.location = "us-east5";
    v.credentials_file = key_file;
    v.models = {"gemini-*"};
    c.upstreams.push_back(v);
    auto b = make_config({"http://127.0.0.1:" + std::to_string(bedrock_fake.port())}).upstreams[0];
    b.name = "bedrock";
    b.provider = config::provider_kind::bedrock;
    b.tool_calling = config::tool_calling_mode::native;
    b.region = "us-east-1";
    b.aws = {std::string(fp::fake_aws_key_id), std::string(fp::fake_aws_secret), {}, {}};
    b.models = {"meta.*"};
    c.upstreams.push_back(b);
    config::route_config route;
    route.model = "smart";
    route.targets = {{"azure", "gpt-4o", 1, 0},
                     {"vertex", "gemini-2.5-flash", 1, 1},
                     {"bedrock", "meta.llama3-3-70b-instruct-v1:0", 1, 2}};
    c.routes.push_back(route);
    // Each target's price, per million tokens, as that upstream serves the model.
    auto price = [](std::string model, std::string upstream, double rate) {
        config::price_entry e;
        e.model = std::move(model);
        e.upstream = std::move(upstream);
        e.rates.input = rate;
        e.rates.output = rate;
        return e;
    };
    c.pricing.overrides = {price("gpt-4o", "azure", 1000), price("gemini-2.5-flash", "vertex", 100),
                           price("meta.llama3-3-70b-instruct-v1:0", "bedrock", 10)};
    running_gateway gw(c);
    // The cost of an answer at `rate` per million tokens, from the usage it reports.
    auto cost_at = [](const response& r, double rate) {
        auto usage = json::parse(r.body).at("usage").as_object();
        auto tokens = usage.at("prompt_tokens").to_number<double>() +
                      usage.at("completion_tokens").to_number<double>();
        return tokens * rate / 1e6;
    };

    auto first = post(gw, "/v1/chat/completions", chat("smart"));
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("x-contextgate-upstream") == "bedrock");
    BOOST_TEST(first.header("x-contextgate-attempts") == "3");
    BOOST_TEST(
        std::abs(std::stod(first.header("x-contextgate-cost-usd")) - cost_at(first, 10)) < 1e-6,
        first.header("x-contextgate-cost-usd"));
    BOOST_TEST(azure_fake.requests().back().target == deployed("prod-gpt4o", "/chat/completions"));
    BOOST_TEST(vertex_fake.requests().back().target.find("/publishers/google/models/gemini-2.5-"
                                                         "flash:generateContent") !=
               std::string::npos);
    // Both that failed cool; the route's health says so.
    auto targets = [&] {
        client cl(gw.port());
        auto r =
            cl.request(make_request("GET", "/admin/health", "",
                                    std::string("Authorization: Bearer ") + admin_key + "\r\n"));
        auto health = json::parse(r.body);
        std::vector<std::string> out;
        for (const auto& t : health.at("routes").at(0).at("targets").as_array())
            out.emplace_back(t.at("health").as_string());
        return out;
    };
    // The answer reaches the client before the attempt loop records its success; wait for it.
    auto now = targets();
    for (auto until = clock::now() + 5s;
         now.size() == 3u && now[2] != "healthy" && clock::now() < until; now = targets())
        std::this_thread::sleep_for(20ms);
    BOOST_TEST_REQUIRE(now.size() == 3u);
    BOOST_TEST(now[0] == "cooling");
    BOOST_TEST(now[1] == "cooling");
    BOOST_TEST(now[2] == "healthy");
    // Once Azure's cooldown ends, the route is back on it.
    auto until = clock::now() + 5s;
    while (targets()[0] == "cooling" && clock::now() < until) std::this_thread::sleep_for(20ms);
    auto back = post(gw, "/v1/chat/completions", chat("smart"));
    BOOST_TEST_REQUIRE(back.status == 200u, back.body);
    BOOST_TEST(back.header("x-contextgate-upstream") == "azure");
    BOOST_TEST(back.body.find("back on azure") != std::string::npos, back.body);
    BOOST_TEST(
        std::abs(std::stod(back.header("x-contextgate-cost-usd")) - cost_at(back, 1000)) < 1e-6,
        back.header("x-contextgate-cost-usd"));
    until = clock::now() + 5s;
    while (targets()[0] != "healthy" && clock::now() < until) std::this_thread::sleep_for(20ms);
    BOOST_TEST(targets()[0] == "healthy");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_azure_test
