#include "gateway/upstream/prober.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_prober_test {

// The probe's request per dialect, and what its answer says (prober.cpp); the probes themselves
// run against fake upstreams in tests/integration/health_test.cpp.
using namespace gateway::upstream;
namespace config = gateway::config;

namespace {

config::upstream_config upstream(config::provider_kind p, std::string url, std::string key) {
    config::upstream_config u;
    u.name = "u";
    u.provider = p;
    u.base_url = std::move(url);
    u.endpoint = *config::parse_base_url(u.base_url).value;
    u.api_key = std::move(key);
    return u;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_prober)

BOOST_AUTO_TEST_CASE(each_dialect_is_asked_its_model_list_with_the_gateways_key) {
    auto openai = prober::request_head(
        upstream(config::provider_kind::openai, "https://api.example.com/v1", "sk-1"));
    BOOST_TEST(openai.rfind("GET /v1/models HTTP/1.1\r\nHost: api.example.com\r\n", 0) == 0u,
               openai);
    BOOST_TEST(openai.find("Authorization: Bearer sk-1\r\n") != std::string::npos);
    BOOST_TEST(openai.size() - openai.rfind("\r\n\r\n") == 4u);  // no body
    auto claude = prober::request_head(
        upstream(config::provider_kind::anthropic, "https://api.anthropic.com", "sk-ant"));
    BOOST_TEST(claude.rfind("GET /v1/models HTTP/1.1\r\n", 0) == 0u, claude);
    BOOST_TEST(claude.find("x-api-key: sk-ant\r\n") != std::string::npos);
    BOOST_TEST(claude.find("anthropic-version: ") != std::string::npos);
    auto gemini = prober::request_head(upstream(
        config::provider_kind::gemini, "https://generativelanguage.googleapis.com/v1beta", "g"));
    BOOST_TEST(gemini.rfind("GET /v1beta/models HTTP/1.1\r\n", 0) == 0u, gemini);
    BOOST_TEST(gemini.find("x-goog-api-key: g\r\n") != std::string::npos);
    auto keyless = prober::request_head(
        upstream(config::provider_kind::openai, "http://127.0.0.1:8000/v1", ""));
    BOOST_TEST(keyless.find("Authorization") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_azure_upstream_with_entra_id_is_asked_with_the_token_it_is_given) {
    auto azure = upstream(config::provider_kind::openai, "https://r.openai.azure.com", "");
    azure.host = config::hosting::azure;
    azure.api_version = "2024-10-21";
    auto head = prober::request_head(azure, "Authorization: Bearer eyJ.token\r\n");
    BOOST_TEST(head.rfind("GET /openai/models?api-version=2024-10-21 HTTP/1.1\r\n", 0) == 0u, head);
    BOOST_TEST(head.find("Authorization: Bearer eyJ.token\r\n") != std::string::npos, head);
    BOOST_TEST(head.find("api-key") == std::string::npos, head);
    BOOST_TEST(head.size() - head.rfind("\r\n\r\n") == 4u);
}

BOOST_AUTO_TEST_CASE(an_answer_says_the_server_is_up_unless_it_is_the_servers_failure) {
    BOOST_TEST(prober::judge(200).empty());
    BOOST_TEST(prober::judge(404).empty());  // no model list there, but it answers
    BOOST_TEST(prober::judge(403).empty());
    BOOST_TEST(prober::judge(401) == "probe answered 401");  // the gateway's key refused
    BOOST_TEST(prober::judge(429) == "probe answered 429");
    BOOST_TEST(prober::judge(503) == "probe answered 503");
    BOOST_TEST(prober::judge(408) == "probe answered 408");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_prober_test
