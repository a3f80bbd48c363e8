#include "gateway/upstream/google_credentials.hpp"

#include "gateway/upstream/token_sources.hpp"
#include "tests/support/fake_google.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <thread>

#include <unistd.h>

namespace upstream_google_credentials_test {

using namespace gateway::upstream;
using gateway::testing::aws_reply;
using gateway::testing::fake_aws_service;
using gateway::testing::fake_entra;
using gateway::testing::fake_google_oauth;
using gateway::testing::fake_metadata_server;
using gateway::testing::test_service_account;
namespace config = gateway::config;
namespace json = boost::json;
namespace net = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

environment env_of(std::map<std::string, std::string> variables) {
    return
        [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
            auto it = variables.find(name);
            if (it == variables.end()) return std::nullopt;
            return it->second;
        };
}

// The test account, made once: generating an RSA key takes a moment.
const test_service_account& account() {
    static const test_service_account made;
    return made;
}

// A file of its own in the temporary directory, removed with it.
struct temp_file {
    fs::path path;
    explicit temp_file(const std::string& text) {
        static int n = 0;
        path = fs::temp_directory_path() / ("contextgate-google-" + std::to_string(::getpid()) +
                                            "-" + std::to_string(++n) + ".json");
        std::ofstream(path) << text;
    }
    ~temp_file() { fs::remove(path); }
};

std::string decode(std::string_view part) {
    std::string padded(part);
    for (char& c : padded) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (padded.size() % 4) padded += '=';
    std::string out(padded.size(), '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(padded.data()),
                            static_cast<int>(padded.size()));
    BOOST_TEST_REQUIRE(n >= 0);
    out.resize(static_cast<std::size_t>(n) - (padded.size() - part.size()));
    return out;
}

google::key_file parsed_key(const std::string& token_uri = "https://oauth2.googleapis.com/token") {
    auto key = google::parse_key_file(account().key_file(token_uri), "sa.json");
    BOOST_TEST_REQUIRE(bool(key), key.error);
    return *key.value;
}

access_token ask(token_source& source) {
    net::io_context io;
    auto done = net::co_spawn(io, source.current(), net::use_future);
    io.run_for(30s);  // every step of a fetch is bounded well below
    BOOST_TEST_REQUIRE((done.wait_for(0s) == std::future_status::ready), "no answer in 30 s");
    return done.get();
}

config::upstream_config vertex(const std::string& credentials_file = {}) {
    config::upstream_config up;
    up.name = "vertex";
    up.host = config::hosting::vertex;
    up.provider = config::provider_kind::gemini;
    up.credentials_file = credentials_file;
    return up;
}

token_timing quick() {
    token_timing t;
    t.token_endpoint_timeout = 2s;
    t.metadata_timeout = 2s;
    t.retry_after_failure = 0ms;
    return t;
}

std::shared_ptr<token_source> source_of(const config::upstream_config& up,
                                        const environment& env = env_of({}),
                                        token_timing timing = quick()) {
    auto made = make_token_source(up, env, timing);
    BOOST_TEST_REQUIRE(bool(made), made.error);
    BOOST_TEST_REQUIRE(bool(*made.value));
    return *made.value;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_google_credentials)

// The assertion is a JWT Google would take: RS256 over header.claims, signed with the account's
// key (verified here with its public key), the kid, iss, scope, aud, iat and exp an hour later.
BOOST_AUTO_TEST_CASE(the_assertion_is_a_signed_jwt_of_the_account) {
    auto key = parsed_key();
    auto now = std::chrono::system_clock::now();
    auto jwt = google::service_account_assertion(key, now);
    BOOST_TEST_REQUIRE(bool(jwt), jwt.error);
    const auto& text = *jwt.value;
    auto first = text.find('.');
    auto second = text.find('.', first + 1);
    BOOST_TEST_REQUIRE(second != std::string::npos);
    BOOST_TEST(text.find('=') == std::string::npos);  // base64url, unpadded

    auto header = json::parse(decode(std::string_view(text).substr(0, first))).as_object();
    BOOST_TEST(header.at("alg").as_string() == "RS256");
    BOOST_TEST(header.at("typ").as_string() == "JWT");
    BOOST_TEST(header.at("kid").as_string() == account().private_key_id);
    auto claims = json::parse(decode(std::string_view(text).substr(first + 1, second - first - 1)))
                      .as_object();
    BOOST_TEST(claims.at("iss").as_string() == account().client_email);
    BOOST_TEST(claims.at("scope").as_string() == "https://www.googleapis.com/auth/cloud-platform");
    BOOST_TEST(claims.at("aud").as_string() == "https://oauth2.googleapis.com/token");
    auto iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    BOOST_TEST(claims.at("iat").as_int64() == iat);
    BOOST_TEST(claims.at("exp").as_int64() == iat + 3600);

    auto signature = decode(std::string_view(text).substr(second + 1));
    BOOST_TEST(signature.size() == 256u);  // RSA 2048
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(account().public_key_pem.data(),
                        static_cast<int>(account().public_key_pem.size())),
        &BIO_free);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> public_key(
        PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
    auto verify = [&](std::string_view signed_part) {
        return EVP_DigestVerifyInit(context.get(), nullptr, EVP_sha256(), nullptr,
                                    public_key.get()) == 1 &&
               EVP_DigestVerify(
                   context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                   signature.size(), reinterpret_cast<const unsigned char*>(signed_part.data()),
                   signed_part.size()) == 1;
    };
    BOOST_TEST(verify(std::string_view(text).substr(0, second)));
    std::string tampered = text.substr(0, second);
    tampered[first + 2] = tampered[first + 2] == 'A' ? 'B' : 'A';
    BOOST_TEST(!verify(tampered));  // the check can fail
}

BOOST_AUTO_TEST_CASE(a_key_file_of_either_type_is_read) {
    auto key = parsed_key("https://oauth2.googleapis.com/token");
    BOOST_TEST((key.type == google::key_file::kind::service_account));
    BOOST_TEST(key.client_email == account().client_email);
    BOOST_TEST(key.private_key_id == "test-key-1");
    auto user = google::parse_key_file(
        R"({"type":"authorized_user","client_id":"c.apps.googleusercontent.com",)"
        R"("client_secret":"s","refresh_token":"1//r"})",
        "adc.json");
    BOOST_TEST_REQUIRE(bool(user), user.error);
    BOOST_TEST((user.value->type == google::key_file::kind::authorized_user));
    BOOST_TEST(user.value->token_uri == "https://oauth2.googleapis.com/token");
}

// A broken key file is refused with what is wrong in it.
BOOST_AUTO_TEST_CASE(a_broken_key_file_says_what_is_wrong) {
    auto error = [](const std::string& text) {
        auto key = google::parse_key_file(text, "sa.json");
        BOOST_TEST(!key);
        return key.error;
    };
    auto e = error("{not json");
    BOOST_TEST(has(e, "`sa.json` is not a JSON object"), e);
    e = error(R"({"type":"external_account"})");
    BOOST_TEST(has(e, "type `external_account`"), e);
    e = error(R"({"client_email":"a@b"})");
    BOOST_TEST(has(e, "no `type`"), e);
    auto full = json::parse(account().key_file("https://oauth2.googleapis.com/token")).as_object();
    for (const char* field : {"client_email", "private_key", "private_key_id", "token_uri"}) {
        auto missing = full;
        missing.erase(field);
        e = error(json::serialize(missing));
        BOOST_TEST(has(e, std::string("has no `") + field + "`"), e);
    }
    auto bad_key = full;
    bad_key["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    e = error(json::serialize(bad_key));
    BOOST_TEST(has(e, "private_key is no PEM RSA private key"), e);
    auto bad_uri = full;
    bad_uri["token_uri"] = "oauth2.googleapis.com/token";
    e = error(json::serialize(bad_uri));
    BOOST_TEST(has(e, "is no http(s) URL"), e);
    e = error(R"({"type":"authorized_user","client_id":"c","client_secret":"s"})");
    BOOST_TEST(has(e, "has no `refresh_token`"), e);
}

// The assertion or refresh token goes to token_uri: over https, or plain http to this machine
// only (a test's or an emulator's endpoint), for a service account and an authorized user alike.
BOOST_AUTO_TEST_CASE(a_token_uri_is_https_unless_it_is_on_this_machine) {
    auto user = [](const std::string& uri) {
        return json::serialize(json::object{{"type", "authorized_user"},
                                            {"client_id", "c"},
                                            {"client_secret", "s"},
                                            {"refresh_token", "r"},
                                            {"token_uri", uri}});
    };
    for (const char* uri : {"http://oauth2.googleapis.com/token", "http://10.0.0.7:8080/token",
                            "http://metadata.google.internal/token"}) {
        for (const auto& text : {account().key_file(uri), user(uri)}) {
            auto key = google::parse_key_file(text, "sa.json");
            BOOST_TEST(!key);
            BOOST_TEST(has(key.error, std::string("token_uri `") + uri +
                                          "` must be https:// (http:// only to a loopback "
                                          "address)"),
                       key.error);
        }
    }
    for (const char* uri : {"http://127.0.0.1:9/token", "http://localhost:9/token",
                            "http://[::1]:9/token", "https://oauth2.googleapis.com/token"}) {
        for (const auto& text : {account().key_file(uri), user(uri)}) {
            auto key = google::parse_key_file(text, "sa.json");
            BOOST_TEST(bool(key), uri << ": " << key.error);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_missing_key_file_is_refused_at_start) {
    auto made = make_token_source(vertex("/nonexistent/sa.json"), env_of({}), quick());
    BOOST_TEST(!made);
    BOOST_TEST(has(made.error,
                   "credentials_file: cannot read Google credentials file "
                   "`/nonexistent/sa.json`"),
               made.error);
    made = make_token_source(vertex(), env_of({{"GOOGLE_APPLICATION_CREDENTIALS", "/none.json"}}),
                             quick());
    BOOST_TEST(!made);
    BOOST_TEST(has(made.error, "GOOGLE_APPLICATION_CREDENTIALS: cannot read"), made.error);
}

// A service account's key file, named by the upstream or by GOOGLE_APPLICATION_CREDENTIALS,
// gets tokens from its token_uri, which checks the assertion; the token is kept while fresh.
BOOST_AUTO_TEST_CASE(a_service_account_gets_a_token_and_keeps_it) {
    fake_google_oauth google(account());
    temp_file key(account().key_file(google.token_uri()));
    auto source = source_of(vertex(key.path.string()));
    BOOST_TEST(has(source->origin(), "service account " + account().client_email),
               source->origin());
    auto token = ask(*source);
    BOOST_TEST_REQUIRE(bool(token), token.error);
    BOOST_TEST(google.check(token.token) == "");
    BOOST_TEST(ask(*source).token == token.token);
    BOOST_TEST(google.issued() == 1u);

    auto from_env =
        source_of(vertex(), env_of({{"GOOGLE_APPLICATION_CREDENTIALS", key.path.string()}}));
    BOOST_TEST(google.check(ask(*from_env).token) == "");
}

// An assertion Google refuses (here: signed by another key) is an error with Google's words.
BOOST_AUTO_TEST_CASE(a_refused_assertion_says_why) {
    test_service_account other;
    fake_google_oauth google(other);
    temp_file key(account().key_file(google.token_uri()));
    auto source = source_of(vertex(key.path.string()));
    auto token = ask(*source);
    BOOST_TEST(!token);
    BOOST_TEST(has(token.error,
                   "no Google access token for upstream `vertex` from service "
                   "account"),
               token.error);
    BOOST_TEST(has(token.error, "refused (400 invalid_grant): Invalid JWT Signature."),
               token.error);
}

BOOST_AUTO_TEST_CASE(an_authorized_user_exchanges_its_refresh_token) {
    fake_google_oauth google(account());
    google.accept_user("c.apps.googleusercontent.com", "secret", "1//refresh");
    json::object adc{{"type", "authorized_user"},
                     {"client_id", "c.apps.googleusercontent.com"},
                     {"client_secret", "secret"},
                     {"refresh_token", "1//refresh"},
                     {"token_uri", google.token_uri()}};
    temp_file key(json::serialize(adc));
    auto token = ask(*source_of(vertex(key.path.string())));
    BOOST_TEST_REQUIRE(bool(token), token.error);
    BOOST_TEST(google.check(token.token) == "");
}

// Without a key file: the metadata server at GCE_METADATA_HOST, asked with Metadata-Flavor.
BOOST_AUTO_TEST_CASE(without_a_key_file_the_metadata_server_gives_the_token) {
    fake_metadata_server metadata;
    auto source = source_of(vertex(), env_of({{"GCE_METADATA_HOST", metadata.host()}}));
    BOOST_TEST(has(source->origin(), "the metadata server at " + metadata.host()));
    auto token = ask(*source);
    BOOST_TEST_REQUIRE(bool(token), token.error);
    BOOST_TEST(metadata.check(token.token) == "");
    BOOST_TEST(metadata.service().requests().front().field("metadata-flavor") == "Google");
}

// A token that lives less than refresh_early is used half its life, then replaced before it
// expires; callers meanwhile share the one fetch.
BOOST_AUTO_TEST_CASE(a_short_lived_token_is_replaced_before_it_expires) {
    fake_google_oauth google(account(), 2s);
    temp_file key(account().key_file(google.token_uri()));
    auto source = source_of(vertex(key.path.string()));
    auto first = ask(*source).token;
    BOOST_TEST(ask(*source).token == first);
    auto until = std::chrono::steady_clock::now() + 3s;
    std::string now = first;
    while (now == first && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
        now = ask(*source).token;
        BOOST_TEST(google.check(now) == "");  // never an expired one
    }
    BOOST_TEST(now != first);
    BOOST_TEST(google.issued() == 2u);
}

// Once the token's refresh is due, the token in hand still serves at once while the refresh
// runs: a token endpoint that hangs delays nobody until the token expires.
BOOST_AUTO_TEST_CASE(the_token_in_hand_serves_while_its_refresh_hangs) {
    fake_google_oauth google(account(), 4s);
    temp_file key(account().key_file(google.token_uri()));
    auto timing = quick();
    timing.token_endpoint_timeout = 20s;  // a caller that waited for the refresh would show it
    auto source = source_of(vertex(key.path.string()), env_of({}), timing);
    auto first = ask(*source);
    BOOST_TEST_REQUIRE(bool(first), first.error);
    google.stall();
    auto at_once = [&] {
        auto began = std::chrono::steady_clock::now();
        auto got = ask(*source);
        BOOST_TEST(got.token == first.token, got.error);
        BOOST_TEST((std::chrono::steady_clock::now() - began < 1s));
    };
    // Due half way through its life (2 s): asked until the refresh has reached the endpoint.
    auto until = std::chrono::steady_clock::now() + 3s;
    while (google.service().count() < 2u && std::chrono::steady_clock::now() < until) {
        at_once();
        std::this_thread::sleep_for(20ms);
    }
    BOOST_TEST_REQUIRE(google.service().count() == 2u);
    for (int i = 0; i < 5; ++i) at_once();
    BOOST_TEST(google.service().count() == 2u);  // one refresh at a time
}

// A token the upstream refused (401) is dropped if it is the one in hand: the next caller gets
// another. Another token (an older one a late request carried) leaves it in place.
BOOST_AUTO_TEST_CASE(a_refused_token_is_replaced_at_the_next_call) {
    fake_google_oauth google(account());
    temp_file key(account().key_file(google.token_uri()));
    auto source = source_of(vertex(key.path.string()));
    auto first = ask(*source).token;
    source->invalidate("ya29.an-older-one");
    BOOST_TEST(ask(*source).token == first);
    BOOST_TEST(google.issued() == 1u);
    source->invalidate(first);
    auto second = ask(*source).token;
    BOOST_TEST(second != first);
    BOOST_TEST(google.check(second) == "");
    BOOST_TEST(google.issued() == 2u);
    source->invalidate(first);  // a late refusal of the first: the second stays
    BOOST_TEST(ask(*source).token == second);
}

// A token endpoint that never answers costs its timeout, and the error says so.
BOOST_AUTO_TEST_CASE(a_stalled_token_endpoint_is_a_bounded_error) {
    fake_aws_service stalled([](const auto&) { return aws_reply{.stall = true}; });
    temp_file key(account().key_file(stalled.url() + "/token"));
    auto timing = quick();
    timing.token_endpoint_timeout = 200ms;
    auto source = source_of(vertex(key.path.string()), env_of({}), timing);
    auto began = std::chrono::steady_clock::now();
    auto token = ask(*source);
    BOOST_TEST(!token);
    BOOST_TEST(has(token.error, "did not answer"), token.error);
    BOOST_TEST((std::chrono::steady_clock::now() - began < 5s));
}

// Entra ID: client credentials at {authority}/{tenant}/oauth2/v2.0/token; a wrong secret is
// refused with Entra ID's AADSTS words.
BOOST_AUTO_TEST_CASE(entra_id_gives_an_application_its_token) {
    fake_entra entra("tenant-1", "app-1", "secret-1");
    config::upstream_config up;
    up.name = "azure";
    up.host = config::hosting::azure;
    up.azure = {"tenant-1", "app-1", "secret-1", ""};
    auto source = source_of(up, env_of({{"AZURE_AUTHORITY_HOST", entra.authority() + "/"}}));
    auto token = ask(*source);
    BOOST_TEST_REQUIRE(bool(token), token.error);
    BOOST_TEST(entra.check(token.token) == "");
    BOOST_TEST(entra.check("made-up") == "unknown token");

    up.azure = {"tenant-1", "app-1", "wrong", entra.authority()};
    auto refused = ask(*source_of(up));
    BOOST_TEST(!refused);
    BOOST_TEST(has(refused.error,
                   "no Entra ID token for upstream `azure` from application app-1 "
                   "of tenant tenant-1"),
               refused.error);
    BOOST_TEST(has(refused.error, "(401 invalid_client): AADSTS7000215: Invalid client secret"),
               refused.error);
}

// Another upstream has no token source.
BOOST_AUTO_TEST_CASE(other_upstreams_have_none) {
    config::upstream_config up;
    up.name = "openai";
    auto made = make_token_source(up, env_of({}));
    BOOST_TEST_REQUIRE(bool(made));
    BOOST_TEST(!*made.value);
    up.host = config::hosting::azure;  // with an api_key, no `azure:` application
    BOOST_TEST(!*make_token_source(up, env_of({})).value);
}

BOOST_AUTO_TEST_CASE(token_answers_are_read_or_refused_in_their_words) {
    auto now = std::chrono::system_clock::now();
    auto got = read_token_answer("X", 200, R"({"access_token":"t","expires_in":"3599"})", now);
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST((got.value->expires_at == now + 3599s));
    BOOST_TEST(!read_token_answer("X", 200, R"({"access_token":"t"})", now));
    BOOST_TEST(!read_token_answer("X", 200, R"({"expires_in":10})", now));
    auto refused = read_token_answer("X", 503, "<html>busy</html>", now);
    BOOST_TEST(refused.error == "X refused (503): <html>busy</html>");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(config_cloud_credentials)

// check-config and start-up refuse a broken key file at the line that names it, with what is
// wrong in the file; the Entra ID application's secret is masked in the printed configuration.
BOOST_AUTO_TEST_CASE(a_broken_key_file_is_refused_at_its_line_and_secrets_are_masked) {
    temp_file broken(R"({"type":"service_account","client_email":"a@b"})");
    auto yaml =
        "upstreams:\n"
        "  - name: vertex\n"
        "    provider: vertex\n"
        "    project: p\n"
        "    location: us-east5\n"
        "    credentials_file: " +
        broken.path.string() + "\n";
    auto loaded = config::load_string(yaml, "gateway.yaml");
    BOOST_TEST(!loaded);
    BOOST_TEST(has(loaded.error, "gateway.yaml:6"), loaded.error);
    BOOST_TEST(has(loaded.error, "(service_account) has no `private_key`"), loaded.error);

    temp_file plain(account().key_file("http://oauth2.googleapis.com/token"));
    auto in_clear = config::load_string(
        "upstreams:\n"
        "  - name: vertex\n"
        "    provider: vertex\n"
        "    project: p\n"
        "    location: us-east5\n"
        "    credentials_file: " +
            plain.path.string() + "\n",
        "gateway.yaml");
    BOOST_TEST(!in_clear);
    BOOST_TEST(has(in_clear.error, "gateway.yaml:6"), in_clear.error);
    BOOST_TEST(has(in_clear.error, "must be https:// (http:// only to a loopback address)"),
               in_clear.error);

    auto azure = config::load_string(
        "upstreams:\n"
        "  - name: azure\n"
        "    provider: azure\n"
        "    base_url: https://r.openai.azure.com\n"
        "    api_version: 2024-10-21\n"
        "    azure:\n"
        "      tenant_id: t-1\n"
        "      client_id: c-1\n"
        "      client_secret: s3cret-value\n",
        "gateway.yaml");
    BOOST_TEST_REQUIRE(bool(azure), azure.error);
    BOOST_TEST(azure.value->upstreams[0].azure.client_secret == "s3cret-value");
    auto shown = config::to_yaml(*azure.value);
    BOOST_TEST(!has(shown, "s3cret-value"), shown);
    BOOST_TEST(has(shown, "c-1"), shown);

    auto partial = config::load_string(
        "upstreams:\n"
        "  - name: azure\n"
        "    provider: azure\n"
        "    base_url: https://r.openai.azure.com\n"
        "    api_version: 2024-10-21\n"
        "    azure: {tenant_id: t-1, client_id: c-1}\n",
        "gateway.yaml");
    BOOST_TEST(!partial);
    BOOST_TEST(has(partial.error, "gateway.yaml:6"), partial.error);
    BOOST_TEST(has(partial.error, "`client_secret`"), partial.error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_google_credentials_test
