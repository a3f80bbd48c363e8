#pragma once

#include "gateway/admin/limiter.hpp"
#include "gateway/config/config.hpp"
#include "gateway/io/redis.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gateway::admin {

using io::parse_redis_url;
using io::redis_address;
using io::redis_connection;

// Limits shared by every replica through one Redis server: each admit() is one EVAL of a Lua
// script that reads the key's counters, decides and counts atomically, so two gateways can never
// both take the last request of a window; settle() is one more. Counters expire with their
// window or period; a parallel slot is a sorted-set member that a crashed replica's requests
// leave for at most 10 minutes, a USD reservation for at most an hour. The protocol is parsed by
// hiredis' reader over an Asio socket (no thread blocks on Redis); connections are kept per worker
// thread (io::redis_pool). When Redis does not answer within `redis_timeout`, the request is let
// through and the failure counted and logged: an outage of the limiter does not become an outage of
// the gateway.
class redis_limiter final : public limiter {
public:
    explicit redis_limiter(const config::limits_config& config);
    ~redis_limiter() override;

    net::awaitable<admission> admit(claim c) override;
    net::awaitable<std::optional<spend_change>> settle(claim c, usage_spent used) override;
    bool counts_in_memory() const override { return false; }
    // Redis keeps the counts for every replica, across restarts of each: nothing to seed.
    void seed(const std::string&, std::int64_t, std::uint64_t, std::uint64_t) override {}

private:
    // Runs EVAL with `script`; the reply's integers (an error reply or a failure: empty).
    net::awaitable<std::optional<std::vector<std::string>>> eval(const char* script,
                                                                 std::vector<std::string> keys,
                                                                 std::vector<std::string> args);
    io::redis_pool redis_;
};

}  // namespace gateway::admin
