#pragma once

// The response cache (docs/operations.md, "Response cache"): answers to model requests kept by a
// key made from the request (cache::key_of), in memory or in Redis, each for its route's or
// upstream's ttl. What is stored is the answer in the conversation model (providers::reply), so
// that a hit is written in the client's API as JSON or as a stream, whichever the request asks.
#include "gateway/config/config.hpp"
#include "gateway/io/redis.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/request_cost.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gateway::cache {

namespace net = boost::asio;

// Where entries live. Thread-safe: shared by every worker.
class response_cache {
public:
    virtual ~response_cache() = default;
    // The entry under `key`, if one is there and fresh.
    virtual net::awaitable<std::optional<std::string>> get(std::string key) = 0;
    // Keeps `value` under `key` for `ttl`.
    virtual net::awaitable<void> put(std::string key, std::string value, config::duration ttl) = 0;
};

// In this process: least recently used entries go first once the entries' bytes pass
// `max_bytes`; an expired entry goes when it is next looked up (or evicted).
class memory_cache final : public response_cache {
public:
    using clock = std::chrono::steady_clock;
    explicit memory_cache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

    net::awaitable<std::optional<std::string>> get(std::string key) override;
    net::awaitable<void> put(std::string key, std::string value, config::duration ttl) override;

    // The same, synchronously, at time `now` (what the awaitables call; tests use it directly).
    std::optional<std::string> find(const std::string& key, clock::time_point now);
    void store(std::string key, std::string value, clock::time_point expires);
    std::size_t bytes() const;
    std::size_t size() const;

private:
    struct entry {
        std::string key;
        std::string value;
        clock::time_point expires;
        std::size_t bytes() const { return key.size() + value.size() + sizeof(entry); }
    };
    void erase(std::list<entry>::iterator it);  // mutex_ held

    const std::size_t max_bytes_;
    mutable std::mutex mutex_;
    std::list<entry> order_;  // most recently used first
    std::unordered_map<std::string_view, std::list<entry>::iterator> index_;
    std::size_t bytes_ = 0;
};

// In Redis, shared by replicas: SET with PX (Redis expires them) under `contextgate:cache:`.
// A Redis that does not answer is a miss, and a store that fails is dropped: counted and logged,
// never an error for the client.
class redis_cache final : public response_cache {
public:
    redis_cache(io::redis_address address, config::duration timeout);

    net::awaitable<std::optional<std::string>> get(std::string key) override;
    net::awaitable<void> put(std::string key, std::string value, config::duration ttl) override;

private:
    void failed(const std::string& what, const std::string& problem);
    io::redis_pool redis_;
};

// The cache `config` asks for (Redis at cache.redis_url, or limits.redis_url when that is empty).
std::unique_ptr<response_cache> make_cache(const config::cache_config& config,
                                           const config::limits_config& limits);

// An answer as the cache keeps it: the reply, and what it cost when the upstream gave it (nullopt:
// no price covered it), which is what a hit on it saves.
struct stored_answer {
    providers::reply reply;
    std::optional<request_cost> cost;
};

// An answer as it is stored, and back (nullopt: not a stored answer, e.g. from another version).
std::string encode_answer(const stored_answer& a);
std::optional<stored_answer> decode_answer(std::string_view stored);

}  // namespace gateway::cache
