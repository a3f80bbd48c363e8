#include "gateway/upstream/aws_credentials.hpp"

#include "tests/support/fake_aws.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <thread>

namespace upstream_aws_credentials_test {

using namespace gateway::upstream;
using gateway::testing::aws_reply;
using gateway::testing::aws_request;
using gateway::testing::fake_aws_service;
namespace config = gateway::config;
namespace net = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

aws::environment env_of(std::map<std::string, std::string> variables) {
    return
        [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
            auto it = variables.find(name);
            if (it == variables.end()) return std::nullopt;
            return it->second;
        };
}

// A made-up environment and home directory: the machine's own never reach the chain.
struct machine {
    fs::path home;
    std::map<std::string, std::string> variables;

    machine() {
        home = fs::temp_directory_path() /
               ("contextgate-aws-" + std::to_string(::getpid()) + "-" +
                std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
        fs::create_directories(home / ".aws");
        variables["HOME"] = home.string();
    }
    ~machine() { fs::remove_all(home); }
    machine(const machine&) = delete;
    machine& operator=(const machine&) = delete;

    void write(const std::string& relative, const std::string& text) const {
        std::ofstream(home / relative) << text;
    }
    aws::environment env() const;
    config::parsed<aws::source> find(const aws::settings& s = named()) const {
        return aws::find_source(s, env());
    }
    static aws::settings named() {
        aws::settings s;
        s.upstream = "bedrock";
        s.region = "eu-west-3";
        return s;
    }
};

aws::environment machine::env() const {
    return env_of(variables);
}

std::string iso_in(std::chrono::system_clock::duration from_now) {
    auto at = std::chrono::system_clock::now() + from_now;
    return config::format_time(
        std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count());
}

aws::current_credentials ask(aws::credentials_provider& provider) {
    net::io_context io;
    auto done = net::co_spawn(io, provider.current(), net::use_future);
    io.run_for(30s);  // every step of a fetch is bounded well below
    BOOST_TEST_REQUIRE((done.wait_for(0s) == std::future_status::ready), "no answer in 30 s");
    return done.get();
}

// STS for a web identity: the answers in `script` in turn (the last one again after it ends).
struct scripted_sts {
    std::vector<aws_reply> script;
    std::atomic<std::size_t> next{0};
    fake_aws_service service{[this](const aws_request&) {
        auto n = next.fetch_add(1);
        return script[std::min(n, script.size() - 1)];
    }};
    explicit scripted_sts(std::vector<aws_reply> replies) : script(std::move(replies)) {}
};

aws_reply sts_keys(const std::string& id, std::chrono::system_clock::duration valid_for,
                   bool hold = false) {
    aws_reply r{200, gateway::testing::sts_credentials_xml(id, "secret-" + id, "token-" + id,
                                                           iso_in(valid_for))};
    r.hold = hold;
    return r;
}

// A web identity source as the chain finds it on a Kubernetes pod, with STS at `sts_url`.
aws::source web_identity(const machine& m, const std::string& sts_url) {
    m.write("token", "eyJhbGciOiJSUzI1NiJ9.e30.sig");
    auto variables = m.variables;
    variables["AWS_WEB_IDENTITY_TOKEN_FILE"] = (m.home / "token").string();
    variables["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/bedrock";
    variables["AWS_ENDPOINT_URL_STS"] = sts_url;
    auto found = aws::find_source(machine::named(), env_of(variables));
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST_REQUIRE((found.value->from == aws::source::kind::web_identity));
    return *found.value;
}

aws::settings quick() {
    auto s = machine::named();
    s.sts_timeout = 2s;
    s.metadata_timeout = 2s;
    s.retry_after_failure = 0ms;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_aws_credentials)

// The chain, in its order.

BOOST_AUTO_TEST_CASE(the_upstreams_own_keys_come_first) {
    machine m;
    m.variables["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    m.variables["AWS_SECRET_ACCESS_KEY"] = "envsecret";
    m.variables["AWS_BEARER_TOKEN_BEDROCK"] = "envbearer";
    auto s = machine::named();
    s.access_key_id = "CFGKEY";
    s.secret_access_key = "cfgsecret";
    s.session_token = "cfgtoken";
    auto found = m.find(s);
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST((found.value->from == aws::source::kind::keys));
    BOOST_TEST(found.value->keys.access_key_id == "CFGKEY");
    BOOST_TEST(found.value->keys.session_token == "cfgtoken");
    BOOST_TEST(found.value->origin == "the upstream's aws block");
}

BOOST_AUTO_TEST_CASE(the_aws_block_is_checked) {
    machine m;
    auto s = machine::named();
    s.access_key_id = "CFGKEY";
    BOOST_TEST(m.find(s).error ==
               "upstream `bedrock`: aws: access_key_id and secret_access_key go together");
    s.secret_access_key = "x";
    s.bearer_token = "b";
    BOOST_TEST(m.find(s).error ==
               "upstream `bedrock`: aws: bearer_token and keys both set: one or the other");
    s = machine::named();
    s.session_token = "t";
    BOOST_TEST(m.find(s).error ==
               "upstream `bedrock`: aws: session_token without access_key_id and "
               "secret_access_key");
}

BOOST_AUTO_TEST_CASE(a_bedrock_api_key_replaces_signing) {
    machine m;
    m.variables["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    m.variables["AWS_SECRET_ACCESS_KEY"] = "envsecret";
    m.variables["AWS_BEARER_TOKEN_BEDROCK"] = "envbearer";
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST((found.value->from == aws::source::kind::bearer_token));
    BOOST_TEST(found.value->bearer_token == "envbearer");
    auto s = machine::named();
    s.bearer_token = "cfgbearer";
    BOOST_TEST(m.find(s).value->bearer_token == "cfgbearer");
    aws::credentials_provider provider(*m.find(s).value, s);
    BOOST_TEST(provider.bearer_token() == "cfgbearer");
    BOOST_TEST(!ask(provider));
}

BOOST_AUTO_TEST_CASE(the_environment_comes_before_the_shared_files) {
    machine m;
    m.write(".aws/credentials",
            "[default]\naws_access_key_id = FILEKEY\n"
            "aws_secret_access_key = filesecret\n");
    m.variables["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    m.variables["AWS_SECRET_ACCESS_KEY"] = "envsecret";
    m.variables["AWS_SESSION_TOKEN"] = "envtoken";
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST(found.value->keys.access_key_id == "ENVKEY");
    BOOST_TEST(found.value->keys.session_token == "envtoken");
    BOOST_TEST(found.value->origin == "the environment (AWS_ACCESS_KEY_ID)");
    m.variables.erase("AWS_SECRET_ACCESS_KEY");
    BOOST_TEST(m.find().error == "AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY");
}

BOOST_AUTO_TEST_CASE(the_shared_files_give_the_default_profile_or_aws_profiles) {
    machine m;
    m.write(".aws/credentials",
            "# comment\n[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n"
            "\n[dev]\naws_access_key_id=DEVKEY\naws_secret_access_key=devsecret\n"
            "aws_session_token=devtoken\n");
    m.write(".aws/config",
            "[default]\nregion = us-east-1\n[profile ops]\n"
            "aws_access_key_id = OPSKEY\naws_secret_access_key = opssecret\n"
            "s3 =\n  max_concurrent_requests = 20\n"
            "[sso-session corp]\nsso_start_url = https://corp.example\n");
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST(found.value->keys.access_key_id == "DEFKEY");
    BOOST_TEST(found.value->origin ==
               "profile `default` of " + (m.home / ".aws/credentials").string());
    m.variables["AWS_PROFILE"] = "dev";
    BOOST_TEST(m.find().value->keys.session_token == "devtoken");
    m.variables["AWS_PROFILE"] = "ops";  // `[profile ops]` of the config file
    found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST(found.value->keys.access_key_id == "OPSKEY");
    BOOST_TEST(found.value->origin == "profile `ops` of " + (m.home / ".aws/config").string());
    m.variables["AWS_PROFILE"] = "nobody";
    BOOST_TEST(has(m.find().error, "AWS_PROFILE names profile `nobody`, which neither"));
}

BOOST_AUTO_TEST_CASE(the_credentials_file_wins_over_the_config_file) {
    machine m;
    m.write(".aws/config",
            "[default]\naws_access_key_id = CFGFILE\n"
            "aws_secret_access_key = cfgfile\n");
    m.write(".aws/credentials",
            "[default]\naws_access_key_id = CREDFILE\n"
            "aws_secret_access_key = credfile\n");
    BOOST_TEST(m.find().value->keys.access_key_id == "CREDFILE");
}

BOOST_AUTO_TEST_CASE(the_file_variables_move_the_shared_files) {
    machine m;
    m.write("elsewhere", "[default]\naws_access_key_id = ELSEKEY\naws_secret_access_key = s\n");
    m.write(".aws/credentials",
            "[default]\naws_access_key_id = HOMEKEY\n"
            "aws_secret_access_key = s\n");
    m.variables["AWS_SHARED_CREDENTIALS_FILE"] = (m.home / "elsewhere").string();
    BOOST_TEST(m.find().value->keys.access_key_id == "ELSEKEY");
    m.variables.erase("AWS_SHARED_CREDENTIALS_FILE");
    m.write("other-config",
            "[profile x]\naws_access_key_id = CONFKEY\naws_secret_access_key = s\n");
    m.variables["AWS_CONFIG_FILE"] = (m.home / "other-config").string();
    m.variables["AWS_PROFILE"] = "x";
    BOOST_TEST(m.find().value->keys.access_key_id == "CONFKEY");
}

BOOST_AUTO_TEST_CASE(a_broken_shared_file_is_named_with_its_line) {
    machine m;
    m.write(".aws/credentials", "[default]\naws_access_key_id = K\nthis is no setting\n");
    BOOST_TEST(m.find().error ==
               (m.home / ".aws/credentials").string() + ":3: not `key = value` nor `[section]`");
    m.write(".aws/credentials", "aws_access_key_id = K\n");
    BOOST_TEST(has(m.find().error, ":1: a key before any `[section]`"));
    m.write(".aws/credentials", "[default]\naws_access_key_id = K\n");
    BOOST_TEST(has(m.find().error,
                   "has one of aws_access_key_id and aws_secret_access_key "
                   "without the other"));
}

BOOST_AUTO_TEST_CASE(a_profile_the_gateway_cannot_follow_is_refused) {
    machine m;
    m.write(".aws/config", "[default]\nsso_session = corp\n");
    BOOST_TEST(has(m.find().error, "uses `sso_session`, which the gateway does not support"));
    m.write(".aws/config", "[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = base\n");
    BOOST_TEST(has(m.find().error, "uses `role_arn`"));
    // role_arn with a token file is web identity, which it does follow.
    m.write(".aws/config",
            "[default]\nrole_arn = arn:aws:iam::1:role/r\n"
            "web_identity_token_file = /var/run/token\nrole_session_name = s1\n");
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST((found.value->from == aws::source::kind::web_identity));
    BOOST_TEST(found.value->token_file == "/var/run/token");
    BOOST_TEST(found.value->session_name == "s1");
}

BOOST_AUTO_TEST_CASE(web_identity_comes_after_the_files_and_finds_its_sts) {
    machine m;
    m.variables["AWS_WEB_IDENTITY_TOKEN_FILE"] = "/var/run/secrets/token";
    m.variables["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/bedrock";
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST((found.value->from == aws::source::kind::web_identity));
    BOOST_TEST(found.value->role_arn == "arn:aws:iam::123456789012:role/bedrock");
    BOOST_TEST(found.value->sts_url == "https://sts.eu-west-3.amazonaws.com");  // the upstream's
    BOOST_TEST(found.value->session_name.starts_with("contextgate-"));
    m.variables["AWS_REGION"] = "cn-north-1";
    BOOST_TEST(m.find().value->sts_url == "https://sts.cn-north-1.amazonaws.com.cn");
    m.variables["AWS_ENDPOINT_URL_STS"] = "http://127.0.0.1:4566";
    m.variables["AWS_ROLE_SESSION_NAME"] = "pod-7";
    BOOST_TEST(m.find().value->sts_url == "http://127.0.0.1:4566");
    BOOST_TEST(m.find().value->session_name == "pod-7");
    // A profile's keys come first.
    m.write(".aws/credentials",
            "[default]\naws_access_key_id = FILEKEY\n"
            "aws_secret_access_key = s\n");
    BOOST_TEST((m.find().value->from == aws::source::kind::keys));
}

BOOST_AUTO_TEST_CASE(the_instance_metadata_service_comes_last) {
    machine m;
    m.variables.erase("HOME");  // no home: no shared files
    auto found = m.find();
    BOOST_TEST_REQUIRE(bool(found), found.error);
    BOOST_TEST((found.value->from == aws::source::kind::instance_metadata));
    BOOST_TEST(found.value->metadata_url == "http://169.254.169.254");
    m.variables["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://[fd00:ec2::254]/";
    BOOST_TEST(m.find().value->metadata_url == "http://[fd00:ec2::254]");
    m.variables["AWS_EC2_METADATA_DISABLED"] = "TRUE";
    BOOST_TEST(has(m.find().error, "no AWS credentials for upstream `bedrock`"));
}

// The provider.

BOOST_AUTO_TEST_CASE(fixed_keys_are_handed_out_as_they_are) {
    machine m;
    m.variables["AWS_ACCESS_KEY_ID"] = "ENVKEY";
    m.variables["AWS_SECRET_ACCESS_KEY"] = "envsecret";
    aws::credentials_provider provider(*m.find().value, quick());
    auto got = ask(provider);
    BOOST_TEST_REQUIRE(bool(got), got.error);
    BOOST_TEST(got.keys->access_key_id == "ENVKEY");
}

// Fifty requests at once with no credentials yet: one call to STS, every one of them served by it.
BOOST_AUTO_TEST_CASE(fifty_callers_share_one_sts_call) {
    machine m;
    scripted_sts sts({sts_keys("ASIA1", 1h, true)});
    auto provider =
        std::make_unique<aws::credentials_provider>(web_identity(m, sts.service.url()), quick());
    auto io = std::make_unique<net::io_context>();
    std::vector<std::future<aws::current_credentials>> answers;
    for (int i = 0; i < 50; ++i)
        answers.push_back(net::co_spawn(*io, provider->current(), net::use_future));
    std::promise<void> all_asked;
    net::post(*io, [&] { all_asked.set_value(); });  // runs after each caller's first step
    std::thread callers([&] { io->run(); });
    all_asked.get_future().wait();
    BOOST_TEST(sts.service.wait_for(1, 10s));
    sts.service.release();
    bool answered = true;
    for (auto& a : answers) answered = answered && a.wait_for(10s) == std::future_status::ready;
    if (!answered) {
        // Callers left waiting (one fetch per caller, each waiting on its own): the test fails
        // rather than hangs, and what they wait on is left behind, since it cannot end.
        io->stop();
        callers.join();
        (void)provider.release();
        (void)io.release();
        BOOST_FAIL("callers were left waiting for credentials");
    }
    callers.join();
    std::set<const aws::credentials*> handed;
    for (auto& a : answers) {
        auto got = a.get();
        BOOST_TEST_REQUIRE(bool(got), got.error);
        handed.insert(got.keys.get());
    }
    BOOST_TEST(handed.size() == 1u);
    BOOST_TEST((*handed.begin())->access_key_id == "ASIA1");
    BOOST_TEST(sts.service.count() == 1u);
    BOOST_TEST(ask(*provider).keys->access_key_id == "ASIA1");  // kept: still one call
    BOOST_TEST(sts.service.count() == 1u);
}

// Credentials are replaced before they expire: refresh_early (5 minutes) before, or half way
// through a shorter life (a life of 2 seconds: after one second), and used until then.
BOOST_AUTO_TEST_CASE(credentials_are_refreshed_before_they_expire) {
    machine m;
    scripted_sts sts({sts_keys("SOON", 2s), sts_keys("LATER", 1h)});
    aws::credentials_provider provider(web_identity(m, sts.service.url()), quick());
    BOOST_TEST(ask(provider).keys->access_key_id == "SOON");
    BOOST_TEST(ask(provider).keys->access_key_id == "SOON");  // not yet due: kept
    BOOST_TEST(sts.service.count() == 1u);
    auto until = std::chrono::steady_clock::now() + 3s;
    std::string id = "SOON";
    while (id == "SOON" && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
        id = ask(provider).keys->access_key_id;
    }
    BOOST_TEST(id == "LATER");
    BOOST_TEST(ask(provider).keys->access_key_id == "LATER");
    BOOST_TEST(sts.service.count() == 2u);
}

// A refresh that fails is an error that says why; the next one that succeeds serves again.
BOOST_AUTO_TEST_CASE(a_failed_refresh_says_why_and_a_later_one_recovers) {
    machine m;
    scripted_sts sts(
        {{400, gateway::testing::sts_error_xml("InvalidIdentityToken", "Token is expired")},
         sts_keys("BACK", 1h)});
    aws::credentials_provider provider(web_identity(m, sts.service.url()), quick());
    auto failed = ask(provider);
    BOOST_TEST(!failed);
    BOOST_TEST(has(failed.error, "no AWS credentials for upstream `bedrock` from web identity"),
               failed.error);
    BOOST_TEST(has(failed.error, "(400 InvalidIdentityToken): Token is expired"), failed.error);
    auto back = ask(provider);
    BOOST_TEST_REQUIRE(bool(back), back.error);
    BOOST_TEST(back.keys->access_key_id == "BACK");
}

// Within retry_after_failure the failure is the answer without asking STS again.
BOOST_AUTO_TEST_CASE(a_failure_is_not_asked_again_at_once) {
    machine m;
    scripted_sts sts({{503, "busy"}, sts_keys("LATE", 1h)});
    auto s = quick();
    s.retry_after_failure = 1h;
    aws::credentials_provider provider(web_identity(m, sts.service.url()), s);
    auto first = ask(provider);
    auto second = ask(provider);
    BOOST_TEST(!second);
    BOOST_TEST(second.error == first.error);
    BOOST_TEST(sts.service.count() == 1u);
}

// Credentials due for refresh but not yet expired still serve when the refresh fails.
BOOST_AUTO_TEST_CASE(keys_in_hand_serve_until_they_expire_when_a_refresh_fails) {
    machine m;
    scripted_sts sts({sts_keys("OLD", 2s), {500, "down"}});
    aws::credentials_provider provider(web_identity(m, sts.service.url()), quick());
    BOOST_TEST(ask(provider).keys->access_key_id == "OLD");
    // Due half way through its life; the failed refresh leaves it in hand.
    auto until = std::chrono::steady_clock::now() + 3s;
    while (sts.service.count() < 2u && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
        auto got = ask(provider);
        BOOST_TEST_REQUIRE(bool(got), got.error);
        BOOST_TEST(got.keys->access_key_id == "OLD");
    }
    // At least the one refresh that failed: with no wait after a failure, the refresher may ask
    // again (and fail again) before this line, as it did once in a parallel ctest run (3).
    BOOST_TEST(sts.service.count() >= 2u);
}

// The chain with both services present takes web identity; without it, the instance's role.
BOOST_AUTO_TEST_CASE(the_chain_takes_web_identity_before_the_instance_metadata_service) {
    scripted_sts sts({sts_keys("FROMSTS", 1h)});
    fake_aws_service imds([](const aws_request& r) -> aws_reply {
        if (r.method == "PUT") return {200, "tok", "text/plain"};
        if (r.target.ends_with("/security-credentials/")) return {200, "role", "text/plain"};
        return {200,
                R"({"Code":"Success","AccessKeyId":"FROMIMDS","SecretAccessKey":"s",)"
                R"("Token":"t","Expiration":")" +
                    iso_in(1h) + R"("})",
                "application/json"};
    });
    machine m;
    m.write("token", "jwt");
    m.variables["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds.url();
    m.variables["AWS_WEB_IDENTITY_TOKEN_FILE"] = (m.home / "token").string();
    m.variables["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/bedrock";
    m.variables["AWS_ENDPOINT_URL_STS"] = sts.service.url();
    {
        aws::credentials_provider provider(*m.find().value, quick());
        BOOST_TEST(ask(provider).keys->access_key_id == "FROMSTS");
    }
    m.variables.erase("AWS_ROLE_ARN");
    aws::credentials_provider provider(*m.find().value, quick());
    BOOST_TEST(ask(provider).keys->access_key_id == "FROMIMDS");
    BOOST_TEST(sts.service.count() == 1u);
    BOOST_TEST(imds.count() == 3u);
}

// A stalled STS costs its timeout, and the error says so.
BOOST_AUTO_TEST_CASE(a_stalled_sts_is_a_bounded_error) {
    machine m;
    scripted_sts sts({aws_reply{.stall = true}});
    auto s = quick();
    s.sts_timeout = 200ms;
    aws::credentials_provider provider(web_identity(m, sts.service.url()), s);
    auto began = std::chrono::steady_clock::now();
    auto got = ask(provider);
    BOOST_TEST(!got);
    BOOST_TEST(has(got.error, "timed out"), got.error);
    BOOST_TEST((std::chrono::steady_clock::now() - began < 5s));
}

// stop() during a fetch ends it at once; its waiters, and later callers, get an error.
BOOST_AUTO_TEST_CASE(stopping_ends_a_fetch_and_its_waiters) {
    machine m;
    scripted_sts sts({sts_keys("NEVER", 1h, true)});
    aws::credentials_provider provider(web_identity(m, sts.service.url()), quick());
    net::io_context io;
    auto waiting = net::co_spawn(io, provider.current(), net::use_future);
    std::thread caller([&] { io.run(); });
    BOOST_TEST(sts.service.wait_for(1, 10s));
    provider.stop();
    caller.join();
    auto got = waiting.get();
    BOOST_TEST(!got);
    BOOST_TEST(got.error == "the gateway is stopping");
    BOOST_TEST(ask(provider).error == "the gateway is stopping");
    sts.service.release();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_aws_credentials_test
