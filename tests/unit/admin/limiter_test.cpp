#include "gateway/admin/limiter.hpp"

#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <map>

namespace admin_limiter_test {

using namespace gateway::admin;
using period = gateway::config::budget_period;

namespace {

// 2026-11-23T10:00:00Z plus `ms`.
std::int64_t at(std::int64_t ms) {
    return *gateway::config::parse_time("2026-11-23T10:00:00Z") + ms;
}

claim make(std::int64_t now, std::string id = "r") {
    claim c;
    c.key_id = "k";
    c.slot_id = std::move(id);
    c.now_ms = now;
    return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(limits)

BOOST_AUTO_TEST_CASE(requests_per_minute_exactly_then_reset_with_the_window) {
    memory_limiter l;
    for (int i = 0; i < 3; ++i) {
        auto c = make(at(1000 * i));
        c.rpm = 3;
        auto a = l.admit_now(c);
        BOOST_TEST(a.allowed);
        BOOST_TEST(a.requests.remaining == std::uint64_t(2 - i));
    }
    auto fourth = make(at(20'000));
    fourth.rpm = 3;
    auto refused = l.admit_now(fourth);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST((refused.refused == refusal::requests));
    BOOST_TEST(refused.requests.remaining == 0u);
    BOOST_TEST(refused.retry_after_ms == 40'000);  // the rest of the minute
    auto headers = limit_headers(refused, fourth);
    BOOST_TEST(headers.at(0).first == "retry-after");
    BOOST_TEST(headers.at(0).second == "40");
    BOOST_TEST(headers.at(1).second == "3");    // x-ratelimit-limit-requests
    BOOST_TEST(headers.at(3).second == "40s");  // x-ratelimit-reset-requests
    auto next_minute = make(at(60'000));
    next_minute.rpm = 3;
    BOOST_TEST(l.admit_now(next_minute).allowed);
}

BOOST_AUTO_TEST_CASE(tokens_are_reserved_then_settled_with_the_real_count) {
    memory_limiter l;
    auto first = make(at(0), "a");
    first.tpm = 100;
    first.estimate = 30;
    BOOST_TEST(l.admit_now(first).allowed);
    l.settle_now(first, {60});  // used more than estimated: 60 counted
    auto second = make(at(1), "b");
    second.tpm = 100;
    second.estimate = 40;
    auto over = l.admit_now(second);  // 60 + 40 fits exactly
    BOOST_TEST(over.allowed);
    l.settle_now(second, {10});  // 70 counted
    auto third = make(at(2), "c");
    third.tpm = 100;
    third.estimate = 31;
    auto refused = l.admit_now(third);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST((refused.refused == refusal::tokens));
    BOOST_TEST(refused.tokens.remaining == 30u);
    third.estimate = 30;
    BOOST_TEST(l.admit_now(third).allowed);
}

BOOST_AUTO_TEST_CASE(parallel_slots_are_freed_when_requests_end) {
    memory_limiter l;
    auto a = make(at(0), "a");
    a.max_parallel = 2;
    auto b = a;
    b.slot_id = "b";
    auto c = a;
    c.slot_id = "c";
    BOOST_TEST(l.admit_now(a).allowed);
    BOOST_TEST(l.admit_now(b).allowed);
    auto refused = l.admit_now(c);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST((refused.refused == refusal::parallel));
    l.settle_now(a, {});
    BOOST_TEST(l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(budgets_run_out_and_come_back_with_the_period) {
    memory_limiter l;
    auto c = make(at(0));
    c.budget_tokens = 100;
    c.budget_period = period::day;
    c.estimate = 10;
    BOOST_TEST(l.admit_now(c).allowed);
    l.settle_now(c, {95});
    auto refused = l.admit_now(c);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST((refused.refused == refusal::budget));
    BOOST_TEST(refused.retry_after_ms == 14 * 3'600'000LL);  // until midnight UTC
    c.now_ms = at(14 * 3'600'000LL);
    BOOST_TEST(l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(a_seeded_budget_counts_what_was_spent_before_a_restart) {
    memory_limiter l;
    auto c = make(at(0));
    c.budget_tokens = 100;
    c.budget_period = period::month;
    c.estimate = 5;
    l.seed("k", period_start(period::month, c.now_ms), 96, 0);
    BOOST_TEST(!l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(periods_and_reset_texts) {
    auto now = at(0);  // a Monday
    auto time = [](std::string_view text) { return *gateway::config::parse_time(text); };
    BOOST_TEST(period_start(period::day, now) == time("2026-11-23"));
    BOOST_TEST(period_start(period::month, now) == time("2026-11-01"));
    BOOST_TEST(period_end(period::month, now) == time("2026-12-01"));
    BOOST_TEST(period_end(period::month, time("2026-12-31T23:00:00Z")) == time("2027-01-01"));
    // ISO weeks run from Monday 00:00 UTC, across a month's and a year's end.
    BOOST_TEST(period_start(period::week, now) == time("2026-11-23"));
    BOOST_TEST(period_start(period::week, time("2026-11-29T23:59:59Z")) == time("2026-11-23"));
    BOOST_TEST(period_end(period::week, now) == time("2026-11-30"));
    BOOST_TEST(period_start(period::week, time("2027-01-01T12:00:00Z")) == time("2026-12-28"));
    BOOST_TEST(period_end(period::week, time("2027-01-01T12:00:00Z")) == time("2027-01-04"));
    BOOST_TEST(period_start(period::week, time("1970-01-01")) == time("1969-12-29"));
    BOOST_TEST(minute_start(now + 59'999) == now);
    BOOST_TEST(reset_text(120) == "120ms");
    BOOST_TEST(reset_text(1000) == "1s");
    BOOST_TEST(reset_text(59'500) == "59.5s");
    BOOST_TEST(reset_text(360'000) == "6m0s");
    BOOST_TEST(reset_text(3'723'000) == "1h2m3s");
}

// A USD budget: claims reserve their estimate, are refused when the settled spend, the
// reservations and their own estimate would pass the budget, and settle to their real cost.
claim usd_claim(std::int64_t now, std::string id, std::uint64_t estimate) {
    auto c = make(now, std::move(id));
    c.budget_usd_nano = 1000;
    c.budget_period = period::day;
    c.usd_estimate_nano = estimate;
    return c;
}

BOOST_AUTO_TEST_CASE(usd_reservations_never_pass_the_budget_together) {
    memory_limiter l;
    auto a = usd_claim(at(0), "a", 400);
    auto b = usd_claim(at(1), "b", 400);
    auto c = usd_claim(at(2), "c", 201);
    BOOST_TEST(l.admit_now(a).allowed);
    auto second = l.admit_now(b);
    BOOST_TEST(second.allowed);
    BOOST_TEST(second.seen.usd_reserved == 800u);
    // 800 reserved + 201 > 1000: refused, and it counts nothing.
    auto refused = l.admit_now(c);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST((refused.refused == refusal::usd_budget));
    BOOST_TEST(refused.seen.usd_reserved == 800u);
    BOOST_TEST(refused.retry_after_ms == 14 * 3'600'000LL - 2);  // until midnight UTC
    c.usd_estimate_nano = 200;                                   // exactly the budget: let in
    BOOST_TEST(l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(settling_replaces_the_reservation_with_the_cost) {
    memory_limiter l;
    auto a = usd_claim(at(0), "a", 600);
    BOOST_TEST(l.admit_now(a).allowed);
    auto change = l.settle_now(a, {0, 250, at(10)});
    BOOST_TEST_REQUIRE(change.has_value());
    BOOST_TEST(change->before == 0u);
    BOOST_TEST(change->after == 250u);
    BOOST_TEST(change->period_start == period_start(period::day, at(0)));
    // 250 spent, nothing reserved: 750 is left, and not a nano-dollar more.
    auto b = usd_claim(at(20), "b", 751);
    BOOST_TEST(!l.admit_now(b).allowed);
    b.usd_estimate_nano = 750;
    auto let_in = l.admit_now(b);
    BOOST_TEST(let_in.allowed);
    BOOST_TEST(let_in.seen.usd_spent == 250u);
    // A cost above the reservation is counted whole: the budget is passed by what requests
    // cost beyond their reservation, never by reservations.
    auto over = l.settle_now(b, {0, 900, at(30)});
    BOOST_TEST(over->before == 250u);
    BOOST_TEST(over->after == 1150u);
    auto none = usd_claim(at(40), "c", 0);
    BOOST_TEST(!l.admit_now(none).allowed);
}

BOOST_AUTO_TEST_CASE(a_cost_counts_in_the_period_the_request_ended_in) {
    memory_limiter l;
    auto late = usd_claim(at(14 * 3'600'000LL - 1000), "late", 500);  // 23:59:59
    BOOST_TEST(l.admit_now(late).allowed);
    auto change = l.settle_now(late, {0, 300, at(14 * 3'600'000LL + 1000)});
    BOOST_TEST(change->before == 0u);
    BOOST_TEST(change->after == 300u);
    BOOST_TEST(change->period_start == period_start(period::day, at(14 * 3'600'000LL)));
    // The next day holds its cost, and its reservation was given back.
    auto next = usd_claim(at(14 * 3'600'000LL + 2000), "next", 700);
    auto let_in = l.admit_now(next);
    BOOST_TEST(let_in.allowed);
    BOOST_TEST(let_in.seen.usd_spent == 300u);
    BOOST_TEST(let_in.seen.usd_reserved == 700u);
}

BOOST_AUTO_TEST_CASE(a_seed_counts_what_the_store_recorded_unless_the_period_is_counted) {
    memory_limiter l;
    auto start = period_start(period::day, at(0));
    l.seed("k", start, 0, 990);
    BOOST_TEST(!l.admit_now(usd_claim(at(0), "a", 11)).allowed);
    auto a = usd_claim(at(0), "a", 10);
    BOOST_TEST(l.admit_now(a).allowed);
    l.settle_now(a, {0, 5, at(1)});
    // A later seed for a period counted already (a reload) leaves the exact counts alone.
    l.seed("k", start, 0, 100);
    auto seen = l.admit_now(usd_claim(at(2), "b", 0));
    BOOST_TEST(seen.seen.usd_spent == 995u);
}

BOOST_AUTO_TEST_CASE(the_refusal_headers_show_the_usd_budget) {
    memory_limiter l;
    auto a = usd_claim(at(0), "a", 100);
    a.budget_usd_nano = 25'000'000'000;  // $25
    a.usd_estimate_nano = 25'000'000'001;
    auto refused = l.admit_now(a);
    BOOST_TEST(!refused.allowed);
    auto headers = limit_headers(refused, a);
    std::map<std::string, std::string> by_name(headers.begin(), headers.end());
    BOOST_TEST(by_name["retry-after"] == "50400");
    BOOST_TEST(by_name["x-ratelimit-limit-usd"] == "25.00");
    BOOST_TEST(by_name["x-ratelimit-remaining-usd"] == "25.00");
    BOOST_TEST(by_name["x-ratelimit-reset-usd"] == "14h0m0s");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_limiter_test
