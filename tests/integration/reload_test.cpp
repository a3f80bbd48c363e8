// A configuration reloaded without a restart (POST /admin/reload, SIGHUP's reload_file): new
// requests take the new upstreams, routes and keys at once; requests in flight finish on what
// they started with; a file that does not validate changes nothing; and a steady stream of
// requests loses none across twenty reloads.
#include "tests/integration/context_fixture.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace integration_reload_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;

namespace {

const std::string admin = "Authorization: Bearer admin-key-0123456789\r\n";

// The configuration file a test writes and rewrites: one upstream named `main` at `url`, and
// whatever `more` adds (routes, keys).
std::string yaml(const std::string& url, const std::string& more = {}, unsigned workers = 2) {
    return "server:\n"
           "  listen: 127.0.0.1:0\n"
           "  workers: " +
           std::to_string(workers) +
           "\n"
           "  drain_time: 2s\n"
           "logging:\n"
           "  access_log: false\n"
           "upstreams:\n"
           "  - name: main\n"
           "    base_url: " +
           url +
           "\n"
           "    models: [\"*\"]\n"
           "    first_byte_timeout: 5s\n"
           "    idle_timeout: 5s\n"
           "context:\n"
           "  data_dir: data\n"
           "  prompts_dir: " CONTEXTGATE_SOURCE_DIR
           "/prompts\n"
           "  workflows_dir: " CONTEXTGATE_SOURCE_DIR
           "/workflows\n"
           "admin:\n"
           "  api_key: admin-key-0123456789\n" +
           more;
}

struct reloading_gateway {
    std::string folder = temporary_folder();
    std::string file = folder + "/gateway.yaml";
    std::optional<running_gateway> gw;

    explicit reloading_gateway(const std::string& text) {
        write(text);
        auto loaded = config::load_file(file);
        BOOST_TEST_REQUIRE(loaded.error.empty(), loaded.error);
        gw.emplace(*loaded.value);
    }
    void write(const std::string& text) const { std::ofstream(file, std::ios::trunc) << text; }
    response reload() const {
        client c(gw->port());
        return c.request(make_request("POST", "/admin/reload", "", admin));
    }
    response chat(std::string_view model = "gpt-4o", std::string_view headers = {}) const {
        client c(gw->port());
        return c.request(make_request("POST", "/v1/chat/completions",
                                      R"({"model":")" + std::string(model) +
                                          R"(","messages":[{"role":"user","content":"hi"}]})",
                                      "Content-Type: application/json\r\n" + std::string(headers)));
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(reload)

BOOST_AUTO_TEST_CASE(new_requests_go_where_the_reloaded_file_says) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    BOOST_TEST(g.chat().status == 200u);
    BOOST_TEST(a.requests().size() == 1u);

    g.write(yaml(b.base_url()));
    auto r = g.reload();
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto outcome = json::parse(r.body).as_object();
    BOOST_TEST(outcome.at("reloaded").as_bool());
    BOOST_TEST(outcome.at("generation").to_number<int>() == 2);
    BOOST_TEST(outcome.at("restart_needed").as_array().empty());
    BOOST_TEST(g.gw->server().current()->number == 2u);

    for (int i = 0; i < 4; ++i) BOOST_TEST(g.chat().status == 200u);  // every worker switched
    BOOST_TEST(a.requests().size() == 1u);
    BOOST_TEST(b.requests().size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_file_that_does_not_validate_changes_nothing) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    // A misspelt key in the new upstream, then broken YAML: each refused with its line.
    auto misspelt = yaml(b.base_url());
    misspelt.replace(misspelt.find("    models:"), 11, "    modles:");
    for (const auto& text : {misspelt, yaml(b.base_url()) + "routes: [\n"}) {
        g.write(text);
        auto r = g.reload();
        BOOST_TEST(r.status == 400u, r.body);
        BOOST_TEST(r.body.find("invalid_config") != std::string::npos, r.body);
        BOOST_TEST(r.body.find("gateway.yaml:") != std::string::npos, r.body);
        BOOST_TEST(g.gw->server().current()->number == 1u);
        BOOST_TEST(g.chat().status == 200u);
    }
    BOOST_TEST(a.requests().size() == 2u);
    BOOST_TEST(b.requests().empty());
}

BOOST_AUTO_TEST_CASE(a_request_in_flight_finishes_on_the_configuration_it_started_with) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    // A stream that a is slow to answer: its events come 300 ms apart.
    client slow(g.gw->port());
    slow.send(make_request(
        "POST", "/v1/chat/completions",
        R"({"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]})",
        "Content-Type: application/json\r\nx-fake-delay-ms: 300\r\n"));
    BOOST_TEST_REQUIRE(a.wait_requests(1, 5s));

    g.write(yaml(b.base_url()));
    BOOST_TEST_REQUIRE(g.reload().status == 200u);
    BOOST_TEST(g.chat().status == 200u);
    BOOST_TEST(b.requests().size() == 1u);

    auto streamed = slow.read_response();
    BOOST_TEST(streamed.status == 200u);
    BOOST_TEST(streamed.complete);
    BOOST_TEST(read_chat_stream(streamed.body).done, streamed.body);
    BOOST_TEST(a.requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(keys_and_routes_change_with_a_reload) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    BOOST_TEST(g.chat("smart").status == 200u);  // no route yet: the catch-all upstream

    // A declared key (so /v1 now needs one), an upstream `second` at b, and a route `smart` to
    // it, named gpt-5 there.
    auto text = yaml(a.base_url(),
                     "  keys:\n"
                     "    - name: ci\n"
                     "      key: sk-reloaded-ci-0123456789\n"
                     "routes:\n"
                     "  - model: smart\n"
                     "    targets: [{upstream: second, model: gpt-5}]\n");
    text.replace(text.find("context:\n"), 0,
                 "  - name: second\n    base_url: " + b.base_url() + "\n    models: [\"gpt-5\"]\n");
    g.write(text);
    auto r = g.reload();
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);

    BOOST_TEST(g.chat("smart").status == 401u);  // no key
    const std::string key = "Authorization: Bearer sk-reloaded-ci-0123456789\r\n";
    auto routed = g.chat("smart", key);
    BOOST_TEST(routed.status == 200u, routed.body);
    BOOST_TEST_REQUIRE(b.requests().size() == 1u);
    BOOST_TEST(b.requests()[0].body.find(R"("model":"gpt-5")") != std::string::npos);

    // The key removed again: a request presenting it is refused (keys were declared once, so
    // /v1 stays closed to requests without one).
    g.write(yaml(a.base_url()));
    BOOST_TEST_REQUIRE(g.reload().status == 200u);
    BOOST_TEST(g.chat("gpt-4o", key).status == 401u);
}

BOOST_AUTO_TEST_CASE(a_section_that_needs_a_restart_is_named_and_left_as_it_runs) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    g.write(yaml(b.base_url(), {}, 3));
    auto r = g.reload();
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto restart = json::parse(r.body).at("restart_needed").as_array();
    BOOST_TEST_REQUIRE(restart.size() == 1u, r.body);
    BOOST_TEST(restart[0].as_string() == "server");
    BOOST_TEST(g.gw->server().workers() == 2u);
    BOOST_TEST(g.chat().status == 200u);  // the rest was applied
    BOOST_TEST(b.requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(an_agents_model_call_in_flight_ends_where_it_began_and_the_next_goes_anew) {
    context_fixture f;
    fake_upstream b;
    f.fake.script({{.content = "From the first upstream.", .delay_ms = 800}});
    b.script({{.content = "From the second upstream."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "hi");
    BOOST_TEST_REQUIRE(f.fake.wait_requests(1, 5s));  // the call is under way

    auto next = f.config;
    next.upstreams[0].base_url = b.base_url();
    next.upstreams[0].endpoint = *config::parse_base_url(b.base_url()).value;
    auto outcome = f.gateway->server().reload(next);
    BOOST_TEST_REQUIRE(outcome.applied, outcome.error);

    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(b.scripted_requests().empty());
    auto second = f.start(chat, "again");
    BOOST_TEST(f.events(second).back().type == "run.completed");
    BOOST_TEST(b.scripted_requests().size() == 1u);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(twenty_reloads_under_load_lose_no_request) {
    fake_upstream a, b;
    reloading_gateway g(yaml(a.base_url()));
    std::atomic<bool> done{false};
    std::atomic<int> answered{0};
    std::vector<std::string> failures;
    std::mutex failures_mutex;
    auto failures_seen = [&] {
        std::lock_guard lock(failures_mutex);
        return failures.size();
    };
    // Four clients, each on one keep-alive connection, JSON and streamed answers in turn.
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t)
        clients.emplace_back([&, t] {
            client c(g.gw->port());
            for (int i = 0; !done.load(); ++i) {
                bool stream = (i + t) % 2 == 0;
                auto r = c.request(make_request(
                    "POST", "/v1/chat/completions",
                    std::string(R"({"model":"gpt-4o",)") + (stream ? R"("stream":true,)" : "") +
                        R"("messages":[{"role":"user","content":"hi"}]})",
                    "Content-Type: application/json\r\n"));
                bool whole =
                    r.status == 200u && r.complete && (!stream || read_chat_stream(r.body).done);
                if (!whole) {
                    {
                        std::lock_guard lock(failures_mutex);
                        failures.push_back(std::to_string(r.status) + " " + r.body);
                    }
                    ++answered;  // wakes the waiting reloads, which then see the failure
                    answered.notify_all();
                    return;
                }
                ++answered;
                answered.notify_all();
            }
        });
    for (int i = 0; i < 20; ++i) {
        g.write(yaml(i % 2 == 0 ? b.base_url() : a.base_url()));
        auto r = g.reload();
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        // Some requests between two reloads.
        int seen = answered.load();
        for (int now = seen; now < seen + 8 && failures_seen() == 0; now = answered.load())
            answered.wait(now);
    }
    done = true;
    for (auto& t : clients) t.join();
    BOOST_TEST(failures.empty(), (failures.empty() ? "" : failures.front()));
    BOOST_TEST(answered.load() >= 20 * 8);
    BOOST_TEST(g.gw->server().current()->number == 21u);
    BOOST_TEST(!a.requests().empty());
    BOOST_TEST(!b.requests().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_reload_test
