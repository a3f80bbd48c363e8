#include "gateway/cache/response_cache.hpp"

#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"

#include <hiredis/hiredis.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <array>

namespace gateway::cache {

namespace json = boost::json;

namespace {

constexpr std::string_view redis_prefix = "contextgate:cache:";

constexpr std::array<std::pair<providers::finish, std::string_view>, 5> finish_names{{
    {providers::finish::stop, "stop"},
    {providers::finish::length, "length"},
    {providers::finish::tool_calls, "tool_calls"},
    {providers::finish::content_filter, "content_filter"},
    {providers::finish::error, "error"},
}};

}  // namespace

// In memory.

std::optional<std::string> memory_cache::find(const std::string& key, clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    if (it->second->expires <= now) {
        erase(it->second);
        return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
}

void memory_cache::store(std::string key, std::string value, clock::time_point expires) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) erase(it->second);
    entry e{std::move(key), std::move(value), expires};
    if (e.bytes() > max_bytes_) return;
    auto& m = observability::metrics();
    while (bytes_ + e.bytes() > max_bytes_ && !order_.empty()) {
        erase(std::prev(order_.end()));
        m.cache_evictions.with().inc();
    }
    bytes_ += e.bytes();
    order_.push_front(std::move(e));
    index_.emplace(order_.front().key, order_.begin());
    m.cache_bytes.with().set(static_cast<double>(bytes_));
}

void memory_cache::erase(std::list<entry>::iterator it) {
    bytes_ -= it->bytes();
    index_.erase(it->key);
    order_.erase(it);
    observability::metrics().cache_bytes.with().set(static_cast<double>(bytes_));
}

std::size_t memory_cache::bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

std::size_t memory_cache::size() const {
    std::lock_guard lock(mutex_);
    return order_.size();
}

net::awaitable<std::optional<std::string>> memory_cache::get(std::string key) {
    co_return find(key, clock::now());
}

net::awaitable<void> memory_cache::put(std::string key, std::string value, config::duration ttl) {
    store(std::move(key), std::move(value), clock::now() + ttl);
    co_return;
}

// In Redis.

redis_cache::redis_cache(io::redis_address address, config::duration timeout)
    : redis_(std::move(address), timeout) {}

void redis_cache::failed(const std::string& what, const std::string& problem) {
    observability::metrics().cache_backend_errors.with().inc();
    observability::log_warn("cache: Redis at " + redis_.address().host + ":" +
                            redis_.address().port + ": " + what + ": " + problem);
}

net::awaitable<std::optional<std::string>> redis_cache::get(std::string key) {
    std::vector<std::string> command{"GET", std::string(redis_prefix) + key};
    auto [reply, problem] = co_await redis_.run(std::move(command));
    if (!problem.empty()) {
        failed("lookup (taken as a miss)", problem);
        co_return std::nullopt;
    }
    if (reply->type != REDIS_REPLY_STRING) co_return std::nullopt;  // nil: not there
    co_return std::string(reply->str, reply->len);
}

net::awaitable<void> redis_cache::put(std::string key, std::string value, config::duration ttl) {
    std::vector<std::string> command{"SET", std::string(redis_prefix) + key, std::move(value), "PX",
                                     std::to_string(ttl.count())};
    auto [reply, problem] = co_await redis_.run(std::move(command));
    if (!problem.empty()) failed("store (dropped)", problem);
}

std::unique_ptr<response_cache> make_cache(const config::cache_config& config,
                                           const config::limits_config& limits) {
    if (config.backend == config::cache_backend::memory)
        return std::make_unique<memory_cache>(config.max_bytes);
    auto parsed =
        io::parse_redis_url(config.redis_url.empty() ? limits.redis_url : config.redis_url);
    return std::make_unique<redis_cache>(parsed ? *parsed.value : io::redis_address{},
                                         limits.redis_timeout);
}

// The stored form.

std::string encode_answer(const stored_answer& a) {
    const auto& r = a.reply;
    std::string_view why = "stop";
    for (const auto& [f, name] : finish_names)
        if (f == r.why) why = name;
    json::object usage{{"known", r.used.known}, {"input", r.used.input}, {"output", r.used.output}};
    json::object stored{{"v", 1},           {"id", r.id},
                        {"model", r.model}, {"message", json::value_from(r.content)},
                        {"finish", why},    {"usage", std::move(usage)}};
    // In whole nano-dollars, read back exactly (entries from before have none: nothing saved).
    if (a.cost && a.cost->priced)
        stored["cost"] =
            json::object{{"usd_nano", nano_usd(a.cost->usd)}, {"estimated", a.cost->estimated}};
    return json::serialize(stored);
}

std::optional<stored_answer> decode_answer(std::string_view stored) {
    boost::system::error_code ec;
    auto v = json::parse(stored, ec);
    const auto* o = ec ? nullptr : v.if_object();
    if (!o) return std::nullopt;
    const auto* version = o->if_contains("v");
    if (!version || !version->is_int64() || version->as_int64() != 1) return std::nullopt;
    auto message = json::try_value_to<providers::message>(o->contains("message") ? o->at("message")
                                                                                 : json::value{});
    if (!message) return std::nullopt;
    stored_answer a;
    auto& r = a.reply;
    r.content = std::move(*message);
    if (const auto* id = o->if_contains("id"); id && id->is_string()) r.id = id->as_string();
    if (const auto* m = o->if_contains("model"); m && m->is_string()) r.model = m->as_string();
    if (const auto* f = o->if_contains("finish"); f && f->is_string())
        for (const auto& [value, name] : finish_names)
            if (name == f->as_string()) r.why = value;
    if (const auto* u = o->if_contains("usage"); u && u->is_object()) {
        const auto& used = u->as_object();
        r.used.known =
            used.contains("known") && used.at("known").is_bool() && used.at("known").as_bool();
        if (const auto* n = used.if_contains("input"); n && n->is_int64())
            r.used.input = n->as_int64();
        if (const auto* n = used.if_contains("output"); n && n->is_int64())
            r.used.output = n->as_int64();
    }
    if (const auto* c = o->if_contains("cost"); c && c->is_object()) {
        const auto* nano = c->as_object().if_contains("usd_nano");
        const auto* estimated = c->as_object().if_contains("estimated");
        if (nano && nano->is_int64() && nano->as_int64() >= 0)
            a.cost = request_cost{static_cast<double>(nano->as_int64()) / 1e9, true,
                                  estimated && estimated->is_bool() && estimated->as_bool()};
    }
    return a;
}

}  // namespace gateway::cache
