#include "gateway/upstream/token_sources.hpp"

#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <string>

namespace upstream_token_sources_test {

using namespace gateway;
using namespace std::chrono_literals;

namespace {

upstream::environment env_of(std::map<std::string, std::string> variables) {
    return [variables](const std::string& name) -> std::optional<std::string> {
        auto it = variables.find(name);
        if (it == variables.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_token_sources)

// Without a key file a Vertex AI upstream asks the metadata server, GCE_METADATA_HOST's when it
// is set; its origin (what errors and logs name) says which.
BOOST_AUTO_TEST_CASE(vertex_without_a_key_file_asks_the_metadata_server) {
    config::upstream_config up;
    up.name = "vertex";
    up.host = config::hosting::vertex;
    auto made = upstream::make_token_source(up, env_of({{"GCE_METADATA_HOST", "meta.test:8080"}}));
    BOOST_TEST_REQUIRE(bool(made), made.error);
    BOOST_TEST_REQUIRE(bool(*made.value));
    BOOST_TEST((*made.value)->origin() == "the metadata server at meta.test:8080");
    (*made.value)->stop();
    auto standard = upstream::make_token_source(up, env_of({}));
    BOOST_TEST_REQUIRE(bool(standard), standard.error);
    BOOST_TEST((*standard.value)->origin() == "the metadata server at metadata.google.internal");
    (*standard.value)->stop();
}

// The upstream's own credentials_file comes before GOOGLE_APPLICATION_CREDENTIALS, and the error
// says which of the two named the file it could not read.
BOOST_AUTO_TEST_CASE(the_configured_key_file_comes_before_the_environment_s) {
    config::upstream_config up;
    up.name = "vertex";
    up.host = config::hosting::vertex;
    up.credentials_file = "/nonexistent/configured.json";
    auto made = upstream::make_token_source(
        up, env_of({{"GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/environment.json"}}));
    BOOST_TEST(!made);
    BOOST_TEST(made.error.starts_with("credentials_file: "), made.error);
    BOOST_TEST(made.error.find("configured.json") != std::string::npos, made.error);
}

// An Azure upstream's Entra ID application is named with its tenant and the authority its
// tokens come from: AZURE_AUTHORITY_HOST when the upstream sets none.
BOOST_AUTO_TEST_CASE(an_entra_application_is_named_with_its_authority) {
    config::upstream_config up;
    up.name = "azure";
    up.host = config::hosting::azure;
    up.azure.tenant_id = "tenant-1";
    up.azure.client_id = "app-1";
    up.azure.client_secret = "secret";
    auto made =
        upstream::make_token_source(up, env_of({{"AZURE_AUTHORITY_HOST", "login.example.us/"}}));
    BOOST_TEST_REQUIRE(bool(made), made.error);
    BOOST_TEST_REQUIRE(bool(*made.value));
    const auto& origin = (*made.value)->origin();
    BOOST_TEST(origin == "application app-1 of tenant tenant-1 at https://login.example.us");
    // Never the secret.
    BOOST_TEST(origin.find("secret") == std::string::npos);
    (*made.value)->stop();
}

// expires_in as a number or its text, positive; the error and its description in the
// service's words, or the start of an answer that is not OAuth's.
BOOST_AUTO_TEST_CASE(a_token_answer_needs_a_positive_lifetime) {
    auto now = std::chrono::system_clock::now();
    auto got =
        upstream::read_token_answer("T", 200, R"({"access_token":"a","expires_in":60})", now);
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.value->token == "a");
    BOOST_TEST((got.value->expires_at == now + 60s));
    auto zero =
        upstream::read_token_answer("T", 200, R"({"access_token":"a","expires_in":0})", now);
    BOOST_TEST(zero.error == "T's answer has no expires_in in seconds");
    auto text = upstream::read_token_answer(
        "T", 200, R"({"access_token":"a","expires_in":"60 seconds"})", now);
    BOOST_TEST(text.error == "T's answer has no expires_in in seconds");
    auto list = upstream::read_token_answer("T", 200, "[1]", now);
    BOOST_TEST(list.error == "T's answer is not a JSON object");
    auto refused = upstream::read_token_answer(
        "Entra ID", 400, R"({"error":"invalid_grant","error_description":"AADSTS70000"})", now);
    BOOST_TEST(refused.error == "Entra ID refused (400 invalid_grant): AADSTS70000");
    auto bare = upstream::read_token_answer("T", 401, R"({"error":"invalid_client"})", now);
    BOOST_TEST(bare.error == "T refused (401 invalid_client)");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_token_sources_test
