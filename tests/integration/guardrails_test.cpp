// The guardrails (docs/operations.md "Guardrails") where requests, answers and agent tool results
// pass, through the real gateway against the fake upstream: a secret in a request is masked before
// it goes upstream or the request is refused in the client's own shape; a secret split across two
// streamed events never reaches the client and the stream keeps its grammar; an agent's tool
// output is checked before the model reads it; a policy webhook blocks, fails open or closed, and
// its circuit breaker opens.
#include "tests/integration/context_fixture.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/support/stream_grammar.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace integration_guardrails_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

// An AWS access key id (the format's own shape; no real key).
const std::string secret = "AKIAZ7QWERTYUIOPASDF";
const std::string masked = "[REDACTED:aws_access_key_id]";

config::guardrail_config secrets_guardrail(config::guardrail_action action,
                                           std::vector<config::guardrail_stage> on) {
    config::guardrail_config g;
    g.name = "secrets";
    g.detect = {"secrets"};
    g.on = std::move(on);
    g.action = action;
    return g;
}

config::virtual_key key_of(std::string name, const std::string& secret_key) {
    config::virtual_key k;
    k.id = "cfg-" + name;
    k.name = std::move(name);
    k.digest = config::key_digest(secret_key);
    return k;
}

bool holds(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

// A text that a half split puts the secret across: the fake streams a scripted reply's text in
// two events cut at its middle.
std::string split_secret() {
    return "key: " + secret + "!";
}

response post(std::uint16_t port, std::string_view path, const std::string& body,
              std::string headers = {}) {
    client c(port);
    return c.request(
        make_request("POST", path, body, "Content-Type: application/json\r\n" + headers));
}

double metric(std::uint16_t port, std::string_view series) {
    client c(port);
    auto text = c.request(make_request("GET", "/metrics")).body;
    auto at = text.find(std::string("\n") + std::string(series) + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + 2 + series.size()));
}

// A policy webhook on 127.0.0.1: answers each POST with `answer` (status 200) or `status`, counts
// the calls and keeps the last body.
class fake_webhook {
public:
    explicit fake_webhook(std::string answer, unsigned status = 200)
        : answer_(std::move(answer)), status_(status), acceptor_(io_, {net::ip::tcp::v4(), 0}) {
        acceptor_.set_option(net::socket_base::reuse_address(true));
        thread_ = std::thread([this] { serve(); });
    }
    ~fake_webhook() {
        stopping_ = true;
        boost::system::error_code ignored;
        net::ip::tcp::socket poke(io_);
        poke.connect({net::ip::address_v4::loopback(), port()}, ignored);
        thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/check"; }
    int calls() const { return calls_; }
    std::string last_body() const {
        std::lock_guard lock(mutex_);
        return last_;
    }

private:
    void serve() {
        for (;;) {
            net::ip::tcp::socket s(io_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (stopping_) return;
            if (ec) continue;
            net::streambuf in;
            auto head = net::read_until(s, in, "\r\n\r\n", ec);
            if (ec) continue;
            std::string text(net::buffers_begin(in.data()), net::buffers_end(in.data()));
            auto at = text.find("Content-Length: ");
            std::size_t length = at == std::string::npos ? 0 : std::stoul(text.substr(at + 16));
            while (in.size() < head + length && !ec) in.commit(s.read_some(in.prepare(4096), ec));
            text.assign(net::buffers_begin(in.data()), net::buffers_end(in.data()));
            {
                std::lock_guard lock(mutex_);
                last_ = text.substr(head);
            }
            ++calls_;
            auto reply = "HTTP/1.1 " + std::to_string(status_) +
                         " X\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(answer_.size()) + "\r\nConnection: close\r\n\r\n" + answer_;
            net::write(s, net::buffer(reply), ec);
        }
    }

    std::string answer_;
    unsigned status_;
    net::io_context io_;
    net::ip::tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> calls_{0};
    mutable std::mutex mutex_;
    std::string last_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(guardrails)

// mask: the upstream hears the request with each secret replaced, in the message text, a tool
// call's arguments and a tool result of the history, in Chat Completions and in Messages.
BOOST_AUTO_TEST_CASE(a_masked_secret_never_reaches_the_upstream) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::mask, {config::guardrail_stage::request})};
    running_gateway gw(c);

    json::object chat{
        {"model", "gpt-4o-mini"},
        {"messages",
         json::array{
             {{"role", "user"}, {"content", "my key is " + secret}},
             {{"role", "assistant"},
              {"content", nullptr},
              {"tool_calls",
               json::array{{{"id", "call_1"},
                            {"type", "function"},
                            {"function",
                             {{"name", "store"},
                              {"arguments", json::serialize(json::object{{"key", secret}})}}}}}}},
             {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "stored " + secret}}}}};
    auto r = post(gw.port(), "/v1/chat/completions", json::serialize(chat));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST_REQUIRE(fake.requests().size() == 1u);
    auto heard = fake.requests()[0].body;
    BOOST_TEST(!holds(heard, secret), heard);
    auto sent = json::parse(heard).at("messages").as_array();
    BOOST_TEST(sent[0].at("content").as_string() == "my key is " + masked);
    BOOST_TEST(holds(json::serialize(sent[1]), masked));
    BOOST_TEST(sent[2].at("content").as_string() == "stored " + masked);
    // Only the texts changed.
    BOOST_TEST(sent[2].at("tool_call_id") == "call_1");

    json::object messages{
        {"model", "claude-sonnet-4-5"},
        {"max_tokens", 64},
        {"system", "deploy with " + secret},
        {"messages",
         json::array{{{"role", "user"},
                      {"content", json::array{{{"type", "text"}, {"text", "and " + secret}}}}}}}};
    auto m = post(gw.port(), "/v1/messages", json::serialize(messages),
                  "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST_REQUIRE(fake.requests().size() == 2u);
    auto heard_messages = fake.requests()[1].body;
    BOOST_TEST(!holds(heard_messages, secret), heard_messages);
    BOOST_TEST(json::parse(heard_messages).at("system").as_string() == "deploy with " + masked);

    // Counted by rule and stage; a request without a secret goes as it came.
    BOOST_TEST(metric(gw.port(),
                      "contextgate_guardrail_hits_total{guardrail=\"secrets\",rule="
                      "\"aws_access_key_id\",stage=\"request\",action=\"mask\"}") >= 4);
    const std::string plain =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]})";
    BOOST_TEST(post(gw.port(), "/v1/chat/completions", plain).status == 200u);
    BOOST_TEST(fake.requests().back().body == plain);
}

// block: the client's own error (400 guardrail_blocked, naming the guardrail and the rule, never
// the text), no upstream call, nothing charged.
BOOST_AUTO_TEST_CASE(a_blocked_request_is_refused_in_the_clients_shape) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::block, {config::guardrail_stage::request})};
    c.admin.api_key = "admin-key-0123456789abcdef";
    c.admin.keys = {key_of("metered", "sk-metered-0123456789")};
    running_gateway gw(c);
    const std::string key = "Authorization: Bearer sk-metered-0123456789\r\n";

    json::object chat{{"model", "gpt-4o-mini"},
                      {"messages", json::array{{{"role", "user"}, {"content", "key " + secret}}}}};
    auto r = post(gw.port(), "/v1/chat/completions", json::serialize(chat), key);
    BOOST_TEST(r.status == 400u, r.body);
    auto error = json::parse(r.body).at("error");
    BOOST_TEST(error.at("code") == "guardrail_blocked");
    auto message = std::string(error.at("message").as_string());
    BOOST_TEST(holds(message, "`secrets`"));
    BOOST_TEST(holds(message, "aws_access_key_id"));
    BOOST_TEST(!holds(r.body, secret));

    json::object messages{
        {"model", "claude-sonnet-4-5"},
        {"max_tokens", 64},
        {"messages", json::array{{{"role", "user"}, {"content", "key " + secret}}}}};
    auto m = post(gw.port(), "/v1/messages", json::serialize(messages),
                  key + "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST(m.status == 400u, m.body);
    auto anthropic = json::parse(m.body);
    BOOST_TEST(anthropic.at("type") == "error");
    BOOST_TEST(holds(anthropic.at("error").at("message").as_string(), "guardrail_blocked"));
    BOOST_TEST(fake.requests().empty());

    // Only the request that went upstream is in the ledger.
    const std::string plain =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]})";
    BOOST_TEST_REQUIRE(post(gw.port(), "/v1/chat/completions", plain, key).status == 200u);
    std::int64_t requests = 0;
    auto deadline = clock::now() + 10s;
    while (requests == 0 && clock::now() < deadline) {
        client a(gw.port());
        auto u = a.request(make_request("GET", "/admin/usage?key=cfg-metered", "",
                                        "Authorization: Bearer admin-key-0123456789abcdef\r\n"));
        requests = 0;
        auto usage = json::parse(u.body);
        for (const auto& row : usage.at("data").as_array())
            requests += row.at("requests").as_int64();
    }
    BOOST_TEST(requests == 1);
}

// The answer: a secret the model writes across two streamed events never reaches the client,
// and each stream keeps its grammar; a JSON answer is masked whole.
BOOST_AUTO_TEST_CASE(a_secret_split_across_streamed_events_never_reaches_the_client) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::mask, {config::guardrail_stage::response})};
    running_gateway gw(c);
    fake.script({{split_secret()}, {split_secret()}, {split_secret()}, {split_secret()}});

    const std::string chat =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"key?"}]})";
    auto r = post(gw.port(), "/v1/chat/completions", chat);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(!holds(r.body, secret), r.body);
    auto stream = read_chat_stream(r.body);
    BOOST_TEST(stream.error.empty(), stream.error);
    BOOST_TEST(stream.done);
    BOOST_TEST(stream.text == "key: " + masked + "!");

    const std::string messages = R"({"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,)"
                                 R"("messages":[{"role":"user","content":"key?"}]})";
    auto m = post(gw.port(), "/v1/messages", messages, "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST(!holds(m.body, secret), m.body);
    BOOST_TEST(holds(m.body, masked));
    BOOST_TEST(check_messages_stream(m.body) == "");

    // A Messages client on the OpenAI-compatible upstream: the translation's events.
    const std::string translated = R"({"model":"gpt-4o-mini","max_tokens":64,"stream":true,)"
                                   R"("messages":[{"role":"user","content":"key?"}]})";
    auto t = post(gw.port(), "/v1/messages", translated, "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(t.status == 200u, t.body);
    BOOST_TEST(!holds(t.body, secret), t.body);
    BOOST_TEST(holds(t.body, masked));
    BOOST_TEST(check_messages_stream(t.body) == "");

    const std::string whole =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"key?"}]})";
    auto j = post(gw.port(), "/v1/chat/completions", whole);
    BOOST_TEST_REQUIRE(j.status == 200u, j.body);
    BOOST_TEST(!holds(j.body, secret), j.body);
    BOOST_TEST(json::parse(j.body).at("choices").at(0).at("message").at("content").as_string() ==
               "key: " + masked + "!");
    BOOST_TEST(metric(gw.port(),
                      "contextgate_guardrail_hits_total{guardrail=\"secrets\",rule="
                      "\"aws_access_key_id\",stage=\"response\",action=\"mask\"}") >= 4);
}

// Claude on Bedrock streams AWS frames that the relay rewrites into Anthropic's SSE for a
// /v1/messages client: the answer's guardrails read that stream too.
BOOST_AUTO_TEST_CASE(a_secret_in_claudes_stream_from_bedrock_never_reaches_the_client) {
    namespace fp = gateway::testing::fake_providers;
    fake_upstream fake;
    auto c = make_config({fake.base_url(), "http://127.0.0.1:" + std::to_string(fake.port())});
    c.upstreams[0].models = {"gpt-*"};
    auto& b = c.upstreams[1];
    b.name = "bedrock";
    b.provider = config::provider_kind::bedrock;
    b.region = "us-east-1";
    b.aws = {std::string(fp::fake_aws_key_id), std::string(fp::fake_aws_secret), {}, {}};
    b.models = {"anthropic.*"};
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::mask, {config::guardrail_stage::response})};
    running_gateway gw(c);
    fake.script({{split_secret()}});
    const std::string ask =
        R"({"model":"anthropic.claude-sonnet-4-5-20250929-v1:0","max_tokens":64,"stream":true,)"
        R"("messages":[{"role":"user","content":"key?"}]})";
    auto m = post(gw.port(), "/v1/messages", ask, "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST(!holds(m.body, secret), m.body);
    BOOST_TEST(holds(m.body, masked), m.body);
    BOOST_TEST(check_messages_stream(m.body) == "");
}

// block on the answer: a stream ends with the API's error event after what came before it.
BOOST_AUTO_TEST_CASE(a_blocked_stream_ends_with_the_apis_error_event) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::block, {config::guardrail_stage::response})};
    running_gateway gw(c);
    fake.script({{split_secret()}});
    const std::string messages = R"({"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,)"
                                 R"("messages":[{"role":"user","content":"key?"}]})";
    auto m = post(gw.port(), "/v1/messages", messages, "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST(!holds(m.body, secret), m.body);
    BOOST_TEST(holds(m.body, "event: error"));
    BOOST_TEST(check_messages_stream(m.body) == "");
}

// tool_result: a workspace file that holds a key is read by the agent; the model never hears the
// key, and the run's events say a guardrail masked it.
BOOST_AUTO_TEST_CASE(an_agent_reading_a_key_never_sends_it_to_the_model) {
    context_fixture f([](config::gateway_config& c) {
        c.guardrails = {secrets_guardrail(config::guardrail_action::mask,
                                          {config::guardrail_stage::tool_result})};
    });
    write_text(f.workspace / ".env", "AWS_ACCESS_KEY_ID=" + secret + "\n");
    f.fake.script({{call("read_file", {{"path", ".env"}})}, {"The file holds an AWS key id."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "what is in .env?");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    auto second = f.model_messages(1);
    BOOST_TEST(!holds(json::serialize(second), secret), json::serialize(second));
    BOOST_TEST(mentions(second, masked));
    bool told = false;
    for (const auto& e : all)
        if (e.type == "guardrail.applied") {
            told = true;
            BOOST_TEST(e.data.at("action") == "mask");
            BOOST_TEST(e.data.at("tool") == "read_file");
            BOOST_TEST(!holds(json::serialize(e.data), secret));
        }
    BOOST_TEST(told);
}

// block on a tool result: the model is told a guardrail withheld it, and the run goes on.
BOOST_AUTO_TEST_CASE(a_blocked_tool_result_is_withheld_and_the_run_goes_on) {
    context_fixture f([](config::gateway_config& c) {
        c.guardrails = {secrets_guardrail(config::guardrail_action::block,
                                          {config::guardrail_stage::tool_result})};
    });
    write_text(f.workspace / ".env", "AWS_ACCESS_KEY_ID=" + secret + "\n");
    f.fake.script({{call("read_file", {{"path", ".env"}})}, {"I could not read it."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "what is in .env?");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    auto second = f.model_messages(1);
    BOOST_TEST(!holds(json::serialize(second), secret));
    BOOST_TEST(mentions(second, "GUARDRAIL_BLOCKED"));
}

// The webhook: its block refuses the request, naming the guardrail; its spans are masked.
BOOST_AUTO_TEST_CASE(a_policy_webhook_blocks_and_masks) {
    fake_webhook blocking(R"({"action":"block","reason":"off-topic"})");
    fake_upstream fake;
    auto c = make_config(fake);
    config::guardrail_config policy;
    policy.name = "policy";
    policy.webhook = config::guardrail_webhook{blocking.url(),
                                               {false, "127.0.0.1", blocking.port(), "/check"},
                                               config::duration(2000),
                                               true};
    c.guardrails = {policy};
    {
        running_gateway gw(c);
        const std::string body =
            R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"tell me a joke"}]})";
        auto r = post(gw.port(), "/v1/chat/completions", body);
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(holds(r.body, "guardrail_blocked"));
        BOOST_TEST(holds(r.body, "`policy`"));
        BOOST_TEST(fake.requests().empty());
        auto asked = json::parse(blocking.last_body());
        BOOST_TEST(asked.at("stage") == "request");
        BOOST_TEST(asked.at("text") == "tell me a joke");
        BOOST_TEST(asked.at("model") == "gpt-4o-mini");
    }
    // "tell me a joke": "joke" is [10, 14).
    fake_webhook masking(R"({"action":"mask","spans":[[10,14]]})");
    c.guardrails[0].webhook->endpoint.port = masking.port();
    running_gateway gw(c);
    const std::string body =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"tell me a joke"}]})";
    BOOST_TEST_REQUIRE(post(gw.port(), "/v1/chat/completions", body).status == 200u);
    BOOST_TEST_REQUIRE(fake.requests().size() == 1u);
    BOOST_TEST(json::parse(fake.requests()[0].body).at("messages").at(0).at("content") ==
               "tell me a [REDACTED:policy]");
}

// A webhook that does not answer: `fail: open` lets the request go, `fail: closed` refuses it;
// after five failures in a row its breaker opens and it is not called for a while.
BOOST_AUTO_TEST_CASE(a_failing_webhook_fails_open_or_closed_and_its_breaker_opens) {
    fake_webhook broken(R"({"error":"down"})", 500);
    fake_upstream fake;
    auto c = make_config(fake);
    config::guardrail_config policy;
    policy.name = "policy";
    policy.webhook = config::guardrail_webhook{
        broken.url(), {false, "127.0.0.1", broken.port(), "/check"}, config::duration(2000), true};
    c.guardrails = {policy};
    const std::string body =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]})";
    {
        running_gateway gw(c);
        for (int i = 0; i < 7; ++i) {
            auto r = post(gw.port(), "/v1/chat/completions", body);
            BOOST_TEST(r.status == 200u, r.body);
        }
        // Five failures opened the breaker: the last two were decided without a call.
        BOOST_TEST(broken.calls() == 5);
        BOOST_TEST(fake.requests().size() == 7u);
    }
    c.guardrails[0].webhook->fail_open = false;
    c.guardrails[0].webhook->endpoint.port = unused_port();
    running_gateway gw(c);
    auto r = post(gw.port(), "/v1/chat/completions", body);
    BOOST_TEST(r.status == 400u, r.body);
    BOOST_TEST(holds(r.body, "fail closed"));
    BOOST_TEST(fake.requests().size() == 7u);
}

// An https webhook goes through the gateway's TLS client, verified against the system's CA store:
// here the tests' CA, named by OpenSSL's SSL_CERT_FILE while the gateway makes its contexts. The
// TLS fake answers a chat completion, no verdict, so `fail: closed` refuses, saying why; without
// the CA the fake is never reached.
BOOST_AUTO_TEST_CASE(an_https_webhook_is_called_through_tls) {
    fake_options tls;
    tls.cert_file = CONTEXTGATE_TEST_DATA "/tls/server.crt";
    tls.key_file = CONTEXTGATE_TEST_DATA "/tls/server.key";
    fake_upstream hook(tls);
    fake_upstream fake;
    auto c = make_config(fake);
    config::guardrail_config policy;
    policy.name = "policy";
    policy.webhook =
        config::guardrail_webhook{hook.base_url() + "/chat/completions",
                                  {true, "127.0.0.1", hook.port(), "/v1/chat/completions"},
                                  config::duration(2000),
                                  false};
    c.guardrails = {policy};
    const std::string body =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]})";
    {
        setenv("SSL_CERT_FILE", CONTEXTGATE_TEST_DATA "/tls/ca.crt", 1);
        running_gateway gw(c);
        unsetenv("SSL_CERT_FILE");
        auto r = post(gw.port(), "/v1/chat/completions", body);
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(holds(r.body, "its answer's action is not allow, block or mask"), r.body);
        BOOST_TEST_REQUIRE(hook.requests().size() == 1u);
        auto asked = json::parse(hook.requests()[0].body);
        BOOST_TEST(asked.at("stage") == "request");
        BOOST_TEST(asked.at("text") == "hello");
    }
    running_gateway untrusting(c);
    auto r = post(untrusting.port(), "/v1/chat/completions", body);
    BOOST_TEST(r.status == 400u, r.body);
    BOOST_TEST(holds(r.body, "fail closed"));
    BOOST_TEST(hook.requests().size() == 1u);
    BOOST_TEST(fake.requests().empty());
}

// A webhook on the answer: a JSON answer's texts are asked about before the client has them (its
// block refuses the answer, its spans are masked); a streamed answer is not held for it.
BOOST_AUTO_TEST_CASE(a_policy_webhook_checks_json_answers) {
    const std::string ask =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]})";
    fake_upstream fake;
    auto c = make_config(fake);
    config::guardrail_config policy;
    policy.name = "policy";
    policy.on = {config::guardrail_stage::response};
    {
        fake_webhook blocking(R"({"action":"block","reason":"off-topic"})");
        policy.webhook = config::guardrail_webhook{blocking.url(),
                                                   {false, "127.0.0.1", blocking.port(), "/check"},
                                                   config::duration(2000),
                                                   true};
        c.guardrails = {policy};
        running_gateway gw(c);
        fake.script({{"the answer"}, {"the streamed answer"}});
        auto r = post(gw.port(), "/v1/chat/completions", ask);
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(holds(r.body, "guardrail_blocked"));
        BOOST_TEST(holds(r.body, "off-topic"));
        BOOST_TEST(!holds(r.body, "the answer"));
        auto asked = json::parse(blocking.last_body());
        BOOST_TEST(asked.at("stage") == "response");
        BOOST_TEST(asked.at("text") == "the answer");
        BOOST_TEST(asked.at("model") == "gpt-4o-mini");
        const std::string streamed =
            R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]})";
        auto s = post(gw.port(), "/v1/chat/completions", streamed);
        BOOST_TEST(s.status == 200u, s.body);
        BOOST_TEST(read_chat_stream(s.body).text == "the streamed answer");
        BOOST_TEST(blocking.calls() == 1);
    }
    // "the answer": "answer" is [4, 10).
    fake_webhook masking(R"({"action":"mask","spans":[[4,10]]})");
    c.guardrails[0].webhook->endpoint.port = masking.port();
    running_gateway gw(c);
    fake.script({{"the answer"}});
    auto r = post(gw.port(), "/v1/chat/completions", ask);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(json::parse(r.body).at("choices").at(0).at("message").at("content") ==
               "the [REDACTED:policy]");
}

// A cache hit is an answer too: stored for a key without the mask guardrail, it is masked for one
// with it, written as JSON or as a stream.
BOOST_AUTO_TEST_CASE(a_cache_hit_goes_through_the_answers_guardrails) {
    fake_upstream fake;
    auto c = make_config(fake);
    for (auto& u : c.upstreams) u.cache.ttl = std::chrono::minutes(10);
    c.cache.shared = true;
    c.admin.api_key = "admin-key-0123456789abcdef";
    c.admin.keys = {key_of("open", "sk-open-0123456789"),
                    key_of("guarded", "sk-guarded-0123456789")};
    auto g = secrets_guardrail(config::guardrail_action::mask, {config::guardrail_stage::response});
    g.keys = {"guarded"};
    c.guardrails = {g};
    running_gateway gw(c);
    fake.script({{split_secret()}});
    const std::string ask =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"key?"}]})";
    // The metrics are the process's: other tests' stores count too.
    auto stored_before = metric(gw.port(), "contextgate_cache_stores_total");
    auto first = post(gw.port(), "/v1/chat/completions", ask,
                      "Authorization: Bearer sk-open-0123456789\r\n");
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(holds(first.body, secret));  // that key's guardrails let it through
    auto deadline = clock::now() + 5s;
    while (metric(gw.port(), "contextgate_cache_stores_total") < stored_before + 1 &&
           clock::now() < deadline)
        std::this_thread::sleep_for(2ms);
    BOOST_TEST_REQUIRE(metric(gw.port(), "contextgate_cache_stores_total") == stored_before + 1);

    auto hit = post(gw.port(), "/v1/chat/completions", ask,
                    "Authorization: Bearer sk-guarded-0123456789\r\n");
    BOOST_TEST_REQUIRE(hit.status == 200u, hit.body);
    BOOST_TEST(hit.header("x-contextgate-cache") == "hit");
    BOOST_TEST(!holds(hit.body, secret), hit.body);
    BOOST_TEST(json::parse(hit.body).at("choices").at(0).at("message").at("content").as_string() ==
               "key: " + masked + "!");
    const std::string streamed =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"key?"}]})";
    // The same entry answers a stream: written from the stored answer, masked.
    auto streamed_hit = post(gw.port(), "/v1/chat/completions", streamed,
                             "Authorization: Bearer sk-guarded-0123456789\r\n");
    BOOST_TEST_REQUIRE(streamed_hit.status == 200u, streamed_hit.body);
    BOOST_TEST(streamed_hit.header("x-contextgate-cache") == "hit");
    BOOST_TEST(!holds(streamed_hit.body, secret), streamed_hit.body);
    auto stream = read_chat_stream(streamed_hit.body);
    BOOST_TEST(stream.error.empty(), stream.error);
    BOOST_TEST(stream.text == "key: " + masked + "!");
    BOOST_TEST(fake.requests().size() == 1u);
}

// A secret the model writes into a tool call's arguments, split across two streamed argument
// deltas (Chat Completions) or input_json_delta events (Messages), is masked, and the arguments the
// client assembles still parse.
BOOST_AUTO_TEST_CASE(a_secret_split_across_tool_call_argument_deltas_is_masked) {
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    c.guardrails = {
        secrets_guardrail(config::guardrail_action::mask, {config::guardrail_stage::response})};
    running_gateway gw(c);
    // The fakes send the arguments in two halves: {"key":"AKIAZ7Q | WERTYUIOPASDF"}.
    scripted_reply calling;
    calling.calls = {{"store", json::serialize(json::object{{"key", secret}})}};
    calling.finish_reason = "tool_calls";
    fake.script({calling, calling});

    const std::string chat =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"store"}]})";
    auto r = post(gw.port(), "/v1/chat/completions", chat);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(!holds(r.body, secret), r.body);
    auto stream = read_chat_stream(r.body);
    BOOST_TEST(stream.error.empty(), stream.error);
    BOOST_TEST(stream.done);
    BOOST_TEST_REQUIRE(stream.calls.size() == 1u);
    BOOST_TEST(stream.calls[0].at("name") == "store");
    auto arguments = json::parse(stream.calls[0].at("arguments").as_string());
    BOOST_TEST(arguments.at("key").as_string() == masked);

    const std::string messages = R"({"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,)"
                                 R"("messages":[{"role":"user","content":"store"}]})";
    auto m = post(gw.port(), "/v1/messages", messages, "anthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(m.status == 200u, m.body);
    BOOST_TEST(!holds(m.body, secret), m.body);
    BOOST_TEST(check_messages_stream(m.body) == "");
    std::string input;
    for (const auto& [name, data] : sse_events(m.body)) {
        auto event = json::parse(data);
        if (name == "content_block_delta" && event.at("delta").at("type") == "input_json_delta")
            input += event.at("delta").at("partial_json").as_string();
    }
    BOOST_TEST(json::parse(input).at("key").as_string() == masked, input);
}

config::guardrail_config moderation(bool fail_open, config::duration timeout) {
    config::guardrail_config g;
    g.name = "moderation";
    g.model_check = config::guardrail_model_check{"gpt-4o-mini", "", timeout, fail_open};
    return g;
}

// The model check (opt-in): the request's text is put to the configured model through the
// gateway's routes, and its one word decides; an answer that is neither allow nor block, or none
// in time, is decided by `fail`.
BOOST_AUTO_TEST_CASE(a_model_check_blocks_allows_and_fails_as_configured) {
    const std::string body =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"tell me a joke"}]})";
    fake_upstream fake;
    auto c = make_config(fake);
    c.guardrails = {moderation(false, config::duration(5000))};
    {
        running_gateway gw(c);
        fake.script({{"block"}});
        auto r = post(gw.port(), "/v1/chat/completions", body);
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(holds(r.body, "guardrail_blocked"));
        BOOST_TEST(holds(r.body, "`moderation`"));
        BOOST_TEST(holds(r.body, "model_check"));
        // Only the moderation call went upstream: the text as the user's message, the built-in
        // prompt as the system's.
        BOOST_TEST_REQUIRE(fake.requests().size() == 1u);
        auto asked = json::parse(fake.requests()[0].body).at("messages").as_array();
        BOOST_TEST(asked.at(0).at("role") == "system");
        BOOST_TEST(holds(asked.at(0).at("content").as_string(), "allow or block"));
        BOOST_TEST(asked.at(1).at("content") == "tell me a joke");

        fake.script({{"Allow."}, {"Why did the chicken cross the road?"}});
        auto allowed = post(gw.port(), "/v1/chat/completions", body);
        BOOST_TEST(allowed.status == 200u, allowed.body);
        BOOST_TEST(holds(allowed.body, "chicken"));
        BOOST_TEST_REQUIRE(fake.requests().size() == 3u);
        BOOST_TEST(fake.requests()[2].body == body);

        // A model that talks instead of answering: fail closed refuses.
        fake.script({{"Sure! This looks fine to me."}});
        auto garbled = post(gw.port(), "/v1/chat/completions", body);
        BOOST_TEST(garbled.status == 400u, garbled.body);
        BOOST_TEST(holds(garbled.body, "fail closed"));
        BOOST_TEST(fake.requests().size() == 4u);
        BOOST_TEST(metric(gw.port(),
                          "contextgate_guardrail_hits_total{guardrail=\"moderation\",rule="
                          "\"model_check\",stage=\"request\",action=\"block\"}") == 2);
    }
    // A model slower than the timeout: fail open lets the request go once the timeout is over.
    c.guardrails = {moderation(true, config::duration(300))};
    running_gateway gw(c);
    scripted_reply slow{"block"};
    slow.delay_ms = 5000;
    fake.script({slow, {"Here is one."}});
    auto started = clock::now();
    auto r = post(gw.port(), "/v1/chat/completions", body);
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(holds(r.body, "Here is one."));
    BOOST_TEST((clock::now() - started < 4s));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_guardrails_test
