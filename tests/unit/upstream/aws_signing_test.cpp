#include "gateway/upstream/aws_signing.hpp"

#include "gateway/config/config.hpp"
#include "gateway/upstream/aws_credentials.hpp"
#include "gateway/upstream/sigv4.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <string>

namespace upstream_aws_signing_test {

using namespace gateway;
using namespace gateway::upstream;

namespace {

config::upstream_config bedrock() {
    config::upstream_config up;
    up.name = "bedrock";
    up.provider = config::provider_kind::bedrock;
    up.region = "us-west-2";
    up.endpoint.tls = true;
    up.endpoint.host = "bedrock-runtime.us-west-2.amazonaws.com";
    up.endpoint.port = 443;
    up.endpoint.base_path = "/runtime";
    return up;
}

aws::authorization authorize_now(const config::upstream_config& up,
                                 aws::credentials_provider& provider, std::string_view target,
                                 std::string_view body) {
    boost::asio::io_context io;
    auto done = boost::asio::co_spawn(io, aws::authorize(up, provider, target, body),
                                      boost::asio::use_future);
    io.run();
    return done.get();
}

// The value of the field `name` in "Name: value\r\n" lines ("" when there is none).
std::string field(const std::string& fields, const std::string& name) {
    auto at = fields.find(name + ": ");
    if (at == std::string::npos) return {};
    at += name.size() + 2;
    return fields.substr(at, fields.find("\r\n", at) - at);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_aws_signing)

// The signature covers the request as json_post_head sends it: POST, the base path and the
// target, the Host field (no port on 443), the JSON content type and the body's hash, in the
// upstream's region for Bedrock; with temporary keys, their session token goes along.
BOOST_AUTO_TEST_CASE(keys_sign_the_request_as_it_is_sent) {
    aws::source from;
    from.from = aws::source::kind::keys;
    from.origin = "test";
    from.keys = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-1", {}};
    aws::settings s;
    s.upstream = "bedrock";
    s.region = "us-west-2";
    aws::credentials_provider provider(from, s);
    auto up = bedrock();
    std::string target = "/model/anthropic.claude-v2%3A1/converse";
    std::string body = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
    auto got = authorize_now(up, provider, target, body);
    BOOST_TEST_REQUIRE(got.error.empty(), got.error);

    // Signed again at the date it carries, from the request as the wire has it.
    auto date = field(got.fields, "X-Amz-Date");
    BOOST_TEST_REQUIRE(date.size() == 16u, got.fields);
    auto iso = date.substr(0, 4) + "-" + date.substr(4, 2) + "-" + date.substr(6, 2) + "T" +
               date.substr(9, 2) + ":" + date.substr(11, 2) + ":" + date.substr(13, 2) + "Z";
    auto ms = config::parse_time(iso);
    BOOST_TEST_REQUIRE(ms.has_value(), iso);
    std::string path = "/runtime" + target;
    auto hash = aws::payload_hash(body);
    aws::request r;
    r.method = "POST";
    r.path = path;
    r.headers = {{"host", "bedrock-runtime.us-west-2.amazonaws.com"},
                 {"content-type", "application/json"}};
    r.payload_sha256 = hash;
    auto expected =
        aws::sign(r, from.keys, "bedrock", "us-west-2",
                  std::chrono::system_clock::time_point(std::chrono::milliseconds(*ms)));
    BOOST_TEST(got.fields == expected.fields());
    BOOST_TEST(field(got.fields, "Authorization")
                   .starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/" + date.substr(0, 8) +
                                "/us-west-2/bedrock/aws4_request, "),
               got.fields);
    BOOST_TEST(field(got.fields, "X-Amz-Security-Token") == "session-1");
    // Another body is another signature.
    auto other = authorize_now(up, provider, target, "{}");
    BOOST_TEST(field(other.fields, "Authorization") != field(got.fields, "Authorization"));
}

// A Bedrock API key is sent as it is: no signature, no date.
BOOST_AUTO_TEST_CASE(a_bedrock_api_key_is_a_bearer_token) {
    aws::source from;
    from.from = aws::source::kind::bearer_token;
    from.bearer_token = "bedrock-api-key-1";
    aws::settings s;
    s.upstream = "bedrock";
    aws::credentials_provider provider(from, s);
    auto got = authorize_now(bedrock(), provider, "/model/m/converse", "{}");
    BOOST_TEST(got.error.empty());
    BOOST_TEST(got.fields == "Authorization: Bearer bedrock-api-key-1\r\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_aws_signing_test
