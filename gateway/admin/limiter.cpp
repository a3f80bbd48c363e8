#include "gateway/admin/limiter.hpp"

#include "gateway/admin/usage_ledger.hpp"
#include "gateway/config/config.hpp"
#include "gateway/store/state_store.hpp"

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

std::string_view refusal_name(refusal r) {
    switch (r) {
        case refusal::none:
            return "";
        case refusal::requests:
            return "requests";
        case refusal::tokens:
            return "tokens";
        case refusal::parallel:
            return "parallel";
        case refusal::budget:
            return "budget";
        case refusal::usd_budget:
            return "usd_budget";
    }
    return "";
}

std::int64_t minute_start(std::int64_t now_ms) {
    return now_ms - ((now_ms % minute_ms) + minute_ms) % minute_ms;
}

std::int64_t period_start(config::budget_period period, std::int64_t now_ms) {
    auto date = date_of(now_ms);
    switch (period) {
        case config::budget_period::day:
            return ms_of(date);
        case config::budget_period::week: {
            // ISO weeks start on Monday (C's encoding: Sunday 0).
            std::chrono::sys_days day(date);
            auto since_monday = (std::chrono::weekday(day).c_encoding() + 6) % 7;
            return ms_of(day - std::chrono::days(since_monday));
        }
        case config::budget_period::month:
            break;
    }
    return ms_of(date.year() / date.month() / std::chrono::day(1));
}

std::int64_t period_end(config::budget_period period, std::int64_t now_ms) {
    auto start = period_start(period, now_ms);
    switch (period) {
        case config::budget_period::day:
            return start + day_ms;
        case config::budget_period::week:
            return start + 7 * day_ms;
        case config::budget_period::month:
            break;
    }
    auto date = date_of(start);
    return ms_of(date.year() / date.month() / std::chrono::day(1) + std::chrono::months(1));
}

void memory_limiter::enter_period(counters& k, std::int64_t start) {
    if (k.budget_period == start) return;
    k.budget_period = start;
    k.budget_used = 0;
    k.usd_spent = 0;
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
    enter_period(k, period_start(c.budget_period, c.now_ms));
    auto refused = refusal::none;
    if (c.max_parallel && k.running >= c.max_parallel)
        refused = refusal::parallel;
    else if (c.rpm && k.requests >= c.rpm)
        refused = refusal::requests;
    else if (c.tpm && k.tokens + c.estimate > c.tpm)
        refused = refusal::tokens;
    else if (c.budget_tokens && k.budget_used + c.estimate > c.budget_tokens)
        refused = refusal::budget;
    else if (c.budget_usd_nano &&
             k.usd_spent + k.usd_reserved + c.usd_estimate_nano > c.budget_usd_nano)
        refused = refusal::usd_budget;
    if (refused == refusal::none) {
        ++k.requests;
        k.tokens += c.estimate;
        k.budget_used += c.estimate;
        if (c.budget_usd_nano) k.usd_reserved += c.usd_estimate_nano;
        if (c.max_parallel) ++k.running;
    }
    return decided(c, refused, {k.requests, k.tokens, k.usd_spent, k.usd_reserved});
}

std::optional<spend_change> memory_limiter::settle_now(const claim& c, const usage_spent& used) {
    std::lock_guard lock(mutex_);
    auto it = keys_.find(c.key_id);
    if (it == keys_.end()) return std::nullopt;
    auto& k = it->second;
    // Only a claim that took a slot is settled (a refused one is not), so the count is exact.
    if (c.max_parallel && k.running > 0) --k.running;
    // The estimate was counted in the window and period the request started in; when those
    // have passed, the difference belongs to counts that no longer exist.
    auto adjust = [&](std::uint64_t& counter) {
        counter = used.tokens >= c.estimate ? counter + (used.tokens - c.estimate)
                                            : counter - std::min(counter, c.estimate - used.tokens);
    };
    if (k.window == minute_start(c.now_ms)) adjust(k.tokens);
    if (k.budget_period == period_start(c.budget_period, c.now_ms)) adjust(k.budget_used);
    if (!c.budget_usd_nano) return std::nullopt;
    // The reservation is given back whenever it ends; the cost counts in the period of now.
    k.usd_reserved -= std::min(k.usd_reserved, c.usd_estimate_nano);
    auto start = period_start(c.budget_period, used.now_ms);
    enter_period(k, start);
    spend_change change{start, k.usd_spent, k.usd_spent + used.usd_nano};
    k.usd_spent = change.after;
    return change;
}

void memory_limiter::seed(const std::string& key_id, std::int64_t start, std::uint64_t tokens,
                          std::uint64_t usd_nano) {
    std::lock_guard lock(mutex_);
    auto& k = keys_[key_id];
    if (k.budget_period == start) return;
    k.budget_period = start;
    k.budget_used = tokens;
    k.usd_spent = usd_nano;
}

net::awaitable<admission> memory_limiter::admit(claim c) {
    co_return admit_now(c);
}

net::awaitable<std::optional<spend_change>> memory_limiter::settle(claim c, usage_spent used) {
    co_return settle_now(c, used);
}

admission decided(const claim& c, refusal refused, const counts& seen) {
    admission a;
    a.seen = seen;
    auto window_left = minute_start(c.now_ms) + minute_ms - c.now_ms;
    a.requests = {c.rpm, remaining(c.rpm, seen.requests), window_left};
    a.tokens = {c.tpm, remaining(c.tpm, seen.tokens), window_left};
    if (refused == refusal::none) return a;
    a.allowed = false;
    a.refused = refused;
    a.retry_after_ms = refused == refusal::parallel ? 1000
                       : refused == refusal::budget || refused == refusal::usd_budget
                           ? period_end(c.budget_period, c.now_ms) - c.now_ms
                           : window_left;
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
    // The USD budget in the same style: what is left of it, reserved amounts taken, and when the
    // period ends.
    if (c.budget_usd_nano) {
        auto used = a.seen.usd_spent + a.seen.usd_reserved;
        out.emplace_back("x-ratelimit-limit-usd", config::usd_text(c.budget_usd_nano));
        out.emplace_back("x-ratelimit-remaining-usd",
                         config::usd_text(remaining(c.budget_usd_nano, used)));
        out.emplace_back("x-ratelimit-reset-usd",
                         reset_text(period_end(c.budget_period, c.now_ms) - c.now_ms));
    }
    return out;
}

net::awaitable<void> seed_from_store(limiter& limits, store::key_store& store,
                                     std::vector<std::shared_ptr<const config::virtual_key>> keys,
                                     std::int64_t now_ms) {
    if (!limits.counts_in_memory()) co_return;
    for (const auto& key : keys) {
        if (!key || (!key->budget_tokens && !key->budget_usd_nano)) continue;
        auto start = period_start(key->budget_period, now_ms);
        store::usage_query q;
        q.key_id = key->id;
        q.from_day = utc_day(start);
        std::uint64_t tokens = 0;
        std::uint64_t usd_nano = 0;
        auto rows = co_await store.usage(q);
        for (const auto& row : rows) {
            tokens += static_cast<std::uint64_t>(row.input_tokens + row.output_tokens);
            usd_nano += static_cast<std::uint64_t>(std::max<std::int64_t>(row.usd_nano, 0));
        }
        limits.seed(key->id, start, tokens, usd_nano);
    }
}

}  // namespace gateway::admin
