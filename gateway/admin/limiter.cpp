#include "gateway/admin/limiter.hpp"

#include <algorithm>
#include <chrono>

namespace gateway::admin {

namespace {

constexpr std::int64_t minute_ms = 60'000;
constexpr std::int64_t day_ms = 86'400'000;

std::chrono::year_month_day date_of(std::int64_t now_ms) {
    return std::chrono::year_month_day(
        std::chrono::sys_days(std::chrono::days(now_ms / day_ms - (now_ms % day_ms < 0))));
}

std::int64_t ms_of(std::chrono::year_month_day date) {
    return std::chrono::sys_days(date).time_since_epoch().count() * day_ms;
}

std::uint64_t remaining(std::uint64_t limit, std::uint64_t used) {
    return used >= limit ? 0 : limit - used;
}

}  // namespace

std::int64_t minute_start(std::int64_t now_ms) {
    return now_ms - ((now_ms % minute_ms) + minute_ms) % minute_ms;
}

std::int64_t period_start(std::string_view period, std::int64_t now_ms) {
    auto date = date_of(now_ms);
    if (period == "day") return ms_of(date);
    return ms_of(date.year() / date.month() / std::chrono::day(1));
}

std::int64_t period_end(std::string_view period, std::int64_t now_ms) {
    auto date = date_of(now_ms);
    if (period == "day") return ms_of(date) + day_ms;
    auto next = date.year() / date.month() / std::chrono::day(1) + std::chrono::months(1);
    return ms_of(next);
}

admission memory_limiter::admit_now(const claim& c) {
    std::lock_guard lock(mutex_);
    auto& k = keys_[c.key_id];
    auto window = minute_start(c.now_ms);
    if (k.window != window) {
        k.window = window;
        k.requests = 0;
        k.tokens = 0;
    }
    auto period = period_start(c.budget_period, c.now_ms);
    if (k.budget_period != period) {
        k.budget_period = period;
        k.budget_used = 0;
    }
    std::string refused;
    if (c.max_parallel && k.running >= c.max_parallel)
        refused = "parallel";
    else if (c.rpm && k.requests >= c.rpm)
        refused = "requests";
    else if (c.tpm && k.tokens + c.estimate > c.tpm)
        refused = "tokens";
    else if (c.budget_tokens && k.budget_used + c.estimate > c.budget_tokens)
        refused = "budget";
    if (refused.empty()) {
        ++k.requests;
        k.tokens += c.estimate;
        k.budget_used += c.estimate;
        if (c.max_parallel) ++k.running;
    }
    return decided(c, std::move(refused), k.requests, k.tokens);
}

void memory_limiter::settle_now(const claim& c, std::uint64_t actual) {
    std::lock_guard lock(mutex_);
    auto it = keys_.find(c.key_id);
    if (it == keys_.end()) return;
    auto& k = it->second;
    // Only a claim that took a slot is settled (a refused one is not), so the count is exact.
    if (c.max_parallel && k.running > 0) --k.running;
    // The estimate was counted in the window and period the request started in; when those
    // have passed, the difference belongs to counts that no longer exist.
    auto adjust = [&](std::uint64_t& counter) {
        counter = actual >= c.estimate ? counter + (actual - c.estimate)
                                       : counter - std::min(counter, c.estimate - actual);
    };
    if (k.window == minute_start(c.now_ms)) adjust(k.tokens);
    if (k.budget_period == period_start(c.budget_period, c.now_ms)) adjust(k.budget_used);
}

void memory_limiter::seed_budget(const std::string& key_id, std::int64_t start,
                                 std::uint64_t used) {
    std::lock_guard lock(mutex_);
    auto& k = keys_[key_id];
    k.budget_period = start;
    k.budget_used = used;
}

net::awaitable<admission> memory_limiter::admit(claim c) {
    co_return admit_now(c);
}

net::awaitable<void> memory_limiter::settle(claim c, std::uint64_t actual_tokens) {
    settle_now(c, actual_tokens);
    co_return;
}

admission decided(const claim& c, std::string refused, std::uint64_t requests,
                  std::uint64_t tokens) {
    admission a;
    auto window_left = minute_start(c.now_ms) + minute_ms - c.now_ms;
    a.requests = {c.rpm, remaining(c.rpm, requests), window_left};
    a.tokens = {c.tpm, remaining(c.tpm, tokens), window_left};
    if (refused.empty()) return a;
    a.allowed = false;
    a.retry_after_ms = refused == "parallel" ? 1000
                       : refused == "budget" ? period_end(c.budget_period, c.now_ms) - c.now_ms
                                             : window_left;
    a.refused = std::move(refused);
    return a;
}

std::string reset_text(std::int64_t ms) {
    if (ms < 0) ms = 0;
    if (ms < 1000) return std::to_string(ms) + "ms";
    auto minutes = ms / minute_ms;
    auto rest = ms % minute_ms;
    std::string seconds = std::to_string(rest / 1000);
    if (rest % 1000) {
        auto fraction = std::to_string(1000 + rest % 1000).substr(1);
        while (fraction.back() == '0') fraction.pop_back();
        seconds += "." + fraction;
    }
    if (minutes == 0) return seconds + "s";
    auto hours = minutes / 60;
    if (hours == 0) return std::to_string(minutes) + "m" + seconds + "s";
    return std::to_string(hours) + "h" + std::to_string(minutes % 60) + "m" + seconds + "s";
}

std::vector<std::pair<std::string, std::string>> limit_headers(const admission& a, const claim& c) {
    std::vector<std::pair<std::string, std::string>> out;
    out.emplace_back("retry-after", std::to_string((a.retry_after_ms + 999) / 1000));
    if (c.rpm) {
        out.emplace_back("x-ratelimit-limit-requests", std::to_string(a.requests.limit));
        out.emplace_back("x-ratelimit-remaining-requests", std::to_string(a.requests.remaining));
        out.emplace_back("x-ratelimit-reset-requests", reset_text(a.requests.reset_ms));
    }
    if (c.tpm) {
        out.emplace_back("x-ratelimit-limit-tokens", std::to_string(a.tokens.limit));
        out.emplace_back("x-ratelimit-remaining-tokens", std::to_string(a.tokens.remaining));
        out.emplace_back("x-ratelimit-reset-tokens", reset_text(a.tokens.reset_ms));
    }
    return out;
}

}  // namespace gateway::admin
