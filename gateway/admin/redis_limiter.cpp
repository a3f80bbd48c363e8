#include "gateway/admin/redis_limiter.hpp"

#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"

#include "gateway/io/redis.hpp"

#include <hiredis/hiredis.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <charconv>

namespace gateway::admin {

using io::reply_ptr;

namespace {

using namespace net::experimental::awaitable_operators;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr std::int64_t parallel_max_age_ms = 600'000;
// USD reservations are counted per 5-minute span of admissions and each span is kept an hour: a
// replica that died with requests in flight holds their reservations for at most that long (a
// request still running after an hour is no longer counted as reserved).
constexpr std::int64_t reserve_span_ms = 300'000;
constexpr std::int64_t reserve_spans = 12;

// KEYS: requests window, tokens window, token budget period, parallel set, USD spent in the
// period, then the USD reservation spans from the newest. ARGV: rpm, tpm, budget, max_parallel,
// estimate, request id, now, window ttl, budget ttl, parallel max age, USD budget, USD estimate,
// reservation span ttl. Returns {refused (0 none, then refusal's order), requests, tokens, budget
// used, parallel, USD spent, USD reserved}.
constexpr const char* admit_script = R"lua(
local rpm, tpm, budget, maxp = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local est, id, now = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local window_ttl, budget_ttl, max_age = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local usd_budget, usd_est, span_ttl = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local requests = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokens = tonumber(redis.call('GET', KEYS[2]) or '0')
local spent = tonumber(redis.call('GET', KEYS[3]) or '0')
local parallel = 0
if maxp > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - max_age)
  parallel = redis.call('ZCARD', KEYS[4])
end
local usd_spent, reserved = 0, 0
if usd_budget > 0 then
  usd_spent = tonumber(redis.call('GET', KEYS[5]) or '0')
  for i = 6, #KEYS do reserved = reserved + tonumber(redis.call('GET', KEYS[i]) or '0') end
end
local refused = 0
if maxp > 0 and parallel >= maxp then refused = 3
elseif rpm > 0 and requests >= rpm then refused = 1
elseif tpm > 0 and tokens + est > tpm then refused = 2
elseif budget > 0 and spent + est > budget then refused = 4
elseif usd_budget > 0 and usd_spent + reserved + usd_est > usd_budget then refused = 5 end
if refused == 0 then
  requests = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], window_ttl)
  tokens = redis.call('INCRBY', KEYS[2], est)
  redis.call('PEXPIRE', KEYS[2], window_ttl)
  spent = redis.call('INCRBY', KEYS[3], est)
  redis.call('PEXPIRE', KEYS[3], budget_ttl)
  if maxp > 0 then
    redis.call('ZADD', KEYS[4], now, id)
    redis.call('PEXPIRE', KEYS[4], max_age)
    parallel = parallel + 1
  end
  if usd_budget > 0 and usd_est > 0 then
    redis.call('INCRBY', KEYS[6], usd_est)
    redis.call('PEXPIRE', KEYS[6], span_ttl)
    reserved = reserved + usd_est
  end
end
return {refused, requests, tokens, spent, parallel, usd_spent, reserved}
)lua";

// KEYS: tokens window, token budget period, parallel set, USD spent in the period the request
// ended in, the USD reservation span it was admitted in. ARGV: token difference, request id,
// whether it has a USD budget, its cost, its USD estimate, the spend's ttl. Counters that expired
// meanwhile are not brought back. Returns {USD spent before, after} (-1 without a USD budget):
// INCRBY's one atomic step, so each threshold is crossed by one request on one replica.
constexpr const char* settle_script = R"lua(
local diff = tonumber(ARGV[1])
if diff ~= 0 then
  for i = 1, 2 do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      local v = redis.call('INCRBY', KEYS[i], diff)
      if v < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') end
    end
  end
end
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[3] == '0' then return {-1, -1} end
local cost, est = tonumber(ARGV[4]), tonumber(ARGV[5])
if est > 0 and redis.call('EXISTS', KEYS[5]) == 1 then
  local v = redis.call('DECRBY', KEYS[5], est)
  if v < 0 then redis.call('SET', KEYS[5], 0, 'KEEPTTL') end
end
local after = redis.call('INCRBY', KEYS[4], cost)
redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[6]))
return {after - cost, after}
)lua";

}  // namespace

namespace {
io::redis_address address_of(const config::limits_config& config) {
    auto parsed = parse_redis_url(config.redis_url);
    return parsed ? *parsed.value : io::redis_address{};
}
}  // namespace

redis_limiter::redis_limiter(const config::limits_config& config)
    : redis_(address_of(config), config.redis_timeout) {}

redis_limiter::~redis_limiter() = default;

net::awaitable<std::optional<std::vector<std::string>>> redis_limiter::eval(
    const char* script, std::vector<std::string> keys, std::vector<std::string> args) {
    std::vector<std::string> command{"EVAL", script, std::to_string(keys.size())};
    for (auto& k : keys) command.push_back(std::move(k));
    for (auto& a : args) command.push_back(std::move(a));
    auto [reply, problem] = co_await redis_.run(std::move(command));
    std::optional<std::vector<std::string>> values;
    if (problem.empty() && reply->type == REDIS_REPLY_ARRAY) {
        values.emplace();
        for (std::size_t i = 0; i < reply->elements; ++i) {
            const auto* e = reply->element[i];
            values->push_back(e->type == REDIS_REPLY_INTEGER
                                  ? std::to_string(e->integer)
                                  : std::string(e->str ? e->str : "", e->len));
        }
    } else if (problem.empty() && reply->type == REDIS_REPLY_INTEGER) {
        values.emplace(1, std::to_string(reply->integer));
    } else if (problem.empty()) {
        problem = "an unexpected reply";
    }
    if (!values) {
        observability::metrics().limit_backend_errors.with().inc();
        observability::log_warn("limits: Redis at " + redis_.address().host + ":" +
                                redis_.address().port + ": " + problem +
                                "; the request is let through");
    }
    co_return values;
}

namespace {

std::string counter_key(const claim& c, std::string_view kind, std::int64_t start) {
    // The braces keep one key's counters in one Redis Cluster slot.
    return "contextgate:{" + c.key_id + "}:" + std::string(kind) + ":" + std::to_string(start);
}

std::uint64_t to_u64(const std::string& s) {
    long long v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

}  // namespace

net::awaitable<admission> redis_limiter::admit(claim c) {
    auto window = minute_start(c.now_ms);
    auto period = period_start(c.budget_period, c.now_ms);
    auto period_left = period_end(c.budget_period, c.now_ms) - c.now_ms;
    std::vector<std::string> keys{counter_key(c, "rq", window), counter_key(c, "tk", window),
                                  counter_key(c, "bg", period), "contextgate:{" + c.key_id + "}:pl",
                                  counter_key(c, "us", period)};
    auto span = c.now_ms / reserve_span_ms;
    for (std::int64_t i = 0; c.budget_usd_nano && i <= reserve_spans; ++i)
        keys.push_back(counter_key(c, "ur", span - i));
    std::vector<std::string> args{std::to_string(c.rpm),
                                  std::to_string(c.tpm),
                                  std::to_string(c.budget_tokens),
                                  std::to_string(c.max_parallel),
                                  std::to_string(c.estimate),
                                  c.slot_id,
                                  std::to_string(c.now_ms),
                                  std::to_string(2 * 60'000),
                                  std::to_string(period_left + 3'600'000),
                                  std::to_string(parallel_max_age_ms),
                                  std::to_string(c.budget_usd_nano),
                                  std::to_string(c.usd_estimate_nano),
                                  std::to_string((reserve_spans + 1) * reserve_span_ms)};
    auto values = co_await eval(admit_script, std::move(keys), std::move(args));
    if (!values || values->size() != 7) {
        admission failed;
        failed.backend_failed = true;
        co_return failed;
    }
    static constexpr refusal refusals[] = {refusal::none,   refusal::requests,
                                           refusal::tokens, refusal::parallel,
                                           refusal::budget, refusal::usd_budget};
    auto refused = std::min<std::uint64_t>(to_u64((*values)[0]), std::size(refusals) - 1);
    co_return decided(
        c, refusals[refused],
        {to_u64((*values)[1]), to_u64((*values)[2]), to_u64((*values)[5]), to_u64((*values)[6])});
}

net::awaitable<std::optional<spend_change>> redis_limiter::settle(claim c, usage_spent used) {
    auto window = minute_start(c.now_ms);
    auto period = period_start(c.budget_period, c.now_ms);
    // The cost counts in the period the request ended in, as the usage ledger counts it.
    auto ended_in = period_start(c.budget_period, used.now_ms);
    std::vector<std::string> keys{counter_key(c, "tk", window), counter_key(c, "bg", period),
                                  "contextgate:{" + c.key_id + "}:pl",
                                  counter_key(c, "us", ended_in),
                                  counter_key(c, "ur", c.now_ms / reserve_span_ms)};
    auto diff = static_cast<long long>(used.tokens) - static_cast<long long>(c.estimate);
    auto spend_ttl = period_end(c.budget_period, used.now_ms) - used.now_ms + 3'600'000;
    std::vector<std::string> args{std::to_string(diff),
                                  c.slot_id,
                                  c.budget_usd_nano ? "1" : "0",
                                  std::to_string(used.usd_nano),
                                  std::to_string(c.usd_estimate_nano),
                                  std::to_string(spend_ttl)};
    auto values = co_await eval(settle_script, std::move(keys), std::move(args));
    if (!c.budget_usd_nano || !values || values->size() != 2) co_return std::nullopt;
    co_return spend_change{ended_in, to_u64((*values)[0]), to_u64((*values)[1])};
}

}  // namespace gateway::admin
