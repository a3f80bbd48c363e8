#include "gateway/upstream/routes.hpp"

#include <boost/test/unit_test.hpp>

// The health board (health_board.cpp): what each report does to a target, and what another
// replica's changes do (apply).
using namespace gateway::upstream;
namespace config = gateway::config;
using namespace std::chrono_literals;
using state = health_board::state;

BOOST_AUTO_TEST_SUITE(upstream_health_board)

BOOST_AUTO_TEST_CASE(each_report_ends_one_request_in_flight) {
    health_board h({1s, 10s}, {"up0"});
    auto now = clock::now();
    for (int i = 0; i < 4; ++i) BOOST_TEST(h.take(0, "m", now, false));
    BOOST_TEST(h.of(0, "m")->in_flight == 4);
    h.succeeded(0, "m", 5ms);
    h.failed(0, "m", now);
    h.refused_key(0, "m", now);
    h.abandoned(0, "m");
    BOOST_TEST(h.of(0, "m")->in_flight == 0);
    h.abandoned(0, "m");  // never below zero
    BOOST_TEST(h.of(0, "m")->in_flight == 0);
}

BOOST_AUTO_TEST_CASE(a_probe_that_tells_nothing_leaves_the_target_to_another_probe) {
    health_board h({1s, 10s});
    auto now = clock::now();
    h.take(0, "m", now, true);
    h.failed(0, "m", now);
    BOOST_TEST(h.take(0, "m", now + 1s, false));  // the probe
    BOOST_TEST((h.of(0, "m")->now == state::probing));
    BOOST_TEST(!h.take(0, "m", now + 1s, false));  // one probe at a time
    h.abandoned(0, "m");                           // its client left: no verdict
    BOOST_TEST((h.of(0, "m")->now == state::cooled));
    BOOST_TEST(h.take(0, "m", now + 1s, false));  // another request probes
}

BOOST_AUTO_TEST_CASE(a_refused_key_ends_and_its_failed_probe_starts_it_again) {
    health_board h({1s, 30s});
    auto now = clock::now();
    h.take(0, "m", now, true);
    h.refused_key(0, "m", now);
    BOOST_TEST((h.of(0, "m")->now == state::unusable));
    BOOST_TEST(!h.available(0, "m", now + 29s));
    BOOST_TEST(h.take(0, "m", now + 30s, false));
    h.refused_key(0, "m", now + 30s);
    BOOST_TEST((h.of(0, "m")->until == now + 60s));
}

BOOST_AUTO_TEST_CASE(a_failure_that_ends_meanwhile_does_not_shorten_a_refused_key) {
    health_board h({1s, 30s});
    auto now = clock::now();
    h.take(0, "m", now, true);
    h.take(0, "m", now, true);
    h.refused_key(0, "m", now);
    h.failed(0, "m", now + 1s);  // began before the refusal; its 1 s cooldown would end sooner
    BOOST_TEST((h.of(0, "m")->now == state::unusable));
    BOOST_TEST((h.of(0, "m")->until == now + 30s));
    BOOST_TEST(h.of(0, "m")->in_flight == 0);
}

BOOST_AUTO_TEST_CASE(another_replicas_changes_take_the_later_end_and_a_restore_ends_them) {
    health_board h({1s, 60s});
    auto now = clock::now();
    h.apply({0, "m", state::cooled, now + 5s, 1});
    BOOST_TEST((h.of(0, "m")->now == state::cooled));
    h.apply({0, "m", state::cooled, now + 2s, 1});  // ends sooner: the later end stays
    BOOST_TEST((h.of(0, "m")->until == now + 5s));
    h.apply({0, "m", state::unusable, now + 3s, 0});  // a refused key outranks a cooldown
    BOOST_TEST((h.of(0, "m")->now == state::unusable));
    BOOST_TEST((h.of(0, "m")->until == now + 5s));
    h.apply({0, "m", state::cooled, now + 9s, 2});  // a longer cooldown lengthens it
    BOOST_TEST((h.of(0, "m")->now == state::unusable));
    BOOST_TEST((h.of(0, "m")->until == now + 9s));
    h.apply({0, "m", state::healthy, {}, 0});  // another replica's probe succeeded
    BOOST_TEST((h.of(0, "m")->now == state::healthy));
    BOOST_TEST(h.available(0, "m", now));
}

BOOST_AUTO_TEST_CASE(changes_are_told_for_the_replicas_but_not_probes_or_abandons) {
    health_board h({1s, 60s});
    std::vector<state> told;
    h.on_change([&](const health_board::change& c) { told.push_back(c.now); });
    auto now = clock::now();
    h.take(0, "m", now, true);
    h.failed(0, "m", now);
    h.take(0, "m", now + 1s, false);
    h.abandoned(0, "m");
    h.take(0, "m", now + 1s, false);
    h.succeeded(0, "m", 1ms);
    h.take(0, "m", now + 1s, true);
    h.refused_key(0, "m", now + 1s);
    BOOST_TEST((told == std::vector<state>{state::cooled, state::healthy, state::unusable}));
    h.on_change(nullptr);
}

BOOST_AUTO_TEST_SUITE_END()
