#include "gateway/upstream/routes.hpp"

#include <boost/test/unit_test.hpp>

#include <map>

namespace upstream_routes_test {

using namespace gateway::upstream;
namespace config = gateway::config;
using namespace std::chrono_literals;

namespace {

config::route_config route_of(config::route_strategy strategy, std::vector<unsigned> weights,
                              unsigned max_attempts = 3) {
    config::route_config r;
    r.model = "smart";
    r.strategy = strategy;
    r.max_attempts = max_attempts;
    for (std::size_t i = 0; i < weights.size(); ++i)
        r.targets.push_back({"up" + std::to_string(i), "m" + std::to_string(i), weights[i], i});
    return r;
}

config::health_config cooling(config::duration cooldown, config::duration cap = 60s) {
    return {cooldown, cap};
}

// Ends an attempt at target `t` as `how`.
void end(health_board& h, const config::route_target* t, verdict how, clock::time_point now,
         clock::duration first_byte = 10ms) {
    if (how == verdict::success)
        h.succeeded(t->index, t->model, first_byte);
    else if (how == verdict::key_refused)
        h.refused_key(t->index, t->model, now);
    else
        h.failed(t->index, t->model, now);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_routes)

BOOST_AUTO_TEST_CASE(statuses_are_judged_as_the_routing_contract_says) {
    BOOST_TEST((judge_status(200) == verdict::success));
    for (unsigned s : {408u, 429u, 500u, 502u, 503u, 504u, 529u})
        BOOST_TEST((judge_status(s) == verdict::failed), s);
    for (unsigned s : {400u, 404u, 413u, 422u})
        BOOST_TEST((judge_status(s) == verdict::client_error), s);
    // The gateway's own key refused is the target's problem; 403 concerns this request.
    BOOST_TEST((judge_status(401) == verdict::key_refused));
    BOOST_TEST((judge_status(403) == verdict::refused));
    // The client's own credential (forwarded), or none at all: the caller's problem, never the
    // target's; a 429 to the client's key is its quota.
    for (auto who : {credential::client, credential::none}) {
        BOOST_TEST((judge_status(401, {}, who) == verdict::client_error));
        BOOST_TEST((judge_status(403, {}, who) == verdict::client_error));
    }
    BOOST_TEST((judge_status(429, {}, credential::client) == verdict::declined));
    BOOST_TEST((judge_status(429, {}, credential::none) == verdict::failed));
    BOOST_TEST((judge_status(503, {}, credential::client) == verdict::failed));
    for (auto v : {verdict::failed, verdict::key_refused, verdict::declined, verdict::refused})
        BOOST_TEST(tries_another(v));
    for (auto v : {verdict::success, verdict::client_error, verdict::context_window})
        BOOST_TEST(!tries_another(v));
    BOOST_TEST((judge_status(400, R"({"error":{"code":"context_length_exceeded"}})") ==
                verdict::context_window));
    BOOST_TEST((judge_status(400, R"({"error":{"message":"prompt is too long: 210000 tokens"}})") ==
                verdict::context_window));
    BOOST_TEST((judge_status(400, R"({"error":{"message":"Invalid value for temperature"}})") ==
                verdict::client_error));
}

BOOST_AUTO_TEST_CASE(priority_falls_back_in_order_within_max_attempts) {
    health_board h(cooling(5s));
    auto r = route_of(config::route_strategy::priority, {1, 1}, 3);
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    auto* first = plan.next(now);
    BOOST_TEST_REQUIRE(first == &r.targets[0]);
    end(h, first, verdict::failed, now);
    auto* second = plan.next(now);
    BOOST_TEST_REQUIRE(second == &r.targets[1]);
    end(h, second, verdict::failed, now);
    // Both cooled: the third attempt goes to the one whose cooldown ends first, then no more.
    BOOST_TEST(plan.next(now) == &r.targets[0]);
    BOOST_TEST(plan.next(now) == nullptr);
    BOOST_TEST(plan.attempts() == 3);
}

BOOST_AUTO_TEST_CASE(a_cooled_target_is_skipped_then_probed_once_and_restored) {
    health_board h(cooling(5s, 60s));
    auto r = route_of(config::route_strategy::priority, {1, 1});
    auto now = clock::now();
    {
        attempt_plan plan(r, h, now);
        end(h, plan.next(now), verdict::failed, now);
        end(h, plan.next(now), verdict::success, now);
    }
    // The next request skips the cooled first target.
    attempt_plan skipping(r, h, now + 1s);
    BOOST_TEST(skipping.next(now + 1s) == &r.targets[1]);
    // Its cooldown over, one request probes it; another at the same time does not.
    auto later = now + 5s;
    attempt_plan probe(r, h, later);
    BOOST_TEST(probe.next(later) == &r.targets[0]);
    BOOST_TEST((h.of(0, "m0")->now == health_board::state::probing));
    attempt_plan meanwhile(r, h, later);
    BOOST_TEST(meanwhile.next(later) == &r.targets[1]);
    end(h, &r.targets[0], verdict::success, later);
    BOOST_TEST((h.of(0, "m0")->now == health_board::state::healthy));
    attempt_plan restored(r, h, later);
    BOOST_TEST(restored.next(later) == &r.targets[0]);
}

BOOST_AUTO_TEST_CASE(the_cooldown_doubles_while_failing_up_to_its_cap_and_honours_retry_after) {
    health_board h(cooling(1s, 3s));
    auto now = clock::now();
    h.take(0, "m", now, true);
    h.failed(0, "m", now);
    BOOST_TEST((h.of(0, "m")->until - now == clock::duration(1s)));
    h.failed(0, "m", now);
    BOOST_TEST((h.of(0, "m")->until - now == clock::duration(2s)));
    h.failed(0, "m", now);
    BOOST_TEST((h.of(0, "m")->until - now == clock::duration(3s)));  // the cap
    h.failed(0, "m", now, config::duration(2500ms));                 // retry-after: 2.5
    BOOST_TEST((h.of(0, "m")->until - now == clock::duration(3s)));
    // A retry-after past max_cooldown is capped by it: one answer cannot keep a target out for
    // longer than the operator allows.
    h.failed(0, "m", now, config::duration(300s));
    BOOST_TEST((h.of(0, "m")->until - now == clock::duration(3s)));
    BOOST_TEST(!h.available(0, "m", now + 2s));
    BOOST_TEST(h.available(0, "m", now + 3s));
}

BOOST_AUTO_TEST_CASE(a_retry_after_is_read_only_when_it_is_a_sane_number) {
    BOOST_TEST((retry_after("", "2") == config::duration(2s)));
    BOOST_TEST((retry_after("1500", "9") == config::duration(1500ms)));
    BOOST_TEST((retry_after("", " 0.5 ") == config::duration(500ms)));
    BOOST_TEST((retry_after("", "86400") == config::duration(24h)));
    // Past a day, negative, not finite, not a number, or with trailing junk: ignored, never
    // converted (1e300 seconds is no duration; 100000000 s is three years).
    for (std::string_view bad : {"86401", "100000000", "1e300", "-1", "inf", "nan", "NaN", "1e309",
                                 "2x", "Wed, 21 Oct 2015 07:28:00 GMT", ""})
        BOOST_TEST(!retry_after("", bad).has_value(), bad);
    BOOST_TEST(!retry_after("1e300", "").has_value());
    BOOST_TEST(!retry_after("inf", "").has_value());
}

BOOST_AUTO_TEST_CASE(a_refused_key_keeps_its_target_out_for_max_cooldown_then_it_is_probed) {
    health_board h(cooling(1s, 60s));
    auto r = route_of(config::route_strategy::priority, {1, 1});
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    end(h, plan.next(now), verdict::key_refused, now);
    BOOST_TEST(plan.next(now) == &r.targets[1]);
    attempt_plan a_minute_less(r, h, now + 59s);
    BOOST_TEST(a_minute_less.next(now + 59s) == &r.targets[1]);
    end(h, &r.targets[1], verdict::key_refused, now);
    attempt_plan none_left(r, h, now);
    BOOST_TEST(none_left.next(now) == nullptr);
    // Every state ends: after max_cooldown one request probes the target again, and a success
    // restores it.
    auto later = now + 60s;
    attempt_plan probe(r, h, later);
    BOOST_TEST(probe.next(later) == &r.targets[0]);
    BOOST_TEST((h.of(0, "m0")->now == health_board::state::probing));
    end(h, &r.targets[0], verdict::success, later);
    BOOST_TEST((h.of(0, "m0")->now == health_board::state::healthy));
}

BOOST_AUTO_TEST_CASE(a_refusal_about_the_request_leaves_the_board_as_it_was) {
    health_board h(cooling(5s, 60s));
    auto r = route_of(config::route_strategy::priority, {1, 1}, 5);
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    BOOST_TEST(plan.next(now) == &r.targets[0]);
    plan.refused();  // a 403 to this request: another target, not this one again
    BOOST_TEST(plan.next(now) == &r.targets[1]);
    plan.declined(config::duration(2s));  // a 429 to the client's own key
    // Only the declined target is left for this request, after the retry-after it gave.
    BOOST_TEST(plan.next(now) == &r.targets[1]);
    BOOST_TEST((plan.backoff(now) == config::duration(2s)));
    plan.refused();
    BOOST_TEST(plan.next(now) == nullptr);
    // Nothing changed for anyone else: both healthy, none in flight.
    for (std::size_t i = 0; i < 2; ++i) {
        auto s = h.of(i, "m" + std::to_string(i));
        BOOST_TEST_REQUIRE(s.has_value());
        BOOST_TEST((s->now == health_board::state::healthy));
        BOOST_TEST(s->failures == 0);
        BOOST_TEST(s->in_flight == 0);
    }
    attempt_plan next_request(r, h, now);
    BOOST_TEST(next_request.next(now) == &r.targets[0]);
}

BOOST_AUTO_TEST_CASE(a_request_sent_again_counts_as_an_attempt) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::priority, {1}, 2);
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    BOOST_TEST(plan.next(now) == &r.targets[0]);
    BOOST_TEST(plan.spend_resend(now));
    BOOST_TEST(plan.attempts() == 2);
    BOOST_TEST(!plan.spend_resend(now));  // max_attempts: none left
    plan.failed(std::nullopt, now);
    BOOST_TEST(plan.next(now) == nullptr);
    config::route_config single;
    single.max_attempts = 1;
    single.targets.push_back({"up0", "", 1, 0});
    attempt_plan once(single, now);
    BOOST_TEST(once.next(now) != nullptr);
    BOOST_TEST(!once.spend_resend(now));
}

// A model without a route: its one upstream, never kept out for its health, and every attempt's
// end told to the upstream's record (the Health page), as both faces do.
BOOST_AUTO_TEST_CASE(a_model_without_a_route_reports_its_upstreams_health_and_is_never_refused) {
    health_board h(cooling(1s), {"up0"});
    auto r = route_of(config::route_strategy::priority, {1}, 1);
    auto status = [&] { return health_board::status_of(*h.upstream_of(0), clock::now()); };
    {
        attempt_plan plan(r, h, attempt_plan::reporting{});
        BOOST_TEST_REQUIRE(plan.next());
        plan.judged(verdict::failed, std::nullopt, "answered 503");
    }
    BOOST_TEST((status() == health_status::cooling));
    BOOST_TEST(h.upstream_of(0)->seen.last_error == "answered 503");
    BOOST_TEST(!h.of(0, "m0").has_value());  // no target kept on the board
    {
        attempt_plan plan(r, h, attempt_plan::reporting{});
        BOOST_TEST(plan.next() == &r.targets[0]);  // cooling, and still tried
        plan.succeeded(5ms);
    }
    BOOST_TEST((status() == health_status::healthy));
    {
        attempt_plan plan(r, h, attempt_plan::reporting{});
        BOOST_TEST_REQUIRE(plan.next());
        plan.judged(verdict::key_refused);
        BOOST_TEST(!plan.next());  // one attempt
    }
    BOOST_TEST((status() == health_status::cooling));
    BOOST_TEST(h.upstream_of(0)->seen.last_error == "the gateway's key was refused");
}

BOOST_AUTO_TEST_CASE(weighted_shares_follow_the_weights) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::weighted, {1, 3});
    std::map<std::size_t, int> picked;
    for (int i = 0; i < 4000; ++i) {
        attempt_plan plan(r, h);
        auto* t = plan.next();
        ++picked[t->index];
        end(h, t, verdict::success, clock::now());
    }
    // Expected 1000 and 3000; a binomial's spread is about 27.
    BOOST_TEST(picked[0] > 850);
    BOOST_TEST(picked[0] < 1150);
    BOOST_TEST(picked[1] == 4000 - picked[0]);
}

BOOST_AUTO_TEST_CASE(least_busy_avoids_the_target_with_requests_in_flight) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::least_busy, {1, 1, 1});
    auto now = clock::now();
    h.take(0, "m0", now, true);  // stalled: two requests hang there
    h.take(0, "m0", now, true);
    h.take(1, "m1", now, true);
    for (int i = 0; i < 10; ++i) {
        attempt_plan plan(r, h);
        auto* t = plan.next();
        BOOST_TEST(t == &r.targets[2]);
        end(h, t, verdict::success, clock::now());
    }
}

BOOST_AUTO_TEST_CASE(latency_prefers_the_faster_target) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::latency, {1, 1});
    auto now = clock::now();
    h.take(0, "m0", now, true);
    h.succeeded(0, "m0", 400ms);
    h.take(1, "m1", now, true);
    h.succeeded(1, "m1", 20ms);
    int fast = 0;
    for (int i = 0; i < 1000; ++i) {
        attempt_plan plan(r, h);
        auto* t = plan.next();
        if (t == &r.targets[1]) ++fast;
        h.abandoned(t->index, t->model);
    }
    // The slower one wins only when both draws are it: about a quarter.
    BOOST_TEST(fast > 650);
    BOOST_TEST(fast < 850);
}

BOOST_AUTO_TEST_CASE(the_deadline_ends_the_attempts) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::priority, {1, 1}, 5);
    r.deadline = 2s;
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    BOOST_TEST((plan.left(now + 500ms).value() == clock::duration(1500ms)));
    end(h, plan.next(now), verdict::failed, now);
    BOOST_TEST(plan.next(now + 2s) == nullptr);
    config::route_config open = r;
    open.deadline = config::duration(0);
    BOOST_TEST(!attempt_plan(open, h, now).left(now).has_value());
}

BOOST_AUTO_TEST_CASE(only_the_same_target_again_waits_doubling_or_its_retry_after) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::priority, {1, 1}, 6);
    r.deadline = 10s;
    auto now = clock::now();
    attempt_plan plan(r, h, now);
    BOOST_TEST(plan.next(now)->upstream == "up0");
    BOOST_TEST(plan.backoff(now).count() == 0);  // the first attempt
    plan.failed(std::nullopt, now);
    BOOST_TEST(plan.next(now)->upstream == "up1");
    BOOST_TEST(plan.backoff(now).count() == 0);  // another target: at once
    plan.failed(std::nullopt, now);
    // Both cooled: up0 again (its cooldown ends first), not the one that just failed.
    BOOST_TEST(plan.next(now)->upstream == "up0");
    BOOST_TEST(plan.backoff(now).count() == 0);
    plan.failed(std::nullopt, now);
    // up1 is cooled until now + 2 s, up0 until now + 4 s: up1, then up1 again.
    BOOST_TEST(plan.next(now)->upstream == "up1");
    plan.failed(std::nullopt, now);  // the fourth failure; up1 cooled until now + 4 s
    h.refused_key(0, "m0");          // up0 out: only up1 is left
    BOOST_TEST(plan.next(now)->upstream == "up1");
    BOOST_TEST((plan.backoff(now) == config::duration(4s)));  // 500 ms doubled thrice
    plan.failed(config::duration(1500ms), now);
    BOOST_TEST(plan.next(now)->upstream == "up1");
    BOOST_TEST((plan.backoff(now) == config::duration(1500ms)));  // the retry-after it gave
    // Never past the deadline.
    BOOST_TEST((plan.backoff(now + 9s) == config::duration(1s)));
}

BOOST_AUTO_TEST_CASE(a_plan_without_health_takes_its_first_target_as_often_as_allowed) {
    auto r = route_of(config::route_strategy::priority, {1, 1}, 3);
    auto now = clock::now();
    attempt_plan plan(r, now);
    BOOST_TEST(plan.next(now)->upstream == "up0");
    plan.abandoned();
    BOOST_TEST(plan.next(now)->upstream == "up0");
    BOOST_TEST(plan.backoff(now).count() == 0);  // nothing failed: no wait
    plan.failed(std::nullopt, now);
    BOOST_TEST(plan.next(now)->upstream == "up0");
    BOOST_TEST((plan.backoff(now) == config::duration(500ms)));
    BOOST_TEST(plan.next(now) == nullptr);
}

BOOST_AUTO_TEST_CASE(an_attempt_waits_for_its_head_no_longer_than_the_deadline_leaves) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::priority, {1}, 2);
    auto now = clock::now();
    attempt_plan open(r, h, now);
    BOOST_TEST((open.first_byte_timeout(config::duration(30s), now) == config::duration(30s)));
    r.first_byte_timeout = 20s;
    BOOST_TEST((attempt_plan(r, h, now).first_byte_timeout(config::duration(30s), now) ==
                config::duration(20s)));
    r.deadline = 5s;
    attempt_plan bounded(r, h, now);
    BOOST_TEST(
        (bounded.first_byte_timeout(config::duration(30s), now + 2s) == config::duration(3s)));
    // Rounded up: the wait never ends before the deadline does.
    BOOST_TEST((bounded.first_byte_timeout(config::duration(30s), now + 4999999us) ==
                config::duration(1)));
}

BOOST_AUTO_TEST_CASE(a_context_window_refusal_moves_to_its_targets) {
    health_board h(cooling(1s));
    auto r = route_of(config::route_strategy::priority, {1});
    r.on_context_window.push_back({"big", "m-long", 1, 7});
    attempt_plan plan(r, h);
    BOOST_TEST(plan.next() == &r.targets[0]);
    h.abandoned(0, "m0");
    plan.to_context_window_targets();
    auto* big = plan.next();
    BOOST_TEST_REQUIRE(big != nullptr);
    BOOST_TEST(big->index == 7u);
    BOOST_TEST(target_model(*big, "smart") == "m-long");
}

BOOST_AUTO_TEST_CASE(a_model_takes_the_first_matching_route_or_its_upstreams_glob) {
    std::vector<config::upstream_config> ups(2);
    ups[0].name = "a";
    ups[1].name = "b";
    ups[0].models = {"gpt-*"};
    ups[1].models = {"claude-*"};
    model_router router(ups);
    std::vector<config::route_config> routes{route_of(config::route_strategy::priority, {1, 1})};
    routes[0].model = "smart*";
    route_table table(ups, routes, router);
    config::route_config scratch;
    BOOST_TEST(&table.route("smart-v2", scratch) == &routes[0]);
    const auto& fallback = table.route("claude-x", scratch);
    BOOST_TEST(&fallback == &scratch);
    BOOST_TEST_REQUIRE(fallback.targets.size() == 1u);
    BOOST_TEST(fallback.targets[0].index == 1u);
    BOOST_TEST(fallback.max_attempts == 1u);  // without a route: one upstream, once
    BOOST_TEST(target_model(fallback.targets[0], "claude-x") == "claude-x");
    BOOST_TEST(table.route(std::nullopt, scratch).targets[0].index == 0u);
    // What takes a name: the route (its upstream by glob looked up on asking), else the first
    // upstream whose glob matches; nothing takes a name no glob matches.
    auto routed = table.takers_of("smart-v2");
    BOOST_TEST(routed.route == &routes[0]);
    BOOST_TEST(!routed.matched);
    BOOST_TEST(!table.matching_upstream(routed, "smart-v2"));
    auto globbed = table.takers_of("claude-x");
    BOOST_TEST(!globbed.route);
    BOOST_TEST((globbed.matched == std::optional<std::size_t>(1)));
    BOOST_TEST(globbed.found());
    BOOST_TEST(!table.takers_of("llama-3").found());
    routes[0].model = "gpt-4*";  // a route whose name an upstream's glob takes too
    BOOST_TEST((table.matching_upstream(table.takers_of("gpt-4o"), "gpt-4o") ==
                std::optional<std::size_t>(0)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_routes_test
