// The health of every upstream (docs/routing.md, "What the Health page says"): what requests
// without a route report, what the active probes find, and how GET /admin/health says it.
#include "tests/integration/context_fixture.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>
#include <thread>

namespace integration_health_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

constexpr const char* admin_key = "admin-key-0123456789";

config::gateway_config with_admin(config::gateway_config c) {
    c.admin.api_key = admin_key;
    return c;
}

json::object health_of(const running_gateway& g) {
    client c(g.port());
    auto r = c.request(make_request("GET", "/admin/health", "",
                                    std::string("Authorization: Bearer ") + admin_key + "\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    return json::parse(r.body).as_object();
}

// The entry of upstream `name` in GET /admin/health.
json::object upstream_health(const running_gateway& g, std::string_view name) {
    auto health = health_of(g);
    for (const auto& u : health.at("upstreams").as_array())
        if (u.at("name").as_string() == name) return u.as_object();
    BOOST_FAIL("no upstream " << name << " in /admin/health");
    return {};
}

std::string text(const json::object& o, std::string_view key) {
    const auto& v = o.at(key);
    return v.is_string() ? std::string(v.as_string()) : std::string();
}

// Asks /admin/health until `done` holds of upstream `name`'s entry, for at most `limit`.
json::object await_upstream(const running_gateway& g, std::string_view name,
                            const std::function<bool(const json::object&)>& done,
                            std::chrono::milliseconds limit = 5s) {
    auto until = clock::now() + limit;
    auto u = upstream_health(g, name);
    while (!done(u) && clock::now() < until) {
        std::this_thread::sleep_for(10ms);
        u = upstream_health(g, name);
    }
    return u;
}

response chat(const running_gateway& g, std::string_view model = "fake-model") {
    client c(g.port());
    return c.request(make_request(
        "POST", "/v1/chat/completions",
        R"({"model":")" + std::string(model) + R"(","messages":[{"role":"user","content":"hi"}]})",
        "Content-Type: application/json\r\n"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(health_of_upstreams)

// A beginner's configuration: one upstream, no routes. Its failure shows, with what failed and
// when; its cooldown ending does not make it healthy; and it is never refused for its health.
BOOST_AUTO_TEST_CASE(an_upstream_outside_routes_shows_its_failures_and_is_never_refused) {
    fake_upstream fake;
    auto c = with_admin(make_config(fake));
    c.health.cooldown = config::duration(300);
    running_gateway g(c);
    auto before = upstream_health(g, c.upstreams[0].name);
    BOOST_TEST(text(before, "health") == "unknown");
    BOOST_TEST(before.at("last_error").is_null());
    BOOST_TEST(before.at("probe_interval_ms").is_null());

    fake.script({{.content = "", .status = 503}, {.content = "back"}});
    BOOST_TEST(chat(g).status == 503u);
    // (Told once the answer is relayed: the client may ask before.)
    auto failed = await_upstream(g, c.upstreams[0].name, [](const json::object& u) {
        return text(u, "health") != "unknown";
    });
    BOOST_TEST(text(failed, "health") == "cooling");
    BOOST_TEST(text(failed, "last_error") == "answered 503");
    auto at = text(failed, "last_error_at");
    BOOST_TEST((at.size() == 20u && at[10] == 'T' && at.back() == 'Z'), at);
    BOOST_TEST(text(failed, "since") == at);
    BOOST_TEST(failed.at("cooling_for_ms").as_int64() > 0);
    BOOST_TEST(failed.at("failures_in_a_row").as_int64() == 1);

    // The cooldown ends: not healthy, nothing has shown it back yet.
    auto over = await_upstream(g, c.upstreams[0].name, [](const json::object& u) {
        return text(u, "health") != "cooling";
    });
    BOOST_TEST(text(over, "health") == "down");
    BOOST_TEST(text(over, "last_error") == "answered 503");

    // The next request goes to it (a single upstream is never refused) and restores it; the
    // last error stays, with its time.
    BOOST_TEST(chat(g).status == 200u);
    auto back = await_upstream(g, c.upstreams[0].name, [](const json::object& u) {
        return text(u, "health") == "healthy";
    });
    BOOST_TEST(text(back, "health") == "healthy");
    BOOST_TEST(text(back, "last_error") == "answered 503");
    BOOST_TEST(back.at("failures_in_a_row").as_int64() == 0);
}

// An upstream nobody can reach, outside routes: a refused connection is its error.
BOOST_AUTO_TEST_CASE(a_refused_connection_is_the_upstreams_last_error) {
    auto c = with_admin(make_config({"http://127.0.0.1:" + std::to_string(unused_port()) + "/v1"}));
    running_gateway g(c);
    BOOST_TEST(chat(g).status == 502u);
    auto u = upstream_health(g, c.upstreams[0].name);
    BOOST_TEST(text(u, "health") == "cooling");
    BOOST_TEST(text(u, "last_error").find("cannot connect") != std::string::npos,
               text(u, "last_error"));
    // A second request still goes (and fails again): the cooldown doubles.
    BOOST_TEST(chat(g).status == 502u);
    BOOST_TEST(upstream_health(g, c.upstreams[0].name).at("failures_in_a_row").as_int64() == 2);
}

// A route's target whose cooldown ended reads `down` (it read `healthy` before): the next
// request probes it.
BOOST_AUTO_TEST_CASE(a_target_whose_cooldown_ended_is_not_healthy) {
    fake_upstream fake;
    auto c = with_admin(make_config(fake));
    c.health.cooldown = config::duration(200);
    config::route_config r;
    r.model = "smart";
    r.max_attempts = 1;
    r.targets.push_back({c.upstreams[0].name, "fake-model", 1, 0});
    c.routes.push_back(r);
    running_gateway g(c);
    auto target = [&] { return health_of(g).at("routes").at(0).at("targets").at(0).as_object(); };
    // Asks until the target's health is no longer `was` (an answer is told once relayed).
    auto target_after = [&](std::string_view was) {
        auto until = clock::now() + 5s;
        auto t = target();
        while (text(t, "health") == was && clock::now() < until) {
            std::this_thread::sleep_for(10ms);
            t = target();
        }
        return t;
    };
    BOOST_TEST(text(target(), "health") == "unknown");
    BOOST_TEST(text(target(), "state") == "healthy");  // the board's state, as before
    fake.script({{.content = "", .status = 500}, {.content = "back"}});
    BOOST_TEST(chat(g, "smart").status == 500u);
    auto failed = target_after("unknown");
    BOOST_TEST(text(failed, "health") == "cooling");
    BOOST_TEST(text(failed, "last_error") == "answered 500");
    auto over = target_after("cooling");
    BOOST_TEST(text(over, "health") == "down");
    BOOST_TEST(text(over, "state") == "cooled");
    BOOST_TEST(over.at("cooled_for_ms").as_int64() == 0);
    BOOST_TEST(chat(g, "smart").status == 200u);
    BOOST_TEST(text(target_after("probing"), "health") == "healthy");
    // The upstream as a whole says the same.
    BOOST_TEST(text(upstream_health(g, c.upstreams[0].name), "health") == "healthy");
}

// Active probes: a dead upstream is found down with no client request, and a probe that is
// answered restores it. The probe asks the model list with the gateway's key.
BOOST_AUTO_TEST_CASE(a_probe_finds_a_dead_upstream_down_and_a_later_one_restores_it) {
    // Nothing listens on the first upstream's port; the second answers its model list 503 until
    // it comes back. (A released port is not bound again later: under parallel tests another
    // socket may hold it by then.)
    fake_upstream fake;
    fake.fail_model_lists(true);
    auto c = with_admin(make_config(
        {"http://127.0.0.1:" + std::to_string(unused_port()) + "/v1", fake.base_url()}));
    c.health.probe_interval = config::duration(30);
    c.upstreams[1].api_key = "sk-gateway-probe";
    running_gateway g(c);
    auto dead = await_upstream(g, c.upstreams[0].name,
                               [](const json::object& u) { return text(u, "health") == "down"; });
    BOOST_TEST(text(dead, "health") == "down");
    BOOST_TEST(text(dead, "last_error").find("cannot connect") != std::string::npos,
               text(dead, "last_error"));
    BOOST_TEST(dead.at("probe_interval_ms").as_int64() == 30);
    BOOST_TEST(!text(dead, "last_probe_at").empty());

    auto name = c.upstreams[1].name;
    auto down =
        await_upstream(g, name, [](const json::object& u) { return text(u, "health") == "down"; });
    BOOST_TEST(text(down, "last_error").find("503") != std::string::npos, text(down, "last_error"));
    // It comes back.
    fake.fail_model_lists(false);
    auto back = await_upstream(
        g, name, [](const json::object& u) { return text(u, "health") == "healthy"; });
    BOOST_TEST(text(back, "health") == "healthy");
    auto probe = fake.requests().at(0);
    BOOST_TEST(probe.method == "GET");
    BOOST_TEST(probe.target == "/v1/models");
    BOOST_TEST(probe.header("authorization") == "Bearer sk-gateway-probe");
}

// Probes are opt-in: an upstream without a probe interval hears nothing, while one with its own
// interval is probed.
BOOST_AUTO_TEST_CASE(probes_run_only_where_configured) {
    fake_upstream quiet, probed;
    auto c = with_admin(make_config({quiet.base_url(), probed.base_url()}));
    BOOST_TEST(c.health.probe_interval.count() == 0);  // off by default
    c.upstreams[1].probe_interval = config::duration(20);
    running_gateway g(c);
    BOOST_TEST_REQUIRE(probed.wait_requests(3, 5s));
    BOOST_TEST(quiet.requests().empty());
    BOOST_TEST(text(upstream_health(g, c.upstreams[1].name), "health") == "healthy");
    BOOST_TEST(text(upstream_health(g, c.upstreams[0].name), "health") == "unknown");
}

// The agent's calls for a model without a route tell the upstream's health as /v1 requests do:
// a 503 it retried past is its last error, and the success after it makes it healthy.
BOOST_AUTO_TEST_CASE(the_agents_calls_without_a_route_tell_the_upstreams_health) {
    context_fixture f([](config::gateway_config& c) { c.admin.api_key = admin_key; });
    f.fake.script({{"overloaded", "stop", 503, "", 0}, {"Answered."}});
    auto events = f.events(f.start(f.create_chat(), "hello"));
    BOOST_TEST_REQUIRE(events.back().type == "run.completed");
    auto u = upstream_health(*f.gateway, f.config.upstreams[0].name);
    BOOST_TEST(text(u, "health") == "healthy");
    BOOST_TEST(text(u, "last_error") == "answered 503");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_health_test
