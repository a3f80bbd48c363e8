#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::admin {

namespace net = boost::asio;

// One request's claim on a key's limits. Requests and tokens are counted in fixed one-minute
// windows (UTC minutes); budgets per UTC day or calendar month; parallel requests while they
// run. Zero limits are not checked.
struct claim {
    std::string key_id;
    // Names the claim's parallel slot: made by the gateway (gatekeeper::admit), never a value
    // the client chose (a shared x-request-id would make several requests one slot).
    std::string slot_id;
    std::uint64_t rpm = 0;
    std::uint64_t tpm = 0;
    std::uint64_t max_parallel = 0;
    std::uint64_t budget_tokens = 0;
    std::string budget_period = "month";
    std::uint64_t estimate = 0;  // tokens reserved now, settled with the real count later
    std::int64_t now_ms = 0;
};

// A counter as the x-ratelimit-* headers show it.
struct quota {
    std::uint64_t limit = 0;
    std::uint64_t remaining = 0;
    std::int64_t reset_ms = 0;  // until the window ends
};

struct admission {
    bool allowed = true;
    std::string refused;  // requests | tokens | parallel | budget
    quota requests;
    quota tokens;
    std::int64_t retry_after_ms = 0;
    bool backend_failed = false;  // the backend did not answer; let through
};

// The start of the minute window of `now_ms` and of the budget period ("day" | "month").
std::int64_t minute_start(std::int64_t now_ms);
std::int64_t period_start(std::string_view period, std::int64_t now_ms);
std::int64_t period_end(std::string_view period, std::int64_t now_ms);

// Checks and counts claims: admit() either counts the request (a request, its estimated tokens,
// its budget share, one parallel slot) or refuses it and counts nothing; settle() replaces the
// estimate with the real token count and frees the parallel slot. Thread-safe.
class limiter {
public:
    virtual ~limiter() = default;
    virtual net::awaitable<admission> admit(claim c) = 0;
    virtual net::awaitable<void> settle(claim c, std::uint64_t actual_tokens) = 0;
};

// Counters in this process's memory: exact for one replica.
class memory_limiter final : public limiter {
public:
    net::awaitable<admission> admit(claim c) override;
    net::awaitable<void> settle(claim c, std::uint64_t actual_tokens) override;

    // What a key spent in the budget period starting at `period_start_ms`, read from the usage
    // store at start, so a restart does not hand out a fresh budget.
    void seed_budget(const std::string& key_id, std::int64_t period_start_ms, std::uint64_t used);

    // The synchronous core, for tests and for the awaitable wrappers.
    admission admit_now(const claim& c);
    void settle_now(const claim& c, std::uint64_t actual_tokens);

private:
    struct counters {
        std::int64_t window = -1;  // minute_start of the counts below
        std::uint64_t requests = 0;
        std::uint64_t tokens = 0;
        std::int64_t budget_period = -1;
        std::uint64_t budget_used = 0;
        std::uint64_t running = 0;  // requests holding a parallel slot
    };
    std::mutex mutex_;
    std::map<std::string, counters, std::less<>> keys_;
};

// What a limiter answers for `c` when the key's minute window holds `requests` and `tokens`
// (counting `c` when it was let in) and `refused` names the limit that refused it ("" for none):
// the quotas the headers show and, when refused, how long to wait (the window's end, the
// budget period's end, or a second for a parallel slot).
admission decided(const claim& c, std::string refused, std::uint64_t requests,
                  std::uint64_t tokens);

// "1s", "59.5s", "6m0s", "120ms": OpenAI's format for x-ratelimit-reset-*.
std::string reset_text(std::int64_t ms);

// The 429 answer's extra header fields for `a` (retry-after and the x-ratelimit-* family).
std::vector<std::pair<std::string, std::string>> limit_headers(const admission& a, const claim& c);

}  // namespace gateway::admin
