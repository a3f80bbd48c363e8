#pragma once

#include "gateway/config/virtual_key.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::store {
class key_store;
}

namespace gateway::admin {

namespace net = boost::asio;

// One request's claim on a key's limits. Requests and tokens are counted in fixed one-minute
// windows (UTC minutes); budgets per UTC day, ISO week or calendar month; parallel requests while
// they run. Money in whole nano-dollars (1e-9 USD), so sums are exact. Zero limits are not
// checked.
struct claim {
    std::string key_id;
    // Names the claim's parallel slot: made by the gateway (gatekeeper::admit), never a value
    // the client chose (a shared x-request-id would make several requests one slot).
    std::string slot_id;
    std::uint64_t rpm = 0;
    std::uint64_t tpm = 0;
    std::uint64_t max_parallel = 0;
    std::uint64_t budget_tokens = 0;
    std::uint64_t budget_usd_nano = 0;
    config::budget_period budget_period = config::budget_period::month;
    std::uint64_t estimate = 0;  // tokens reserved now, settled with the real count later
    // USD reserved now (with a USD budget), settled with the real cost later.
    std::uint64_t usd_estimate_nano = 0;
    std::int64_t now_ms = 0;  // when it was admitted
};

// What a request used, for settle(): its tokens, its cost, and when it ended (the budget
// period its cost is counted in, as the usage ledger counts it).
struct usage_spent {
    std::uint64_t tokens = 0;
    std::uint64_t usd_nano = 0;
    std::int64_t now_ms = 0;
};

// A key's settled USD spend in one budget period just before and just after settle() counted a
// request's cost: one atomic step, so each crossing of an alert threshold is seen by exactly one
// request, on whichever replica it ran.
struct spend_change {
    std::int64_t period_start = 0;
    std::uint64_t before = 0;
    std::uint64_t after = 0;
};

// A counter as the x-ratelimit-* headers show it.
struct quota {
    std::uint64_t limit = 0;
    std::uint64_t remaining = 0;
    std::int64_t reset_ms = 0;  // until the window ends
};

// Why a claim was refused (none: let in).
enum class refusal { none, requests, tokens, parallel, budget, usd_budget };

// The refusal's name, for the metrics' `kind` label and the backends' replies.
std::string_view refusal_name(refusal r);

// A key's counts as a limiter saw them when it decided on a claim (counting the claim when it was
// let in).
struct counts {
    std::uint64_t requests = 0;      // in the minute window
    std::uint64_t tokens = 0;        // in the minute window
    std::uint64_t usd_spent = 0;     // settled in the budget period
    std::uint64_t usd_reserved = 0;  // held by requests in flight
};

struct admission {
    bool allowed = true;
    refusal refused = refusal::none;
    quota requests;
    quota tokens;
    counts seen;
    std::int64_t retry_after_ms = 0;
    bool backend_failed = false;  // the backend did not answer; let through
};

// The start of the minute window of `now_ms`, and the start and end of its budget period.
std::int64_t minute_start(std::int64_t now_ms);
std::int64_t period_start(config::budget_period period, std::int64_t now_ms);
std::int64_t period_end(config::budget_period period, std::int64_t now_ms);

// Checks and counts claims: admit() either counts the request (a request, its estimated tokens,
// its budget share, its USD reservation, one parallel slot) or refuses it and counts nothing.
// A USD budget refuses a claim when what the period's settled requests cost, plus what the
// requests in flight reserved, plus this claim's estimate would pass it; so concurrent requests
// can never reserve more than the budget, and the budget is passed only by what requests cost
// beyond their reservation. settle() replaces the token estimate with the real count, the USD
// reservation with the real cost (counted in the period the request ended in), and frees the
// parallel slot. Thread-safe.
class limiter {
public:
    virtual ~limiter() = default;
    virtual net::awaitable<admission> admit(claim c) = 0;
    // The spend before and after counting the cost, for a claim with a USD budget (nullopt
    // without one, or when the backend did not answer).
    virtual net::awaitable<std::optional<spend_change>> settle(claim c, usage_spent used) = 0;

    // True when the counts live in this process only, so what a key spent before it started
    // must be seeded from the usage store (seed_from_store); Redis keeps them for every replica.
    virtual bool counts_in_memory() const = 0;
    // What a key spent in the budget period starting at `start` as the usage store recorded it,
    // unless this limiter counts that period for the key already (its own counts are exact).
    virtual void seed(const std::string& key_id, std::int64_t start, std::uint64_t tokens,
                      std::uint64_t usd_nano) = 0;
};

// Counters in this process's memory: exact for one replica.
class memory_limiter final : public limiter {
public:
    net::awaitable<admission> admit(claim c) override;
    net::awaitable<std::optional<spend_change>> settle(claim c, usage_spent used) override;
    bool counts_in_memory() const override { return true; }
    void seed(const std::string& key_id, std::int64_t start, std::uint64_t tokens,
              std::uint64_t usd_nano) override;

    // The synchronous core, for tests and for the awaitable wrappers.
    admission admit_now(const claim& c);
    std::optional<spend_change> settle_now(const claim& c, const usage_spent& used);

private:
    struct counters {
        std::int64_t window = -1;  // minute_start of the counts below
        std::uint64_t requests = 0;
        std::uint64_t tokens = 0;
        std::int64_t budget_period = -1;  // period_start of the budget counts below
        std::uint64_t budget_used = 0;
        std::uint64_t usd_spent = 0;
        std::uint64_t usd_reserved = 0;  // by requests in flight, whichever period they began in
        std::uint64_t running = 0;       // requests holding a parallel slot
    };
    // `k`'s budget counts moved to the period starting at `start` (a new period starts at 0).
    static void enter_period(counters& k, std::int64_t start);

    std::mutex mutex_;
    std::map<std::string, counters, std::less<>> keys_;
};

// What a limiter answers for `c` given the key's counts as it saw them (counting `c` when it was
// let in) and what refused it, if anything: the quotas the headers show and, when refused, how
// long to wait (the window's end, the budget period's end, or a second for a parallel slot).
admission decided(const claim& c, refusal refused, const counts& seen);

// "1s", "59.5s", "6m0s", "120ms": OpenAI's format for x-ratelimit-reset-*.
std::string reset_text(std::int64_t ms);

// The 429 answer's extra header fields for `a` (retry-after and the x-ratelimit-* family).
std::vector<std::pair<std::string, std::string>> limit_headers(const admission& a, const claim& c);

// Seeds `limits` with what the usage store recorded for each of `keys` (their tokens and cost in
// the budget period of `now_ms`) when it counts in memory; a key without a budget is skipped.
// The usage ledger is flushed by the caller first when it may hold some.
net::awaitable<void> seed_from_store(limiter& limits, store::key_store& store,
                                     std::vector<std::shared_ptr<const config::virtual_key>> keys,
                                     std::int64_t now_ms);

}  // namespace gateway::admin
