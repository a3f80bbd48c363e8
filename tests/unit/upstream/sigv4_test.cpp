#include "gateway/upstream/sigv4.hpp"

#include "gateway/config/config.hpp"

#include <boost/json.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

namespace upstream_sigv4_test {

using namespace gateway::upstream;
namespace json = boost::json;

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    BOOST_TEST_REQUIRE(in.good(), "cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::chrono::system_clock::time_point at(std::string_view iso) {
    auto ms = gateway::config::parse_time(iso);
    BOOST_TEST_REQUIRE(ms.has_value());
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(*ms));
}

// One vector of AWS's SigV4 test suite: request.txt (the request line, fields with their folded
// continuation lines, a blank line and the body), context.json and the expected canonical
// request, string to sign and signature of the "header" variant.
struct suite_case {
    std::string method, path, query, body;
    std::vector<std::pair<std::string, std::string>> fields;
    aws::credentials keys;
    bool sign_body = false;
    std::chrono::system_clock::time_point when;
    std::string canonical_request, string_to_sign, signature;
};

suite_case load(const std::string& name) {
    std::string dir = std::string(CONTEXTGATE_TEST_DATA) + "/aws-sig-v4/" + name + "/";
    suite_case c;
    std::string text = read(dir + "request.txt");
    auto line_end = text.find('\n');
    std::string line = text.substr(0, line_end);
    c.method = line.substr(0, line.find(' '));
    // The target may hold a space (get-space): it runs up to " HTTP/1.1".
    std::string target =
        line.substr(c.method.size() + 1, line.rfind(" HTTP/") - c.method.size() - 1);
    auto question = target.find('?');
    c.path = target.substr(0, question);
    if (question != std::string::npos) c.query = target.substr(question + 1);
    std::size_t at_line = line_end + 1;
    while (at_line < text.size()) {
        auto end = std::min(text.find('\n', at_line), text.size());
        std::string field = text.substr(at_line, end - at_line);
        at_line = end + 1;
        if (field.empty()) {
            c.body = at_line < text.size() ? text.substr(at_line) : "";
            break;
        }
        if (field[0] == ' ' || field[0] == '\t') {
            c.fields.back().second += "\n" + field;  // a folded line continues the value
        } else {
            auto colon = field.find(':');
            c.fields.emplace_back(field.substr(0, colon), field.substr(colon + 1));
        }
    }
    auto context = json::parse(read(dir + "context.json")).as_object();
    const auto& keys = context.at("credentials").as_object();
    c.keys.access_key_id = keys.at("access_key_id").as_string();
    c.keys.secret_access_key = keys.at("secret_access_key").as_string();
    if (auto token = keys.if_contains("token")) c.keys.session_token = token->as_string();
    c.sign_body = context.at("sign_body").as_bool();
    c.when = at(std::string(context.at("timestamp").as_string()));
    c.canonical_request = read(dir + "header-canonical-request.txt");
    c.string_to_sign = read(dir + "header-string-to-sign.txt");
    c.signature = read(dir + "header-signature.txt");
    return c;
}

// The vectors of AWS's SigV4 test suite for service "service" as awslabs/aws-c-auth keeps it
// (tests/aws-signing-test-suite/v4/, commit 495329c2433034bd8fd53fc6ba9e0202d3fac876), copied
// unchanged into tests/data/aws-sig-v4/. Left out: the *-unnormalized variants (S3's rules: the
// path neither normalized nor encoded again) and post-sts-header-after (a token added after
// signing). The suite's request lines hold the path as sent, which has no '%' in any of them, so
// the non-S3 rule (the wire path encoded again) gives the suite's canonical URIs; get-space and
// get-utf8 send a raw space and raw UTF-8, which that one encoding turns into %20 and %E1%88%B4.
const char* const suite[] = {
    "get-header-key-duplicate",
    "get-header-value-multiline",
    "get-header-value-order",
    "get-header-value-trim",
    "get-relative-normalized",
    "get-relative-relative-normalized",
    "get-slash-dot-slash-normalized",
    "get-slash-normalized",
    "get-slash-pointless-dot-normalized",
    "get-slashes-normalized",
    "get-space-normalized",
    "get-unreserved",
    "get-utf8",
    "get-vanilla",
    "get-vanilla-empty-query-key",
    "get-vanilla-query",
    "get-vanilla-query-order-encoded",
    "get-vanilla-query-order-key-case",
    "get-vanilla-query-unreserved",
    "get-vanilla-utf8-query",
    "get-vanilla-with-session-token",
    "post-header-key-case",
    "post-header-key-sort",
    "post-header-value-case",
    "post-sts-header-before",
    "post-vanilla",
    "post-vanilla-empty-query-value",
    "post-vanilla-query",
    "post-x-www-form-urlencoded",
    "post-x-www-form-urlencoded-parameters",
};

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_sigv4)

BOOST_DATA_TEST_CASE(aws_test_suite_vectors_sign_as_published, boost::unit_test::data::make(suite),
                     name) {
    auto c = load(name);
    std::string hash = aws::payload_hash(c.body);
    aws::request r{c.method, c.path, c.query, {}, hash};
    for (const auto& [field, value] : c.fields) r.headers.emplace_back(field, value);
    // The suite's signer adds x-amz-content-sha256 when it signs the body; ours leaves that
    // field to the caller.
    if (c.sign_body) r.headers.emplace_back("X-Amz-Content-Sha256", hash);
    auto s = aws::sign(r, c.keys, "service", "us-east-1", c.when);
    BOOST_TEST(s.canonical_request == c.canonical_request);
    BOOST_TEST(s.string_to_sign == c.string_to_sign);
    BOOST_TEST(s.signature == c.signature);
    BOOST_TEST(s.amz_date == "20150830T123600Z");
    BOOST_TEST(s.security_token == c.keys.session_token);
}

BOOST_AUTO_TEST_CASE(the_fields_carry_the_signature_and_the_token) {
    std::string hash = aws::payload_hash("");
    aws::request r{"GET", "/", "", {{"Host", "example.amazonaws.com"}}, hash};
    aws::credentials keys{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", {}};
    auto when = at("2015-08-30T12:36:00Z");
    // get-vanilla's Authorization field as the suite's header-signed-request.txt gives it.
    BOOST_TEST(aws::sign(r, keys, "service", "us-east-1", when).fields() ==
               "Authorization: AWS4-HMAC-SHA256 "
               "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
               "SignedHeaders=host;x-amz-date, "
               "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31\r\n"
               "X-Amz-Date: 20150830T123600Z\r\n");
    keys.session_token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
    auto with_token = aws::sign(r, keys, "service", "us-east-1", when).fields();
    BOOST_TEST(with_token.ends_with("X-Amz-Security-Token: " + keys.session_token + "\r\n"));
    BOOST_TEST(with_token.find("SignedHeaders=host;x-amz-date;x-amz-security-token") !=
               std::string::npos);
}

// A model id's ':' and an ARN's '/' go on the wire encoded once, and are signed encoded twice.
BOOST_AUTO_TEST_CASE(a_model_id_is_encoded_once_on_the_wire_and_twice_when_signed) {
    BOOST_TEST(aws::uri_encode("anthropic.claude-3-5-sonnet-20240620-v1:0") ==
               "anthropic.claude-3-5-sonnet-20240620-v1%3A0");
    BOOST_TEST(aws::uri_encode("arn:aws:bedrock:us-east-1:1:inference-profile/us.x") ==
               "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x");
    BOOST_TEST(aws::uri_encode("a b+c%~_-.") == "a%20b%2Bc%25~_-.");
    BOOST_TEST(aws::uri_encode("\xE1\x88\xB4") == "%E1%88%B4");
    BOOST_TEST(aws::canonical_uri("/model/anthropic.claude-v2%3A1/invoke") ==
               "/model/anthropic.claude-v2%253A1/invoke");
    BOOST_TEST(aws::canonical_uri("/model/arn%3Aaws%2Fx/converse") ==
               "/model/arn%253Aaws%252Fx/converse");
}

BOOST_AUTO_TEST_CASE(a_path_is_normalized_before_it_is_encoded_again) {
    BOOST_TEST(aws::canonical_uri("") == "/");
    BOOST_TEST(aws::canonical_uri("/") == "/");
    BOOST_TEST(aws::canonical_uri("//a//b//") == "/a/b/");
    BOOST_TEST(aws::canonical_uri("/a/./b/../c") == "/a/c");
    BOOST_TEST(aws::canonical_uri("/../..") == "/");
    // A dot segment spelled with its escape is a name, not a dot segment.
    BOOST_TEST(aws::canonical_uri("/a/%2E%2E") == "/a/%252E%252E");
}

BOOST_AUTO_TEST_CASE(a_query_is_sorted_by_name_then_value_each_encoded_once) {
    BOOST_TEST(aws::canonical_query("") == "");
    BOOST_TEST(aws::canonical_query("b=2&a=3&a=1") == "a=1&a=3&b=2");
    BOOST_TEST(aws::canonical_query("type=SYSTEM_DEFINED&maxResults=10") ==
               "maxResults=10&type=SYSTEM_DEFINED");
    // Encoded or raw, a value is signed in one form: '+' is a plus sign, not a space.
    BOOST_TEST(aws::canonical_query("k=a%20b&j=a+b&i=%7e") == "i=~&j=a%2Bb&k=a%20b");
    BOOST_TEST(aws::canonical_query("flag&&x=") == "flag=&x=");
    BOOST_TEST(aws::canonical_query("bad=%zz%4") == "bad=%25zz%254");
}

// Two Converse requests as botocore 1.43.11's own bedrock-runtime client signs them (a model id
// with ':' and an inference profile's ARN with ':' and '/'), with and without a session token.
// Made by this script (python3, botocore installed), its output pasted below:
//
//   import datetime, logging, io
//   from unittest import mock
//   import botocore.session
//   from botocore.awsrequest import AWSResponse
//   log = io.StringIO()
//   logging.getLogger("botocore.auth").addHandler(logging.StreamHandler(log))
//   logging.getLogger("botocore.auth").setLevel(logging.DEBUG)
//   fixed = datetime.datetime(2025, 1, 2, 3, 4, 5)
//   for token in ["", "FwoGZXIvYXdzEXAMPLEsessiontoken/+="]:
//       client = botocore.session.get_session().create_client("bedrock-runtime",
//           region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE",
//           aws_secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
//           aws_session_token=token or None)
//       def capture(request, **kwargs):
//           print(request.url, dict(request.headers), request.body)
//           r = AWSResponse(request.url, 200, {}, None)
//           r._content = b'{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},'
//               b'"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,'
//               b'"totalTokens":2},"metrics":{"latencyMs":1}}'
//           return r
//       client.meta.events.register("before-send", capture)
//       for model in ["anthropic.claude-3-5-sonnet-20240620-v1:0",
//                     "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
//                     "us.anthropic.claude-3-5-sonnet-20240620-v1:0"]:
//           with mock.patch("botocore.auth.get_current_datetime", return_value=fixed):
//               client.converse(modelId=model,
//                               messages=[{"role": "user", "content": [{"text": "Hello"}]}])
//           print(log.getvalue()); log.seek(0); log.truncate()
namespace {

struct botocore_case {
    const char* model;
    const char* wire_path;
    const char* canonical_uri;
    const char* token;
    const char* signature;
};

const botocore_case botocore_cases[] = {
    {"anthropic.claude-3-5-sonnet-20240620-v1:0",
     "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
     "/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse", "",
     "0155bf5c2a9eba8084216cb5e25090ccfeca2dea56acf9418492d85e2b6a5889"},
    {"arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
     "us.anthropic.claude-3-5-sonnet-20240620-v1:0",
     "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F"
     "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
     "/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A123456789012%253Ainference-profile%252F"
     "us.anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse",
     "", "6f19b1c5a2725ccb05fbcccf61011411527bd4849c82c1933b4da25fbb538b83"},
    {"anthropic.claude-3-5-sonnet-20240620-v1:0",
     "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
     "/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse",
     "FwoGZXIvYXdzEXAMPLEsessiontoken/+=",
     "a47bce267dd29c71f99777b1e2fd5e9d3fcd168a3c1e7f8e841b840af08e041a"},
    {"arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
     "us.anthropic.claude-3-5-sonnet-20240620-v1:0",
     "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F"
     "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
     "/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A123456789012%253Ainference-profile%252F"
     "us.anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse",
     "FwoGZXIvYXdzEXAMPLEsessiontoken/+=",
     "e761555cfd8548e68d888f28b538e96303fb62cdf35b5dc1b75f5f92fab89319"},
};

}  // namespace

BOOST_AUTO_TEST_CASE(bedrock_requests_sign_as_botocore_signs_them) {
    const std::string body = R"({"messages": [{"role": "user", "content": [{"text": "Hello"}]}]})";
    BOOST_TEST(aws::payload_hash(body) ==
               "060269ada81b65767b604bf5630d3df78f334101c1ed3654a8e837fdcb85b440");
    for (const auto& b : botocore_cases) {
        BOOST_TEST_CONTEXT(b.model << (*b.token ? " with a session token" : "")) {
            std::string path = "/model/" + aws::uri_encode(b.model) + "/converse";
            BOOST_TEST(path == b.wire_path);
            std::string hash = aws::payload_hash(body);
            aws::request r{"POST",
                           path,
                           "",
                           {{"Content-Type", "application/json"},
                            {"Host", "bedrock-runtime.us-east-1.amazonaws.com"}},
                           hash};
            aws::credentials keys{
                "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", b.token, {}};
            auto s = aws::sign(r, keys, "bedrock", "us-east-1", at("2025-01-02T03:04:05Z"));
            BOOST_TEST(s.canonical_request.substr(0, s.canonical_request.find('\n', 5)) ==
                       std::string("POST\n") + b.canonical_uri);
            BOOST_TEST(s.signature == b.signature);
            BOOST_TEST(s.authorization.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250102/us-east-1/bedrock/aws4_request, "
                "SignedHeaders=content-type;host;x-amz-date"));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_sigv4_test
