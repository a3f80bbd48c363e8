// Cloud access tokens behind /v1: the gateway in-process with a Vertex AI upstream whose Google
// service account's tokens come from a fake token endpoint (which verifies each JWT assertion),
// and a stand-in for Vertex that takes only a token that endpoint issued and has not expired
// (Vertex's own 401 otherwise). Tokens are fetched once for concurrent requests and replaced
// before they expire; a token that cannot be had is a 502 that says why, within the timeout,
// and the gateway goes on serving.
#include "tests/integration/harness.hpp"
#include "tests/support/fake_aws.hpp"
#include "tests/support/fake_google.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

namespace integration_cloud_tokens_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

const std::string gemini_answer =
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"hello"}]},)"
    R"("finishReason":"STOP","index":0}],)"
    R"("usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4}})";

// Vertex AI as far as tokens go: a model request with a good token is answered, any other gets
// Vertex's 401. What each request carried is kept.
class token_checking_vertex {
public:
    explicit token_checking_vertex(const fake_google_oauth& google)
        : service_([this, &google](const aws_request& r) -> aws_reply {
              std::lock_guard lock(mutex_);
              seen_.push_back(r);
              if (r.method != "POST") return {200, R"({"models":[]})", "application/json"};
              auto authorization = r.field("authorization");
              std::string why = authorization.starts_with("Bearer ")
                                    ? google.check(authorization.substr(7))
                                    : "no token";
              if (!why.empty()) {
                  ++refused_;
                  return {401,
                          R"({"error":{"code":401,"message":"Request had invalid authentication )"
                          R"(credentials. Expected OAuth 2 access token.","status":)"
                          R"("UNAUTHENTICATED"}})",
                          "application/json"};
              }
              return {200, gemini_answer, "application/json"};
          }) {}
    std::string url() const { return service_.url(); }
    std::size_t refused() const {
        std::lock_guard lock(mutex_);
        return refused_;
    }
    std::vector<aws_request> seen() const {
        std::lock_guard lock(mutex_);
        return seen_;
    }
    // The model requests among them (the gateway's health probes ask for its model list).
    std::size_t posted() const {
        std::lock_guard lock(mutex_);
        return static_cast<std::size_t>(std::count_if(
            seen_.begin(), seen_.end(), [](const auto& r) { return r.method == "POST"; }));
    }

private:
    mutable std::mutex mutex_;
    std::vector<aws_request> seen_;
    std::size_t refused_ = 0;
    fake_aws_service service_;  // last: it answers from what is above
};

std::string key_file_at(const test_service_account& account, const std::string& token_uri) {
    auto path = temporary_folder() + "/sa.json";
    std::ofstream(path) << account.key_file(token_uri);
    return path;
}

// An OpenAI-compatible upstream (gpt-*, the fake) and a Vertex AI one (gemini-*) at `vertex_url`
// whose service account key file is `key_file`.
config::gateway_config with_vertex(const fake_upstream& fake, const std::string& vertex_url,
                                   const std::string& key_file) {
    auto c = make_config({fake.base_url(), vertex_url});
    c.upstreams[0].models = {"gpt-*"};
    auto& v = c.upstreams[1];
    v.name = "vertex";
    v.host = config::hosting::vertex;
    v.provider = config::provider_kind::gemini;
    v.tool_calling = config::tool_calling_mode::native;
    v.project = "test-project";
    v.location = "us-central1";
    v.credentials_file = key_file;
    v.models = {"gemini-*"};
    return c;
}

response post_chat(const running_gateway& gw, const std::string& model,
                   std::string_view headers = {}) {
    client c(gw.port());
    auto body = R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hi"}]})";
    return c.request(make_request("POST", "/v1/chat/completions", body,
                                  "Content-Type: application/json\r\n" + std::string(headers)));
}

std::string error_of(const response& r) {
    auto body = json::parse(r.body).as_object();
    return std::string(body.at("error").as_object().at("message").as_string());
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cloud_tokens)

// Concurrent first requests share one fetch; the client's own credentials never reach Vertex;
// a token that lives 4 s is replaced half way through its life, so no request carries an expired
// one.
BOOST_AUTO_TEST_CASE(one_fetch_serves_concurrent_requests_and_tokens_are_replaced_before_expiry) {
    test_service_account account;
    fake_google_oauth google(account, std::chrono::seconds(4));
    token_checking_vertex vertex(google);
    fake_upstream fake;
    running_gateway gw(with_vertex(fake, vertex.url(), key_file_at(account, google.token_uri())));

    std::atomic<unsigned> answered{0};
    std::vector<std::thread> callers;
    for (int i = 0; i < 8; ++i)
        callers.emplace_back([&] {
            auto r = post_chat(gw, "gemini-2.5-flash",
                               "Authorization: Bearer sk-client\r\nx-goog-api-key: client-key\r\n");
            if (r.status == 200u) ++answered;
        });
    for (auto& t : callers) t.join();
    BOOST_TEST(answered.load() == 8u);
    BOOST_TEST(google.issued() == 1u);
    for (const auto& r : vertex.seen()) {
        BOOST_TEST(r.field("x-goog-api-key") == "");
        BOOST_TEST(r.field("authorization") != "Bearer sk-client");
    }

    auto until = std::chrono::steady_clock::now() + 6s;
    while (google.issued() < 2u && std::chrono::steady_clock::now() < until) {
        auto r = post_chat(gw, "gemini-2.5-flash");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        std::this_thread::sleep_for(50ms);
    }
    BOOST_TEST(google.issued() == 2u);
    BOOST_TEST(vertex.refused() == 0u);
}

// An assertion Google refuses is the client's 502 with Google's words; Vertex hears nothing, and
// the gateway goes on serving the other upstream.
BOOST_AUTO_TEST_CASE(a_refused_assertion_is_a_502_that_says_why) {
    test_service_account account, other;
    fake_google_oauth google(other);  // knows another account's key only
    token_checking_vertex vertex(google);
    fake_upstream fake;
    running_gateway gw(with_vertex(fake, vertex.url(), key_file_at(account, google.token_uri())));
    auto r = post_chat(gw, "gemini-2.5-flash");
    BOOST_TEST_REQUIRE(r.status == 502u, r.body);
    BOOST_TEST(has(error_of(r),
                   "no Google access token for upstream `vertex` from service "
                   "account " +
                       account.client_email),
               error_of(r));
    BOOST_TEST(has(error_of(r), "invalid_grant): Invalid JWT Signature."), error_of(r));
    BOOST_TEST(vertex.posted() == 0u);
    BOOST_TEST(post_chat(gw, "gpt-4o").status == 200u);
}

// A token endpoint nobody listens at is a prompt 502 that says so; the gateway goes on serving.
BOOST_AUTO_TEST_CASE(an_unreachable_token_endpoint_is_a_502_within_the_timeout) {
    test_service_account account;
    fake_google_oauth google(account);
    token_checking_vertex vertex(google);
    fake_upstream fake;
    auto nowhere = "http://127.0.0.1:" + std::to_string(unused_port()) + "/token";
    running_gateway gw(with_vertex(fake, vertex.url(), key_file_at(account, nowhere)));
    auto began = std::chrono::steady_clock::now();
    auto r = post_chat(gw, "gemini-2.5-flash");
    BOOST_TEST_REQUIRE(r.status == 502u, r.body);
    BOOST_TEST((std::chrono::steady_clock::now() - began < 5s));
    BOOST_TEST(has(error_of(r), "Google's token endpoint at " + nowhere + " did not answer"),
               error_of(r));
    BOOST_TEST(vertex.posted() == 0u);
    BOOST_TEST(post_chat(gw, "gpt-4o").status == 200u);
    // Asked again: answered at once (the failure is remembered for a moment), never hung.
    began = std::chrono::steady_clock::now();
    auto again = post_chat(gw, "gemini-2.5-flash");
    BOOST_TEST(again.status >= 500u, again.body);
    BOOST_TEST((std::chrono::steady_clock::now() - began < 5s));
}

// Once the token's refresh is due, requests go on with the token in hand while the refresh
// waits on a token endpoint that hangs (10 s to its timeout): none waits for it.
BOOST_AUTO_TEST_CASE(a_hanging_refresh_delays_no_request_while_the_token_serves) {
    test_service_account account;
    fake_google_oauth google(account, std::chrono::seconds(6));
    token_checking_vertex vertex(google);
    fake_upstream fake;
    running_gateway gw(with_vertex(fake, vertex.url(), key_file_at(account, google.token_uri())));
    BOOST_TEST_REQUIRE(post_chat(gw, "gemini-2.5-flash").status == 200u);
    google.stall();
    auto at_once = [&] {
        auto began = std::chrono::steady_clock::now();
        auto r = post_chat(gw, "gemini-2.5-flash");
        BOOST_TEST(r.status == 200u, r.body);
        BOOST_TEST((std::chrono::steady_clock::now() - began < 2s));
    };
    // Due half way through its life (3 s): asked until the refresh has reached the endpoint.
    auto until = std::chrono::steady_clock::now() + 5s;
    while (google.service().count() < 2u && std::chrono::steady_clock::now() < until) {
        at_once();
        std::this_thread::sleep_for(50ms);
    }
    BOOST_TEST_REQUIRE(google.service().count() == 2u);
    for (int i = 0; i < 3; ++i) at_once();
    BOOST_TEST(vertex.refused() == 0u);
}

// A token Vertex refuses (revoked before it expired) is answered 401 once; the gateway drops
// it, and the next request carries a new one and is answered.
BOOST_AUTO_TEST_CASE(a_revoked_token_is_replaced_for_the_next_request) {
    test_service_account account;
    fake_google_oauth google(account);
    token_checking_vertex vertex(google);
    fake_upstream fake;
    running_gateway gw(with_vertex(fake, vertex.url(), key_file_at(account, google.token_uri())));
    BOOST_TEST_REQUIRE(post_chat(gw, "gemini-2.5-flash").status == 200u);
    auto token = vertex.seen().back().field("authorization").substr(7);
    google.revoke(token);
    auto refused = post_chat(gw, "gemini-2.5-flash");
    BOOST_TEST(refused.status != 200u, refused.body);
    BOOST_TEST(vertex.refused() == 1u);
    auto r = post_chat(gw, "gemini-2.5-flash");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(google.issued() == 2u);
    BOOST_TEST(vertex.seen().back().field("authorization") != "Bearer " + token);
    BOOST_TEST(vertex.refused() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_cloud_tokens_test
