// Routes with several targets (docs/routing.md), through the real gateway against fake upstreams
// that fail in the ways the routing contract names.
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

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
