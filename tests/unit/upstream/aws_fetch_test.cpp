#include "gateway/upstream/aws_fetch.hpp"

#include "tests/support/fake_aws.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

namespace upstream_aws_fetch_test {

using namespace gateway::upstream;
using gateway::testing::aws_reply;
using gateway::testing::aws_request;
using gateway::testing::fake_aws_service;
namespace config = gateway::config;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

template <class Awaitable>
auto run(Awaitable work) {
    net::io_context io;
    auto done = net::co_spawn(io, std::move(work), net::use_future);
    io.run();
    return done.get();
}

// An instance metadata service as EC2 runs it for an instance with role `bedrock-role`: a
// session token from PUT /latest/api/token, then the role and its credentials for that token
// only.
aws_reply metadata_service(const aws_request& r) {
    const std::string token = "AQAEAEXAMPLEtoken==";
    if (r.method == "PUT" && r.target == "/latest/api/token") {
        if (r.field("x-aws-ec2-metadata-token-ttl-seconds").empty()) return {400, "", "text/plain"};
        return {200, token, "text/plain"};
    }
    if (r.field("x-aws-ec2-metadata-token") != token) return {401, "", "text/plain"};
    if (r.method == "GET" && r.target == "/latest/meta-data/iam/security-credentials/")
        return {200, "bedrock-role", "text/plain"};
    if (r.method == "GET" && r.target == "/latest/meta-data/iam/security-credentials/bedrock-role")
        return {200,
                R"({"Code":"Success","LastUpdated":"2025-01-02T03:00:00Z","Type":"AWS-HMAC",)"
                R"("AccessKeyId":"ASIAIMDS","SecretAccessKey":"imds-secret","Token":"imds-token",)"
                R"("Expiration":"2030-01-02T09:00:00Z"})",
                "text/plain"};
    return {404, "", "text/plain"};
}

aws::source metadata_at(const std::string& url) {
    aws::source s;
    s.from = aws::source::kind::instance_metadata;
    s.metadata_url = url;
    return s;
}

struct token_file {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() /
        ("contextgate-token-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    explicit token_file(const std::string& text) { std::ofstream(path) << text; }
    ~token_file() { std::filesystem::remove(path); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_aws_fetch)

BOOST_AUTO_TEST_CASE(an_sts_answer_gives_its_credentials_and_expiration) {
    auto got =
        aws::read_sts_answer(200, gateway::testing::sts_credentials_xml(
                                      "ASIAKEY", "se/cr+et", "to&amp;ken", "2030-01-02T03:04:05Z"));
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.value->access_key_id == "ASIAKEY");
    BOOST_TEST(got.value->secret_access_key == "se/cr+et");
    BOOST_TEST(got.value->session_token == "to&ken");  // entities decoded
    BOOST_TEST_REQUIRE(got.value->expiration.has_value());
    BOOST_TEST(
        std::chrono::duration_cast<std::chrono::seconds>(got.value->expiration->time_since_epoch())
            .count() == 1893553445);
}

BOOST_AUTO_TEST_CASE(an_sts_refusal_says_its_code_and_message) {
    auto refused = aws::read_sts_answer(
        400, gateway::testing::sts_error_xml("InvalidIdentityToken", "Token is expired"));
    BOOST_TEST(!refused);
    BOOST_TEST(refused.error ==
               "STS refused AssumeRoleWithWebIdentity (400 InvalidIdentityToken): Token is "
               "expired");
    auto plain = aws::read_sts_answer(503, "Service Unavailable\r\n");
    BOOST_TEST(plain.error == "STS refused AssumeRoleWithWebIdentity (503): Service Unavailable");
    auto missing =
        aws::read_sts_answer(200, "<X><Credentials><AccessKeyId>A</AccessKeyId></Credentials></X>");
    BOOST_TEST(missing.error == "STS's answer has no Credentials/SecretAccessKey");
    BOOST_TEST(aws::read_sts_answer(200, "{}").error ==
               "STS's answer to AssumeRoleWithWebIdentity has no Credentials");
    auto bad_time =
        aws::read_sts_answer(200, gateway::testing::sts_credentials_xml("A", "S", "T", "tomorrow"));
    BOOST_TEST(has(bad_time.error, "Expiration that is no time: `tomorrow`"));
}

BOOST_AUTO_TEST_CASE(metadata_credentials_are_read_from_their_json) {
    auto got = aws::read_metadata_credentials(
        R"({"Code":"Success","AccessKeyId":"A","SecretAccessKey":"S","Token":"T",)"
        R"("Expiration":"2030-01-02T03:04:05Z"})");
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.value->session_token == "T");
    BOOST_TEST(aws::read_metadata_credentials("not json").error ==
               "the instance metadata service's credentials are not a JSON object");
    BOOST_TEST(aws::read_metadata_credentials(R"({"Code":"AssumeRoleUnauthorizedAccess",)"
                                              R"("Message":"no trust"})")
                   .error ==
               "the instance metadata service answered Code `AssumeRoleUnauthorizedAccess`: no "
               "trust");
    BOOST_TEST(
        aws::read_metadata_credentials(R"({"AccessKeyId":"A","SecretAccessKey":"S"})").error ==
        "the instance metadata service's credentials have no Token");
    BOOST_TEST(
        aws::read_metadata_credentials(R"({"AccessKeyId":"A","SecretAccessKey":"S","Token":"T"})")
            .error == "the instance metadata service's credentials have no Expiration");
}

// IMDSv2: a session token first, then the role's name and its credentials, each with the token.
BOOST_AUTO_TEST_CASE(imdsv2_asks_a_token_then_the_role_then_its_credentials) {
    fake_aws_service imds(metadata_service);
    auto got = run(aws::instance_metadata_credentials(metadata_at(imds.url()), 5s, {}));
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.value->access_key_id == "ASIAIMDS");
    BOOST_TEST(got.value->session_token == "imds-token");
    auto seen = imds.requests();
    BOOST_TEST_REQUIRE(seen.size() == 3u);
    BOOST_TEST(seen[0].method == "PUT");
    BOOST_TEST(seen[0].field("x-aws-ec2-metadata-token-ttl-seconds") == "21600");
    BOOST_TEST(seen[1].target == "/latest/meta-data/iam/security-credentials/");
    BOOST_TEST(seen[2].target == "/latest/meta-data/iam/security-credentials/bedrock-role");
}

BOOST_AUTO_TEST_CASE(an_instance_without_a_role_says_so) {
    fake_aws_service imds([](const aws_request& r) -> aws_reply {
        if (r.method == "PUT") return {200, "t", "text/plain"};
        return {404, "", "text/plain"};
    });
    auto got = run(aws::instance_metadata_credentials(metadata_at(imds.url()), 5s, {}));
    BOOST_TEST(got.error == "the instance metadata service at " + imds.url() +
                                " says this instance has no IAM role");
}

// A service that takes the request and never answers costs the timeout, not a hung request.
BOOST_AUTO_TEST_CASE(a_stalled_service_times_out) {
    fake_aws_service imds([](const aws_request&) { return aws_reply{.stall = true}; });
    auto began = std::chrono::steady_clock::now();
    auto got = run(aws::instance_metadata_credentials(metadata_at(imds.url()), 200ms, {}));
    auto took = std::chrono::steady_clock::now() - began;
    BOOST_TEST(!got);
    BOOST_TEST(has(got.error, "did not answer: waiting for the response timed out"), got.error);
    BOOST_TEST((took >= 200ms && took < 5s));
}

BOOST_AUTO_TEST_CASE(a_closed_port_is_named) {
    std::string url;
    {
        fake_aws_service gone([](const aws_request&) { return aws_reply{}; });
        url = gone.url();
    }
    auto got = run(aws::instance_metadata_credentials(metadata_at(url), 2s, {}));
    BOOST_TEST(has(got.error, "the instance metadata service at " + url +
                                  " did not answer: cannot connect to upstream 127.0.0.1"),
               got.error);
}

// AssumeRoleWithWebIdentity is an unsigned form POST with the token file's text.
BOOST_AUTO_TEST_CASE(web_identity_posts_the_token_files_text_to_sts) {
    fake_aws_service sts([](const aws_request&) {
        return aws_reply{200, gateway::testing::sts_credentials_xml("ASIA1", "s1", "t1",
                                                                    "2030-01-02T03:04:05Z")};
    });
    token_file token("eyJhbGciOiJSUzI1NiJ9.payload.sig\n");
    aws::source from;
    from.from = aws::source::kind::web_identity;
    from.token_file = token.path.string();
    from.role_arn = "arn:aws:iam::123456789012:role/bedrock";
    from.session_name = "contextgate-test";
    from.sts_url = sts.url();
    auto got = run(aws::assume_role_with_web_identity(from, 5s, {}));
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.value->access_key_id == "ASIA1");
    auto seen = sts.requests();
    BOOST_TEST_REQUIRE(seen.size() == 1u);
    BOOST_TEST(seen[0].method == "POST");
    BOOST_TEST(seen[0].target == "/");
    BOOST_TEST(seen[0].field("authorization").empty());
    BOOST_TEST(has(seen[0].field("content-type"), "application/x-www-form-urlencoded"));
    auto form = seen[0].form();
    BOOST_TEST(form["Action"] == "AssumeRoleWithWebIdentity");
    BOOST_TEST(form["Version"] == "2011-06-15");
    BOOST_TEST(form["RoleArn"] == "arn:aws:iam::123456789012:role/bedrock");
    BOOST_TEST(form["RoleSessionName"] == "contextgate-test");
    BOOST_TEST(form["WebIdentityToken"] == "eyJhbGciOiJSUzI1NiJ9.payload.sig");
}

BOOST_AUTO_TEST_CASE(a_missing_token_file_is_named) {
    aws::source from;
    from.from = aws::source::kind::web_identity;
    from.token_file = "/nonexistent/contextgate/token";
    from.sts_url = "http://127.0.0.1:9";
    auto got = run(aws::assume_role_with_web_identity(from, 1s, {}));
    BOOST_TEST(got.error ==
               "cannot read the web identity token file `/nonexistent/contextgate/token`");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_aws_fetch_test
