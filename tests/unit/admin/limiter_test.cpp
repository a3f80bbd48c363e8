#include "gateway/admin/limiter.hpp"

#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

using namespace gateway::admin;

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
    BOOST_TEST(refused.refused == "requests");
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
    l.settle_now(first, 60);  // used more than estimated: 60 counted
    auto second = make(at(1), "b");
    second.tpm = 100;
    second.estimate = 40;
    auto over = l.admit_now(second);  // 60 + 40 fits exactly
    BOOST_TEST(over.allowed);
    l.settle_now(second, 10);  // 70 counted
    auto third = make(at(2), "c");
    third.tpm = 100;
    third.estimate = 31;
    auto refused = l.admit_now(third);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(refused.refused == "tokens");
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
    BOOST_TEST(refused.refused == "parallel");
    l.settle_now(a, 0);
    BOOST_TEST(l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(budgets_run_out_and_come_back_with_the_period) {
    memory_limiter l;
    auto c = make(at(0));
    c.budget_tokens = 100;
    c.budget_period = "day";
    c.estimate = 10;
    BOOST_TEST(l.admit_now(c).allowed);
    l.settle_now(c, 95);
    auto refused = l.admit_now(c);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(refused.refused == "budget");
    BOOST_TEST(refused.retry_after_ms == 14 * 3'600'000LL);  // until midnight UTC
    c.now_ms = at(14 * 3'600'000LL);
    BOOST_TEST(l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(a_seeded_budget_counts_what_was_spent_before_a_restart) {
    memory_limiter l;
    auto c = make(at(0));
    c.budget_tokens = 100;
    c.budget_period = "month";
    c.estimate = 5;
    l.seed_budget("k", period_start("month", c.now_ms), 96);
    BOOST_TEST(!l.admit_now(c).allowed);
}

BOOST_AUTO_TEST_CASE(periods_and_reset_texts) {
    auto now = at(0);
    BOOST_TEST(period_start("day", now) == *gateway::config::parse_time("2026-11-23"));
    BOOST_TEST(period_start("month", now) == *gateway::config::parse_time("2026-11-01"));
    BOOST_TEST(period_end("month", now) == *gateway::config::parse_time("2026-12-01"));
    BOOST_TEST(period_end("month", *gateway::config::parse_time("2026-12-31T23:00:00Z")) ==
               *gateway::config::parse_time("2027-01-01"));
    BOOST_TEST(minute_start(now + 59'999) == now);
    BOOST_TEST(reset_text(120) == "120ms");
    BOOST_TEST(reset_text(1000) == "1s");
    BOOST_TEST(reset_text(59'500) == "59.5s");
    BOOST_TEST(reset_text(360'000) == "6m0s");
    BOOST_TEST(reset_text(3'723'000) == "1h2m3s");
}

BOOST_AUTO_TEST_SUITE_END()
