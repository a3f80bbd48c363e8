#include "gateway/upstream/routes.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_health_board_test {

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

// What the Health page reads (health_status): a target's cooldown that ended is `down`, not
// healthy, until a request shows it back; one never judged is `unknown`.
BOOST_AUTO_TEST_CASE(a_targets_status_names_what_is_known) {
    health_board h({1s, 60s}, {"up0"});
    auto now = clock::now();
    using hs = health_status;
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now) == hs::unknown));
    h.take(0, "m", now, true);
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now) == hs::unknown));  // in flight only
    h.failed(0, "m", now, std::nullopt, "answered 503");
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now) == hs::cooling));
    BOOST_TEST(h.of(0, "m")->seen.last_error == "answered 503");
    BOOST_TEST(h.of(0, "m")->seen.last_error_at > 0);
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now + 1s) == hs::down));
    BOOST_TEST(h.take(0, "m", now + 1s, false));  // the half-open probe
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now + 1s) == hs::probing));
    h.succeeded(0, "m", 1ms);
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now + 1s) == hs::healthy));
    BOOST_TEST(h.of(0, "m")->seen.last_error == "answered 503");  // kept, with its time
    h.take(0, "m", now, true);
    h.refused_key(0, "m", now);
    BOOST_TEST((health_board::status_of(h.of(0, "m"), now) == hs::cooling));
    BOOST_TEST(h.of(0, "m")->seen.last_error == "the gateway's key was refused");
}

// Every upstream has a record, fed by its targets' attempts, the attempts of models without a
// route, and its probes.
BOOST_AUTO_TEST_CASE(an_upstreams_record_follows_requests_and_probes) {
    health_board h({1s, 60s}, {"up0", "up1"});
    auto now = clock::now();
    using hs = health_status;
    auto status = [&](std::size_t u, clock::time_point at) {
        return health_board::status_of(*h.upstream_of(u), at);
    };
    BOOST_TEST((status(0, now) == hs::unknown));
    BOOST_TEST(!h.upstream_of(2).has_value());
    // A model without a route.
    h.upstream_failed(0, now, "cannot connect to upstream 127.0.0.1:1: Connection refused");
    BOOST_TEST((status(0, now) == hs::cooling));
    BOOST_TEST((status(0, now + 1s) == hs::down));
    h.upstream_failed(0, now + 1s, "again");
    BOOST_TEST((h.upstream_of(0)->until == now + 3s));  // doubled, as a target's
    h.upstream_succeeded(0);
    BOOST_TEST((status(0, now) == hs::healthy));
    BOOST_TEST(h.upstream_of(0)->seen.last_error == "again");
    h.upstream_succeeded(0);  // healthy already: nothing changes
    BOOST_TEST(h.upstream_of(0)->failures == 0);
    // A route's target on up1.
    h.take(1, "m", now, true);
    h.failed(1, "m", now, std::nullopt, "answered 502");
    BOOST_TEST((status(1, now) == hs::cooling));
    BOOST_TEST(h.upstream_of(1)->seen.last_error == "answered 502");
    h.take(1, "m", now, true);
    h.succeeded(1, "m", 1ms);
    BOOST_TEST((status(1, now) == hs::healthy));
    // A probe: in flight, it says probing when the upstream was failing; a failed one leaves it
    // down at once (no cooldown), a success restores it.
    h.probe_started(0);
    h.probe_ended(0, "probe answered 503");
    BOOST_TEST((status(0, now) == hs::down));
    BOOST_TEST(h.upstream_of(0)->last_probe_at > 0);
    h.probe_started(0);
    BOOST_TEST((status(0, now) == hs::probing));
    h.probe_ended(0, "");
    BOOST_TEST((status(0, now) == hs::healthy));
    h.probe_started(0);
    h.probe_cancelled(0);
    BOOST_TEST(h.upstream_of(0)->probes == 0);
}

// A reload carries each target's and upstream's record to the new board: the state, its time and
// its last error, not what is in flight.
BOOST_AUTO_TEST_CASE(records_carry_over_to_another_board) {
    health_board before({1s, 60s}, {"a", "b"}), after({1s, 60s}, {"b", "a"});
    auto now = clock::now();
    before.take(1, "m", now, true);
    before.failed(1, "m", now, std::nullopt, "answered 502");
    before.probe_started(1);
    for (const auto& t : before.snapshot()) after.carry_target(0, t);
    after.carry_upstream(0, *before.upstream_of(1));
    BOOST_TEST((after.of(0, "m")->now == state::cooled));
    BOOST_TEST((after.of(0, "m")->until == now + 1s));
    BOOST_TEST(after.of(0, "m")->seen.last_error == "answered 502");
    BOOST_TEST(after.of(0, "m")->in_flight == 0);
    BOOST_TEST(after.upstream_of(0)->seen.last_error == "answered 502");
    BOOST_TEST(after.upstream_of(0)->probes == 0);
    BOOST_TEST((health_board::status_of(*after.upstream_of(0), now) == health_status::cooling));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_health_board_test
