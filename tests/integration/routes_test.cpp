// Routes with several targets (docs/routing.md), through the real gateway against fake upstreams
// that fail in the ways the routing contract names.
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <functional>
#include <thread>

namespace integration_routes_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

// An upstream like the fixture's first one, at `url`.
config::upstream_config upstream_at(const config::gateway_config& c, std::string name,
                                    std::string url) {
    auto u = c.upstreams.at(0);
    u.name = std::move(name);
    u.base_url = std::move(url);
    u.endpoint = *config::parse_base_url(u.base_url).value;
    return u;
}

// The fixture's model routed to `targets` (upstream names, in order), priority first.
void route(config::gateway_config& c, std::vector<std::string> targets, unsigned attempts = 3) {
    config::route_config r;
    r.model = "fake-model";
    r.max_attempts = attempts;
    for (const auto& name : targets) {
        std::size_t index = 0;
        while (c.upstreams.at(index).name != name) ++index;
        r.targets.push_back({name, "", 1, index});
    }
    c.routes.push_back(r);
}

std::size_t count(const std::vector<sse_event>& events, std::string_view type) {
    std::size_t n = 0;
    for (const auto& e : events) n += e.type == type;
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(routes_for_the_agent)

BOOST_AUTO_TEST_CASE(the_agent_falls_back_past_a_503_and_a_refused_connection) {
    fake_upstream backup;
    backup.script({{"From the backup."}, {"Again from the backup."}});
    context_fixture f([&](config::gateway_config& c) {
        c.upstreams.push_back(upstream_at(c, "dead", "http://127.0.0.1:1/v1"));
        c.upstreams.push_back(upstream_at(c, "backup", backup.base_url()));
        route(c, {"up0", "dead", "backup"});
    });
    f.fake.script({{"overloaded", "stop", 503, "", 0}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "hello");
    auto events = f.events(run);
    BOOST_TEST_REQUIRE(events.back().type == "run.completed");
    BOOST_TEST(events.back().data.at("output").as_string() == "From the backup.");
    // Each fallback is told, at once (no backoff between different targets).
    BOOST_TEST(count(events, "model.retry") == 2u);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
    BOOST_TEST(backup.scripted_requests().size() == 1u);
    // The failed targets are cooled: the next run goes straight to the backup.
    auto second = f.start(chat, "once more");
    auto later = f.events(second);
    BOOST_TEST_REQUIRE(later.back().type == "run.completed");
    BOOST_TEST(later.back().data.at("output").as_string() == "Again from the backup.");
    BOOST_TEST(count(later, "model.retry") == 0u);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_refused_key_leaves_its_target_out_and_a_400_is_never_retried) {
    fake_upstream backup;
    backup.script({{"Backup answers."}, {"bad temperature", "stop", 400, "", 0}});
    context_fixture f([&](config::gateway_config& c) {
        c.upstreams.push_back(upstream_at(c, "backup", backup.base_url()));
        route(c, {"up0", "backup"});
    });
    f.fake.script({{"invalid key", "stop", 401, "", 0}});
    auto chat = f.create_chat();
    auto first = f.events(f.start(chat, "hello"));
    BOOST_TEST_REQUIRE(first.back().type == "run.completed");
    BOOST_TEST(first.back().data.at("output").as_string() == "Backup answers.");
    // The request's own 400 goes back as it is: the first target is out (its key), and nothing
    // else is tried for a 400.
    auto second = f.events(f.start(chat, "again"));
    BOOST_TEST_REQUIRE(second.back().type == "run.failed");
    BOOST_TEST(std::string(second.back().data.at("error").as_string()).find("bad temperature") !=
               std::string::npos);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
    BOOST_TEST(backup.scripted_requests().size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_cancel_during_a_backoff_makes_no_further_upstream_call) {
    using namespace std::chrono_literals;
    context_fixture f([&](config::gateway_config& c) { route(c, {"up0"}, 3); });
    // The one target answers 429 with retry-after: 30 s; the run waits to try it again.
    f.fake.script({{"slow down", "stop", 429, "30", 0}, {"never asked"}});
    auto run = f.start(f.create_chat(), "hello");
    BOOST_TEST_REQUIRE(f.fake.wait_requests(1, 5s));
    auto asked = std::chrono::steady_clock::now();
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 3s));
    BOOST_TEST(f.events(run).back().type == "run.cancelled");
    BOOST_TEST(!f.fake.wait_requests(2, 1s));  // the retry never went out
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(without_a_route_a_refused_key_fails_the_call_but_not_the_upstream) {
    context_fixture f;  // no routes: the model's upstream by its globs
    f.fake.script({{"invalid key", "stop", 401, "", 0}, {"Fine now."}});
    auto chat = f.create_chat();
    auto first = f.events(f.start(chat, "hello"));
    BOOST_TEST_REQUIRE(first.back().type == "run.failed");
    BOOST_TEST(std::string(first.back().data.at("error").as_string()).find("invalid key") !=
               std::string::npos);
    // The key was fixed meanwhile: the next call goes to the upstream again.
    auto second = f.events(f.start(chat, "again"));
    BOOST_TEST_REQUIRE(second.back().type == "run.completed");
    BOOST_TEST(f.fake.scripted_requests().size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_request_its_dialect_cannot_say_fails_at_once_without_retries) {
    using namespace std::chrono_literals;
    context_fixture f([](config::gateway_config& c) {
        c.upstreams[0].provider = config::provider_kind::gemini;
        c.upstreams[0].tool_calling = config::tool_calling_mode::native;
    });
    auto chat = f.create_chat({{"model", "not a gemini name"}});
    auto asked = std::chrono::steady_clock::now();
    auto events = f.events(f.start(chat, "hello"));
    BOOST_TEST_REQUIRE(events.back().type == "run.failed");
    BOOST_TEST(std::string(events.back().data.at("error").as_string()).find("not a Gemini model") !=
               std::string::npos);
    BOOST_TEST(count(events, "model.retry") == 0u);  // no backoff, no second try
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 2s));
}

BOOST_AUTO_TEST_CASE(a_route_targets_model_goes_through_its_upstreams_model_map) {
    context_fixture f([](config::gateway_config& c) {
        auto& claude = c.upstreams[0];
        claude.provider = config::provider_kind::anthropic;
        claude.tool_calling = config::tool_calling_mode::native;
        claude.base_url = claude.base_url.substr(0, claude.base_url.size() - 3);  // no /v1
        claude.endpoint = *config::parse_base_url(claude.base_url).value;
        claude.api_key = "sk-ant-gateway";
        claude.model_map = {{"claude-alias", "claude-real-1"}};
        route(c, {"up0"});
        c.routes.back().targets[0].model = "claude-alias";
    });
    f.fake.script({{"Claude answers."}});
    auto events = f.events(f.start(f.create_chat(), "hello"));
    BOOST_TEST_REQUIRE(events.back().type == "run.completed");
    // Anthropic hears the name the upstream's model_map gives the target's model, as on /v1.
    BOOST_TEST_REQUIRE(f.fake.scripted_requests().size() == 1u);
    auto body = json::parse(f.fake.scripted_requests().at(0));
    BOOST_TEST(body.at("model").as_string() == "claude-real-1");
}

BOOST_AUTO_TEST_CASE(attempts_stop_at_max_attempts) {
    fake_upstream second;
    second.script({{"down", "stop", 502, "", 0}, {"never asked"}});
    context_fixture f([&](config::gateway_config& c) {
        c.upstreams.push_back(upstream_at(c, "second", second.base_url()));
        route(c, {"up0", "second"}, 2);
    });
    f.fake.script({{"down", "stop", 500, "", 0}, {"never asked"}});
    auto events = f.events(f.start(f.create_chat(), "hello"));
    BOOST_TEST_REQUIRE(events.back().type == "run.failed");
    BOOST_TEST(std::string(events.back().data.at("error").as_string()).find("502") !=
               std::string::npos);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
    BOOST_TEST(second.scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

// The /v1 face: the attempt loop and its commit point.
namespace {

struct routed_gateway {
    std::vector<std::unique_ptr<fake_upstream>> fakes;
    std::optional<running_gateway> gateway;

    // Upstreams up0… on the fakes, then `dead` (a refused connection); the route "smart" over
    // `targets` (names), each hearing `heard` when set; `adjust` changes the configuration last.
    routed_gateway(std::size_t count, std::vector<std::string> targets, std::string heard = {},
                   const std::function<void(config::gateway_config&)>& adjust = {}) {
        std::vector<std::string> urls;
        for (std::size_t i = 0; i < count; ++i) {
            fakes.push_back(std::make_unique<fake_upstream>());
            urls.push_back(fakes.back()->base_url());
        }
        auto c = make_config(urls);
        c.upstreams.push_back(upstream_at(c, "dead", "http://127.0.0.1:1/v1"));
        config::route_config r;
        r.model = "smart";
        r.max_attempts = 3;
        for (const auto& name : targets) {
            std::size_t index = 0;
            while (c.upstreams.at(index).name != name) ++index;
            r.targets.push_back({name, heard, 1, index});
        }
        c.routes.push_back(r);
        c.admin.api_key = admin_key;
        if (adjust) adjust(c);
        gateway.emplace(c);
    }

    static constexpr const char* admin_key = "admin-key-0123456789";

    response get(std::string_view path) {
        client c(gateway->port());
        return c.request(make_request("GET", path, "",
                                      std::string("Authorization: Bearer ") + admin_key + "\r\n"));
    }

    // `headers`: more request fields, each line ending with "\r\n".
    response chat(bool stream = false, std::string_view headers = {}) {
        std::string body = R"({"model":"smart","messages":[{"role":"user","content":"hi"}])";
        if (stream)
            body += R"(,"stream":true})";
        else
            body += "}";
        client c(gateway->port());
        return c.request(make_request("POST", "/v1/chat/completions", body,
                                      "Content-Type: application/json\r\n" + std::string(headers)));
    }

    // The state /admin/health gives target `i` of the route.
    std::string state_of(std::size_t i) {
        auto health = json::parse(get("/admin/health").body);
        return std::string(health.at("routes").at(0).at("targets").at(i).at("state").as_string());
    }
};

}  // namespace

// The first upstream as Anthropic (the fake speaks it at its root), under our key.
static void anthropic_first(config::gateway_config& c) {
    auto& claude = c.upstreams[0];
    claude.provider = config::provider_kind::anthropic;
    claude.base_url = claude.base_url.substr(0, claude.base_url.size() - 3);  // no /v1
    claude.endpoint = *config::parse_base_url(claude.base_url).value;
    claude.api_key = "sk-ant-gateway";
    claude.auth = config::auth_mode::replace;
}

BOOST_AUTO_TEST_SUITE(routes_for_v1)

BOOST_AUTO_TEST_CASE(a_json_request_falls_back_past_a_refused_connection_and_a_503) {
    routed_gateway g(2, {"dead", "up0", "up1"}, "gpt-heard");
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}});
    g.fakes[1]->script({{"Hello from up1."}});
    auto r = g.chat();
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.header("x-contextgate-attempts") == "3");
    BOOST_TEST(json::parse(r.body).at("choices").at(0).at("message").at("content").as_string() ==
               "Hello from up1.");
    // Each target heard the request with only its model name changed.
    BOOST_TEST(g.fakes[1]->scripted_requests().at(0) ==
               R"({"model":"gpt-heard","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
    // What operators see: each target's state, and the attempts and fallbacks counted.
    auto health = json::parse(g.get("/admin/health").body);
    const auto& targets = health.at("routes").at(0).at("targets").as_array();
    BOOST_TEST_REQUIRE(targets.size() == 3u);
    BOOST_TEST(targets[0].at("upstream").as_string() == "dead");
    BOOST_TEST(targets[0].at("state").as_string() == "cooled");
    BOOST_TEST(targets[0].at("cooled_for_ms").as_int64() > 0);
    BOOST_TEST(targets[1].at("state").as_string() == "cooled");
    BOOST_TEST(targets[2].at("state").as_string() == "healthy");
    BOOST_TEST(targets[2].at("model").as_string() == "gpt-heard");
    BOOST_TEST(g.get("/admin/health").status == 200u);
    client anonymous(g.gateway->port());
    BOOST_TEST(anonymous.request(make_request("GET", "/admin/health", "", "")).status == 401u);
    auto metrics = g.get("/metrics").body;
    // (The series are the process's: other tests add to them, so they are looked for, not
    // counted.)
    BOOST_TEST(
        metrics.find(
            R"(contextgate_route_fallbacks_total{route="smart",upstream="up1",reason="failed"} )") !=
        std::string::npos);
    // Read at the scrape from this gateway's board: dead and up0 are cooled now.
    BOOST_TEST(metrics.find(R"(contextgate_route_targets_out{upstream="dead",state="cooled"} 1)") !=
               std::string::npos);
    BOOST_TEST(metrics.find(R"(contextgate_route_targets_out{upstream="up1",state="cooled"} 0)") !=
               std::string::npos);
    BOOST_TEST(
        metrics.find(R"(contextgate_route_attempts_total{upstream="up0",outcome="failed"} )") !=
        std::string::npos);
    BOOST_TEST(metrics.find(R"(contextgate_route_cooldowns_total{upstream="dead"} )") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_400_is_the_clients_answer_and_nothing_else_is_tried) {
    routed_gateway g(2, {"up0", "up1"});
    g.fakes[0]->script({{"Invalid value for temperature", "stop", 400, "", 0}});
    g.fakes[1]->script({{"never"}});
    auto r = g.chat();
    BOOST_TEST(r.status == 400u);
    BOOST_TEST(r.body.find("Invalid value for temperature") != std::string::npos);
    BOOST_TEST(g.fakes[1]->scripted_requests().empty());
}

BOOST_AUTO_TEST_CASE(when_every_attempt_fails_the_client_gets_the_last_failure_once) {
    routed_gateway g(2, {"up0", "up1"});
    g.fakes[0]->script(
        {{"first down", "stop", 502, "", 0}, {"first down again", "stop", 502, "", 0}});
    g.fakes[1]->script({{"second down", "stop", 503, "", 0}, {"never"}});
    auto r = g.chat();
    // Three attempts (max_attempts): up0, up1, then up0 again, the target cooled first, since
    // nothing else is left; never a fourth.
    BOOST_TEST(r.status == 502u);
    BOOST_TEST(r.body.find("first down again") != std::string::npos);
    BOOST_TEST(r.header("x-contextgate-attempts") == "3");
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 2u);
    BOOST_TEST(g.fakes[1]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_502_the_gateway_makes_on_a_route_says_how_many_attempts_it_made) {
    // No target answered at all (refused connections): the gateway's own 502, in the client's
    // envelope, still carries the route's fields, as an upstream's failure does.
    routed_gateway g(1, {"dead"});
    auto r = g.chat();
    BOOST_TEST(r.status == 502u, r.body);
    BOOST_TEST(r.header("x-contextgate-attempts") == "3");
    BOOST_TEST(r.header("x-contextgate-upstream") == "dead");
    client c(g.gateway->port());
    auto m = c.request(make_request(
        "POST", "/v1/messages",
        R"({"model":"smart","max_tokens":8,"messages":[{"role":"user","content":"hi"}]})",
        "Content-Type: application/json\r\nanthropic-version: 2023-06-01\r\n"));
    BOOST_TEST(m.status == 502u, m.body);
    BOOST_TEST(json::parse(m.body).at("type") == "error");  // Anthropic's envelope
    BOOST_TEST(m.header("x-contextgate-attempts") == "3");
}

BOOST_AUTO_TEST_CASE(a_429_cools_its_target_for_its_retry_after) {
    routed_gateway g(2, {"up0", "up1"});
    g.fakes[0]->script({{"slow down", "stop", 429, "30", 0}, {"never"}});
    g.fakes[1]->script({{"one"}, {"two"}});
    BOOST_TEST(g.chat().header("x-contextgate-upstream") == "up1");
    auto again = g.chat();
    BOOST_TEST(again.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(again.header("x-contextgate-attempts") == "1");  // up0 is skipped: cooled
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_stream_that_begins_with_an_error_falls_back_and_the_client_sees_one_stream) {
    routed_gateway g(2, {"up0", "up1"});
    scripted_reply broken{"", "stop", 200, "", 0};
    broken.stream_error = "The server had an error while processing your request.";
    g.fakes[0]->script({broken});
    g.fakes[1]->script({{"Streamed by up1."}});
    auto r = g.chat(true);
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.body.find("error") == std::string::npos, r.body);
    BOOST_TEST(r.body.find("Streamed") != std::string::npos);
    // One lifecycle: one role chunk, one [DONE].
    BOOST_TEST(r.body.find("\"role\"") == r.body.rfind("\"role\""));
    BOOST_TEST(r.body.find("[DONE]") == r.body.rfind("[DONE]"));
}

BOOST_AUTO_TEST_CASE(a_stream_cut_after_content_is_never_replayed) {
    routed_gateway g(2, {"up0", "up1"});
    scripted_reply cut{"A long answer that is cut.", "stop", 200, "", 0};
    cut.cut_after = 2;  // the role and the first half of the text
    g.fakes[0]->script({cut});
    g.fakes[1]->script({{"never"}});
    auto r = g.chat(true);
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(r.body.find("A long an") != std::string::npos);
    // The protocol's terminal error, no [DONE], and no second upstream.
    BOOST_TEST(r.body.find("event: error") != std::string::npos, r.body);
    BOOST_TEST(r.body.find("[DONE]") == std::string::npos);
    BOOST_TEST(g.fakes[1]->scripted_requests().empty());
}

// A stream held back until its first content (not the route's last attempt) has its time to
// first token taken when that content came, not when the relay next read from the upstream: here
// the upstream is silent for 400 ms after its first content.
BOOST_AUTO_TEST_CASE(a_held_stream_times_its_first_token_when_it_came) {
    routed_gateway g(1, {"up0"});
    // The series are the process's (other tests add to them): read before and after.
    auto sample = [&](std::string_view which) {
        auto series = "gen_ai_server_time_to_first_token_seconds_" + std::string(which) +
                      R"({upstream="up0",gen_ai_provider_name="openai",)"
                      R"(gen_ai_request_model="smart"} )";
        auto metrics = g.get("/metrics").body;
        auto at = metrics.find(series);
        return at == std::string::npos ? 0.0 : std::stod(metrics.substr(at + series.size()));
    };
    auto count = sample("count");
    auto sum = sample("sum");
    // Writes: the role, the first content, then 400 ms of silence before the rest.
    auto r = g.chat(true, "x-fake-stall-after: 2\r\nx-fake-stall-ms: 400\r\n");
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.complete);
    // Counted as the request settles, which may be just after the client read its last byte.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (sample("count") == count && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    BOOST_TEST(sample("count") == count + 1);
    BOOST_TEST(sample("sum") - sum < 0.3);
}

BOOST_AUTO_TEST_CASE(a_translated_target_that_answers_529_falls_back_before_writing) {
    // up0 is Anthropic (translated): overloaded, then the OpenAI-compatible up1 answers.
    routed_gateway g(2, {"up0", "up1"}, "claude-sonnet-4-5", anthropic_first);
    g.fakes[0]->script({{"Overloaded", "stop", 529, "", 0}, {"never"}});
    g.fakes[1]->script({{"From the OpenAI-compatible target."}});
    auto r = g.chat();
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.body.find("Overloaded") == std::string::npos);
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_translated_stream_that_fails_before_content_falls_back_unseen) {
    // up0 is Anthropic: its stream is overloaded after message_start; nothing of it reaches the
    // client, which gets one clean stream from up1.
    routed_gateway g(2, {"up0", "up1"}, "claude-sonnet-4-5", anthropic_first);
    scripted_reply overloaded{"", "stop", 200, "", 0};
    overloaded.stream_error = "Overloaded";
    g.fakes[0]->script({overloaded, {"never"}});
    g.fakes[1]->script({{"Streamed by up1."}});
    auto r = g.chat(true);
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.body.find("Overloaded") == std::string::npos, r.body);
    BOOST_TEST(r.body.find("Streamed") != std::string::npos);
    BOOST_TEST(r.body.find("\"role\"") == r.body.rfind("\"role\""));
    BOOST_TEST(r.body.find("[DONE]") == r.body.rfind("[DONE]"));
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_translated_stream_is_the_clients_once_content_came) {
    // up0 (Anthropic) streams text and is cut (the fake's canned answer, steered by the header):
    // the client keeps what it got and an error event, and up1 is never asked.
    routed_gateway g(2, {"up0", "up1"}, "claude-sonnet-4-5", anthropic_first);
    g.fakes[0]->script({{"Claude starts to answer."}});
    g.fakes[1]->script({{"never"}});
    client c(g.gateway->port());
    auto r = c.request(make_request(
        "POST", "/v1/chat/completions",
        R"({"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]})",
        "Content-Type: application/json\r\nx-fake-reset-after: 4\r\n"));
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(r.body.find("Hello from the") != std::string::npos, r.body);
    BOOST_TEST(r.body.find("event: error") != std::string::npos, r.body);
    BOOST_TEST(r.body.find("[DONE]") == std::string::npos);
    BOOST_TEST(g.fakes[1]->scripted_requests().empty());
}

BOOST_AUTO_TEST_CASE(a_translated_answer_carries_the_routes_fields) {
    routed_gateway g(1, {"up0"}, "claude-sonnet-4-5", anthropic_first);
    g.fakes[0]->script({{"Claude answers."}});
    auto r = g.chat();
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(json::parse(r.body).at("choices").at(0).at("message").at("content").as_string() ==
               "Claude answers.");
}

BOOST_AUTO_TEST_CASE(a_reset_before_the_head_and_a_stalled_head_fall_back) {
    using namespace std::chrono_literals;
    routed_gateway g(3, {"up0", "up1", "up2"}, {}, [](config::gateway_config& c) {
        c.routes.back().first_byte_timeout = std::chrono::milliseconds(300);
    });
    scripted_reply reset{"never", "stop", 200, "", 0};
    reset.reset_before_head = true;
    g.fakes[0]->script({reset});
    g.fakes[1]->script({{"too late", "stop", 200, "", 30'000}});  // no head within 300 ms
    g.fakes[2]->script({{"From up2."}});
    auto asked = std::chrono::steady_clock::now();
    auto r = g.chat(true);
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up2");
    BOOST_TEST(r.header("x-contextgate-attempts") == "3");
    BOOST_TEST(r.body.find("From") != std::string::npos);
    BOOST_TEST(r.body.find("too late") == std::string::npos);
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 10s));
    for (auto& fake : g.fakes) BOOST_TEST(fake->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_deadline_bounds_the_whole_request) {
    using namespace std::chrono_literals;
    // No first_byte_timeout of its own: the deadline (600 ms) cuts the wait for up0's head, and
    // leaves no time for up1.
    routed_gateway g(2, {"up0", "up1"}, {}, [](config::gateway_config& c) {
        c.routes.back().deadline = std::chrono::milliseconds(600);
    });
    g.fakes[0]->script({{"too late", "stop", 200, "", 30'000}});
    g.fakes[1]->script({{"never"}});
    auto asked = std::chrono::steady_clock::now();
    auto r = g.chat();
    auto took = std::chrono::steady_clock::now() - asked;
    BOOST_TEST(r.status == 504u, r.body);
    BOOST_TEST((took >= 550ms && took < 5s));
    BOOST_TEST(g.fakes[1]->requests().empty());
}

BOOST_AUTO_TEST_CASE(the_same_target_is_retried_after_a_backoff) {
    using namespace std::chrono_literals;
    routed_gateway g(1, {"up0"});
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}, {"Second time lucky."}});
    auto asked = std::chrono::steady_clock::now();
    auto r = g.chat();
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.body.find("Second time lucky.") != std::string::npos);
    // Nothing else was left, so the target that failed was asked again, after 500 ms.
    BOOST_TEST((std::chrono::steady_clock::now() - asked >= 450ms));
}

BOOST_AUTO_TEST_CASE(a_client_that_hangs_up_during_a_backoff_ends_the_attempts) {
    using namespace std::chrono_literals;
    routed_gateway g(1, {"up0"});
    // The one target asks for a second's pause; the client leaves during it.
    g.fakes[0]->script({{"slow down", "stop", 429, "1", 0}, {"never asked"}});
    {
        client c(g.gateway->port());
        c.send(make_request("POST", "/v1/chat/completions",
                            R"({"model":"smart","messages":[{"role":"user","content":"hi"}]})",
                            "Content-Type: application/json\r\n"));
        BOOST_TEST_REQUIRE(g.fakes[0]->wait_requests(1, 5s));
        c.close();
    }
    // The request ends (the target has nothing in flight), and the retry never goes out.
    auto in_flight = [&] {
        auto health = json::parse(g.get("/admin/health").body);
        return health.at("routes").at(0).at("targets").at(0).at("in_flight").as_int64();
    };
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (in_flight() != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    BOOST_TEST(in_flight() == 0);
    BOOST_TEST(!g.fakes[0]->wait_requests(2, 2s));
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(only_the_winning_attempt_is_charged) {
    using namespace std::chrono_literals;
    const std::string secret = "sk-routed-0123456789";
    routed_gateway g(2, {"up0", "up1"}, {}, [&](config::gateway_config& c) {
        config::virtual_key k;
        k.id = "cfg-routed";
        k.name = "routed";
        k.digest = config::key_digest(secret);
        k.budget_tokens = 1'000'000;
        c.admin.keys = {k};
    });
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}});
    g.fakes[1]->script({{"Charged once."}});
    client c(g.gateway->port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions",
                     R"({"model":"smart","messages":[{"role":"user","content":"hi"}]})",
                     "Content-Type: application/json\r\nAuthorization: Bearer " + secret + "\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    // The ledger records the request once, with the usage the answering target reported (1 in,
    // 1 out), nothing for the failed attempt.
    std::array<std::int64_t, 3> totals{};
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (totals[0] < 1 && std::chrono::steady_clock::now() < deadline) {
        totals = {};
        auto usage = json::parse(g.get("/admin/usage?key=cfg-routed").body);
        for (const auto& row : usage.at("data").as_array()) {
            totals[0] += row.at("requests").as_int64();
            totals[1] += row.at("input_tokens").as_int64();
            totals[2] += row.at("output_tokens").as_int64();
        }
    }
    BOOST_TEST(totals[0] == 1);
    BOOST_TEST(totals[1] == 1);
    BOOST_TEST(totals[2] == 1);
}

BOOST_AUTO_TEST_CASE(messages_fall_back_between_anthropic_targets_byte_for_byte) {
    // Claude Code's /v1/messages through a route of two Anthropic upstreams: the first is
    // overloaded, the second answers; it hears the client's bytes with only the model renamed.
    routed_gateway g(2, {"up0", "up1"}, "claude-sonnet-4-5", [](config::gateway_config& c) {
        anthropic_first(c);
        auto& second = c.upstreams[1];
        second.provider = config::provider_kind::anthropic;
        second.base_url = second.base_url.substr(0, second.base_url.size() - 3);
        second.endpoint = *config::parse_base_url(second.base_url).value;
        second.api_key = "sk-ant-second";
        second.auth = config::auth_mode::replace;
    });
    g.fakes[0]->script({{"Overloaded", "stop", 529, "", 0}, {"never"}});
    g.fakes[1]->script({{"From the second Claude."}});
    const std::string body =
        R"({"model":"smart","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})";
    client c(g.gateway->port());
    auto r = c.request(make_request("POST", "/v1/messages", body,
                                    "Content-Type: application/json\r\n"
                                    "anthropic-version: 2023-06-01\r\n"));
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.body.find("From the second Claude.") != std::string::npos, r.body);
    BOOST_TEST(r.body.find("Overloaded") == std::string::npos);
    BOOST_TEST(
        g.fakes[1]->scripted_requests().at(0) ==
        R"({"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(g.fakes[1]->requests().back().header("x-api-key") == "sk-ant-second");
}

BOOST_AUTO_TEST_CASE(messages_fall_back_from_anthropic_to_a_translated_target) {
    // Claude Code's route: Claude first, an OpenAI-compatible model behind it. Claude is
    // overloaded; the second target answers in Messages, translated, with its anthropic-*
    // fields left behind.
    routed_gateway g(2, {"up0", "up1"}, "", anthropic_first);
    g.fakes[0]->script({{"Overloaded", "stop", 529, "", 0}});
    g.fakes[1]->script({{"From the open model."}});
    client c(g.gateway->port());
    auto r = c.request(make_request(
        "POST", "/v1/messages",
        R"({"model":"smart","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})",
        "Content-Type: application/json\r\nanthropic-version: 2023-06-01\r\n"
        "anthropic-beta: fine-grained-tool-streaming-2025-05-14\r\n"));
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    auto answer = json::parse(r.body).as_object();
    BOOST_TEST(answer.at("type") == "message");
    BOOST_TEST(answer.at("content").as_array().at(0).at("text") == "From the open model.");
    BOOST_TEST(answer.at("stop_reason") == "end_turn");
    auto heard = g.fakes[1]->requests().back();
    BOOST_TEST(heard.target == "/v1/chat/completions");
    BOOST_TEST(heard.header("anthropic-version").empty());
    BOOST_TEST(heard.header("anthropic-beta").empty());
}

BOOST_AUTO_TEST_CASE(a_gemini_client_on_a_route_is_heard_under_each_targets_model) {
    // The request is read once and encoded for each target with the target's model: a Gemini
    // path names the route, the target names the model its upstream knows.
    routed_gateway g(2, {"up0", "up1"}, "gpt-heard");
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}});
    g.fakes[1]->script({{"From the second."}});
    client c(g.gateway->port());
    auto r = c.request(make_request("POST", "/v1beta/models/smart:generateContent",
                                    R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
                                    "Content-Type: application/json\r\n"));
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    for (const auto& fake : g.fakes) {
        BOOST_TEST_REQUIRE(fake->requests().size() == 1u);
        auto heard = json::parse(fake->requests().back().body).as_object();
        BOOST_TEST(heard.at("model") == "gpt-heard");
    }
    auto answer = json::parse(r.body).as_object();
    BOOST_TEST(answer.at("candidates").at(0).at("content").at("parts").at(0).at("text") ==
               "From the second.");
}

BOOST_AUTO_TEST_CASE(a_gemini_target_of_a_gemini_client_hears_the_targets_model_in_its_path) {
    // Gemini names the model in the path, not the body: a forwarded attempt renames it there.
    fake_upstream fake;
    auto c = three_providers(fake, config::auth_mode::replace);
    config::route_config r;
    r.model = "smart";
    r.targets.push_back({c.upstreams[2].name, "gemini-real", 1, 2});
    c.routes.push_back(r);
    running_gateway gw(c);
    client cl(gw.port());
    auto answer =
        cl.request(make_request("POST", "/v1beta/models/smart:generateContent?alt=json",
                                R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
                                "Content-Type: application/json\r\n"));
    BOOST_TEST(answer.status == 200u, answer.body);
    BOOST_TEST_REQUIRE(fake.requests().size() == 1u);
    BOOST_TEST(fake.requests().back().target ==
               "/v1beta/models/gemini-real:generateContent?alt=json");
}

// Review round four: what one client's credentials or request provoke is that client's answer;
// only failures that belong to the target change its health for everyone.
BOOST_AUTO_TEST_CASE(a_refusal_of_one_clients_own_key_leaves_the_target_in_service_for_all) {
    routed_gateway g(2, {"up0", "up1"});  // auth: forward, no key of the gateway's own
    g.fakes[0]->script({{"Incorrect API key provided", "stop", 401, "", 0},
                        {"Flagged by moderation", "stop", 403, "", 0},
                        {"Welcome, valid key."}});
    g.fakes[1]->script({{"never"}});
    auto junk = g.chat(false, "Authorization: Bearer sk-junk\r\n");
    BOOST_TEST(junk.status == 401u, junk.body);  // the client's answer, as it is
    BOOST_TEST(junk.body.find("Incorrect API key") != std::string::npos);
    auto flagged = g.chat(false, "Authorization: Bearer sk-valid\r\n");
    BOOST_TEST(flagged.status == 403u, flagged.body);
    BOOST_TEST(g.state_of(0) == "healthy");
    auto valid = g.chat(false, "Authorization: Bearer sk-valid\r\n");
    BOOST_TEST(valid.status == 200u, valid.body);
    BOOST_TEST(valid.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(valid.body.find("Welcome, valid key.") != std::string::npos);
    BOOST_TEST(g.fakes[1]->scripted_requests().empty());  // nothing was retried elsewhere
}

BOOST_AUTO_TEST_CASE(a_refusal_of_the_gateways_own_key_takes_the_target_out_for_max_cooldown) {
    routed_gateway g(2, {"up0", "up1"}, {}, [](config::gateway_config& c) {
        c.upstreams[0].api_key = "sk-gateway-0";
        c.upstreams[0].auth = config::auth_mode::replace;
    });
    g.fakes[0]->script({{"Incorrect API key provided", "stop", 401, "", 0}, {"never"}});
    g.fakes[1]->script({{"From up1."}, {"From up1 again."}});
    auto r = g.chat();
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    auto health = json::parse(g.get("/admin/health").body);
    const auto& first = health.at("routes").at(0).at("targets").at(0);
    BOOST_TEST(first.at("state").as_string() == "unusable");
    // Not "until restart": it ends with max_cooldown (5 minutes by default).
    auto left = first.at("unusable_for_ms").as_int64();
    BOOST_TEST((left > 290'000 && left <= 300'000), left);
    BOOST_TEST(g.chat().header("x-contextgate-upstream") == "up1");
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_429_to_one_clients_own_key_cools_nothing) {
    routed_gateway g(2, {"up0", "up1"});
    g.fakes[0]->script(
        {{"Rate limit reached for your organization", "stop", 429, "300", 0}, {"Back at up0."}});
    g.fakes[1]->script({{"From up1."}});
    auto limited = g.chat(false, "Authorization: Bearer sk-client-a\r\n");
    BOOST_TEST(limited.status == 200u, limited.body);  // this request went on to up1
    BOOST_TEST(limited.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(g.state_of(0) == "healthy");
    auto other = g.chat(false, "Authorization: Bearer sk-client-b\r\n");
    BOOST_TEST(other.header("x-contextgate-upstream") == "up0");
    BOOST_TEST(other.body.find("Back at up0.") != std::string::npos, other.body);
}

BOOST_AUTO_TEST_CASE(the_deadline_bounds_the_wait_for_a_streams_first_content) {
    using namespace std::chrono_literals;
    // up0 answers 200 and sends its role chunk (no content), then nothing: held back, the wait
    // ends with the deadline (1 s), not with the upstream's idle timeout (5 s).
    routed_gateway g(2, {"up0", "up1"}, {},
                     [](config::gateway_config& c) { c.routes.back().deadline = 1s; });
    auto asked = std::chrono::steady_clock::now();
    auto r = g.chat(true, "x-fake-stall-after: 1\r\n");
    auto took = std::chrono::steady_clock::now() - asked;
    BOOST_TEST(r.status == 504u, r.body);
    BOOST_TEST(r.body.find("deadline") != std::string::npos, r.body);
    BOOST_TEST((took >= 900ms && took < 3s));
    BOOST_TEST(g.fakes[1]->requests().empty());
}

// up1 as an Anthropic upstream (the fake speaks it at its root) with `key` of its own, if any,
// under auth: forward.
static auto anthropic_second(std::string key) {
    return [key](config::gateway_config& c) {
        auto& claude = c.upstreams[1];
        claude.provider = config::provider_kind::anthropic;
        claude.base_url = claude.base_url.substr(0, claude.base_url.size() - 3);  // no /v1
        claude.endpoint = *config::parse_base_url(claude.base_url).value;
        claude.api_key = key;
        c.routes.back().targets[1].model = "claude-sonnet-4-5";
    };
}

BOOST_AUTO_TEST_CASE(a_forwarded_key_never_reaches_another_provider) {
    routed_gateway g(2, {"up0", "up1"}, {}, anthropic_second("sk-ant-gateway"));
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}});
    g.fakes[1]->script({{"Claude answers."}});
    auto r = g.chat(false, "Authorization: Bearer sk-client-openai\r\n");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    // The OpenAI target heard the client's key; the Anthropic one the gateway's, never the
    // client's.
    BOOST_TEST(g.fakes[0]->requests().at(0).header("authorization") == "Bearer sk-client-openai");
    auto claude = g.fakes[1]->requests().at(0);
    BOOST_TEST(claude.header("x-api-key") == "sk-ant-gateway");
    BOOST_TEST(claude.raw.find("sk-client-openai") == std::string::npos, claude.raw);
}

BOOST_AUTO_TEST_CASE(a_target_of_another_provider_without_a_key_is_skipped_with_a_reason) {
    routed_gateway g(2, {"up0", "up1"}, {}, anthropic_second(""));
    g.fakes[0]->script({{"overloaded", "stop", 503, "", 0}});
    g.fakes[1]->script({{"never"}});
    auto r = g.chat(false, "Authorization: Bearer sk-client-openai\r\n");
    // The client gets the failure of the target that could be asked.
    BOOST_TEST(r.status == 503u, r.body);
    BOOST_TEST(r.body.find("overloaded") != std::string::npos, r.body);
    BOOST_TEST(g.fakes[1]->requests().empty());
    // Without a failure before it, the reason is the answer.
    routed_gateway only(2, {"up1", "up0"}, {}, [](config::gateway_config& c) {
        anthropic_second("")(c);
        c.routes.back().targets[0].model = "claude-sonnet-4-5";
        c.routes.back().targets[1].model.clear();
        c.routes.back().max_attempts = 1;
    });
    auto refused = only.chat(false, "Authorization: Bearer sk-client-openai\r\n");
    BOOST_TEST(refused.status == 400u, refused.body);
    BOOST_TEST(refused.body.find("never goes to another provider") != std::string::npos,
               refused.body);
    BOOST_TEST(only.fakes[1]->requests().empty());
}

BOOST_AUTO_TEST_CASE(a_post_sent_again_after_a_reset_counts_as_an_attempt) {
    routed_gateway g(1, {"up0"}, {},
                     [](config::gateway_config& c) { c.routes.back().max_attempts = 2; });
    client c(g.gateway->port());
    // A first request leaves a pooled connection; the second meets resets on it and on a new one.
    BOOST_TEST(c.request(make_request("POST", "/v1/chat/completions",
                                      R"({"model":"smart","messages":[]})", ""))
                   .status == 200u);
    auto before = g.fakes[0]->requests().size();
    auto r =
        c.request(make_request("POST", "/v1/chat/completions", R"({"model":"smart","messages":[]})",
                               "x-fake-mode: reset\r\n"));
    BOOST_TEST(r.status == 502u, r.body);
    // max_attempts: 2 means two deliveries, the resend included.
    BOOST_TEST(g.fakes[0]->requests().size() - before == 2u);
}

BOOST_AUTO_TEST_CASE(a_request_in_a_backoff_at_the_end_of_the_drain_gets_a_503) {
    using namespace std::chrono_literals;
    routed_gateway g(1, {"up0"}, {},
                     [](config::gateway_config& c) { c.server.drain_time = 300ms; });
    g.fakes[0]->script({{"overloaded", "stop", 503, "30", 0}, {"never"}});
    client c(g.gateway->port());
    c.send(make_request("POST", "/v1/chat/completions",
                        R"({"model":"smart","messages":[{"role":"user","content":"hi"}]})",
                        "Content-Type: application/json\r\n"));
    BOOST_TEST_REQUIRE(g.fakes[0]->wait_requests(1, 5s));
    auto asked = std::chrono::steady_clock::now();
    g.gateway->server().stop();
    auto r = c.read_response();
    BOOST_TEST(r.status == 503u, r.body);
    BOOST_TEST(r.body.find("shutting_down") != std::string::npos, r.body);
    BOOST_TEST((std::chrono::steady_clock::now() - asked < 2s));
    g.gateway->server().wait();
    BOOST_TEST(g.fakes[0]->scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_translated_targets_context_window_refusal_moves_to_on_context_window) {
    // up0 is Anthropic (translated for this Chat Completions client): the prompt is too long for
    // it, and the route's on_context_window target (up1) takes the request.
    routed_gateway g(2, {"up0"}, "claude-sonnet-4-5", [](config::gateway_config& c) {
        anthropic_first(c);
        c.routes.back().on_context_window.push_back({"up1", "gpt-long", 1, 1});
    });
    g.fakes[0]->script(
        {{"prompt is too long: 208310 tokens > 200000 maximum", "stop", 400, "", 0}, {"never"}});
    g.fakes[1]->script({{"From the long-context target."}});
    auto r = g.chat();
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-upstream") == "up1");
    BOOST_TEST(r.body.find("From the long-context target.") != std::string::npos, r.body);
    BOOST_TEST(json::parse(g.fakes[1]->scripted_requests().at(0)).at("model").as_string() ==
               "gpt-long");
    // Not a failure of up0's: it stays in service.
    BOOST_TEST(g.state_of(0) == "healthy");
}

BOOST_AUTO_TEST_CASE(a_model_without_a_route_goes_where_it_went_before) {
    routed_gateway g(1, {"up0"});
    client c(g.gateway->port());
    auto r =
        c.request(make_request("POST", "/v1/chat/completions",
                               R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})",
                               "Content-Type: application/json\r\n"));
    BOOST_TEST(r.status == 200u);  // scripted mode is off: the canned answer
    BOOST_TEST(r.header("x-contextgate-upstream").empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_routes_test
