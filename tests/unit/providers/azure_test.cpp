#include "gateway/providers/azure.hpp"

#include "gateway/upstream/exchange.hpp"

#include <boost/test/unit_test.hpp>

namespace providers_azure_test {

namespace azure = gateway::providers::azure;
namespace config = gateway::config;

namespace {

config::upstream_config resource(std::string version) {
    config::upstream_config up;
    up.base_url = "https://res.openai.azure.com";
    up.endpoint = *config::parse_base_url(up.base_url).value;
    up.host = config::hosting::azure;
    up.api_version = std::move(version);
    up.deployments = {{"gpt-4o", "prod-gpt4o"}};
    return up;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_azure)

BOOST_AUTO_TEST_CASE(the_deployments_api_names_the_deployment_and_the_api_version) {
    auto up = resource("2024-10-21");
    BOOST_TEST(azure::target(up, "gpt-4o", "/chat/completions") ==
               "/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21");
    // A model not listed is its own deployment, encoded as one path segment.
    BOOST_TEST(azure::target(up, "gpt-4o-mini", "/embeddings") ==
               "/openai/deployments/gpt-4o-mini/embeddings?api-version=2024-10-21");
    BOOST_TEST(azure::target(up, "a/b c", "/completions") ==
               "/openai/deployments/a%2Fb%20c/completions?api-version=2024-10-21");
    // Responses is below /openai; a call without a model too. The client's api-version gives way.
    BOOST_TEST(azure::target(up, "gpt-4o", "/responses") ==
               "/openai/responses?api-version=2024-10-21");
    BOOST_TEST(azure::target(up, "", "/files?purpose=batch&api-version=2020-01-01") ==
               "/openai/files?purpose=batch&api-version=2024-10-21");
}

BOOST_AUTO_TEST_CASE(the_v1_api_keeps_openais_paths) {
    auto up = resource("v1");
    BOOST_TEST(azure::target(up, "gpt-4o", "/chat/completions") == "/openai/v1/chat/completions");
    BOOST_TEST(azure::target(up, "", "/models") == "/openai/v1/models");
}

BOOST_AUTO_TEST_CASE(every_request_head_is_written_with_the_wire_target) {
    auto up = resource("2024-10-21");
    BOOST_TEST(gateway::upstream::json_post_head(up, "/chat/completions", "gpt-4o", false,
                                                 "api-key: k\r\n", "req-1", 2)
                   .starts_with("POST /openai/deployments/prod-gpt4o/chat/completions"
                                "?api-version=2024-10-21 HTTP/1.1\r\n"));
    config::upstream_config direct;
    std::string head = "POST /v1";
    gateway::upstream::append_wire_target(head, direct, "gpt-4o", "/chat/completions?x=1");
    BOOST_TEST(head == "POST /v1/chat/completions?x=1");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_azure_test
