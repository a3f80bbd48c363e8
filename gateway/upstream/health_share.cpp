#include "gateway/upstream/health_share.hpp"

#include "gateway/clock.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"

#include <hiredis/hiredis.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>

namespace gateway::upstream {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr const char* channel = "contextgate:health";
constexpr std::size_t queue_limit = 1000;  // changes waiting while Redis is slow; oldest dropped

std::string key_of(std::string_view upstream, std::string_view model) {
    // The braces keep one upstream's targets in one Redis Cluster slot.
    return std::string(channel) + ":{" + std::string(upstream) + "}:" + std::string(model);
}

// FNV-1a over the upstream's address and key: equal on replicas configured alike, and the key
// itself never leaves the process.
std::string fingerprint(const config::upstream_config& u) {
    std::uint64_t h = 14695981039346656037ull;
    for (std::string_view part :
         {std::string_view(u.base_url), std::string_view("\n"), std::string_view(u.api_key)})
        for (unsigned char ch : part) {
            h ^= ch;
            h *= 1099511628211ull;
        }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

constexpr std::string_view state_names[] = {"healthy", "cooled", "probing", "unusable"};

// The states that end at a time the message carries.
bool timed(health_board::state s) {
    return s == health_board::state::cooled || s == health_board::state::unusable;
}

std::string_view text_of(const redisReply* r) {
    return r && r->str ? std::string_view(r->str, r->len) : std::string_view();
}

}  // namespace

health_share::health_share(io::redis_address address, health_board& board,
                           const std::vector<config::upstream_config>& upstreams,
                           std::string replica)
    : address_(std::move(address)),
      board_(board),
      replica_(std::move(replica)),
      tasks_(io_.get_executor(), [](const std::string& task, std::exception_ptr e) {
          observability::log_stray(e, "health share " + task);
      }) {
    for (const auto& u : upstreams) {
        names_.push_back(u.name);
        fingerprints_.push_back(fingerprint(u));
    }
    pause_.emplace(io_);
    board_.on_change([this](const health_board::change& c) { publish(c); });
    tasks_.spawn("subscriber", subscribe());
    thread_ = std::thread([this] {
        io::name_this_thread("health-share");
        io_.run();
    });
}

health_share::~health_share() {
    stop();
}

void health_share::stop() {
    if (!thread_.joinable()) return;
    net::post(io_, [this] {
        stopping_ = true;
        queue_.clear();
        if (listener_) listener_->close();
        if (writer_) writer_->close();
        pause_->cancel();
        tasks_.cancel();
    });
    thread_.join();
    board_.on_change(nullptr);
}

std::string health_share::message(const health_board::change& c) const {
    json::object o{{"from", replica_},
                   {"upstream", c.upstream < names_.size() ? names_[c.upstream] : ""},
                   {"fingerprint", c.upstream < names_.size() ? fingerprints_[c.upstream] : ""},
                   {"model", c.model},
                   {"state", state_names[static_cast<int>(c.now)]},
                   {"failures", c.failures}};
    if (timed(c.now)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.until - clock::now());
        o["until"] = now_ms() + left.count();  // wall-clock: the replicas' steady clocks differ
    }
    return json::serialize(o);
}

std::optional<health_board::change> health_share::read(std::string_view message) const {
    boost::system::error_code ec;
    auto v = json::parse(message, ec);
    if (ec || !v.is_object()) return std::nullopt;
    const auto& o = v.as_object();
    auto text = [&](std::string_view name) -> std::string_view {
        const auto* f = o.if_contains(name);
        return f && f->is_string() ? std::string_view(f->as_string()) : std::string_view();
    };
    if (text("from") == replica_) return std::nullopt;  // this replica's own
    health_board::change c;
    auto upstream = std::find(names_.begin(), names_.end(), text("upstream"));
    if (upstream == names_.end()) return std::nullopt;
    c.upstream = static_cast<std::size_t>(upstream - names_.begin());
    if (fingerprints_[c.upstream] != text("fingerprint")) return std::nullopt;  // not this one
    c.model = std::string(text("model"));
    auto state = std::find(std::begin(state_names), std::end(state_names), text("state"));
    if (state == std::end(state_names)) return std::nullopt;
    c.now = static_cast<health_board::state>(state - std::begin(state_names));
    if (const auto* f = o.if_contains("failures"); f && f->is_int64())
        c.failures = static_cast<int>(f->as_int64());
    if (timed(c.now)) {
        const auto* until = o.if_contains("until");
        if (!until || !until->is_int64()) return std::nullopt;
        auto left = until->as_int64() - now_ms();
        if (left <= 0) return std::nullopt;  // over already
        c.until = clock::now() + std::chrono::milliseconds(left);
    }
    return c;
}

void health_share::publish(health_board::change c) {
    auto text = message(c);
    net::post(io_, [this, c = std::move(c), text = std::move(text)]() mutable {
        if (stopping_) return;
        // The key: a cooldown or a refused key is kept until it ends; a restore removes it.
        auto key = key_of(names_[c.upstream], c.model);
        if (timed(c.now)) {
            auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.until - clock::now());
            queue_.push_back(
                {"SET", key, text, "PX",
                 std::to_string(std::max<long long>(1, static_cast<long long>(ms.count())))});
        } else {
            queue_.push_back({"DEL", key});
        }
        queue_.push_back({"PUBLISH", channel, std::move(text)});
        while (queue_.size() > queue_limit) queue_.pop_front();
        if (!sending_) {
            sending_ = true;
            tasks_.spawn("sender", send_queued());
        }
    });
}

net::awaitable<void> health_share::send_queued() {
    while (!queue_.empty() && !stopping_) {
        auto command = std::move(queue_.front());
        queue_.pop_front();
        if (!writer_ || !writer_->open()) {
            writer_ = std::make_unique<io::redis_connection>(io_.get_executor());
            auto problem = co_await writer_->connect(address_);
            if (!problem.empty()) {
                outage(problem);
                writer_->close();
                continue;  // dropped: the replicas keep their own health meanwhile
            }
        }
        auto reply = co_await writer_->command(command);
        if (!reply || reply->type == REDIS_REPLY_ERROR)
            outage(reply ? std::string(text_of(reply.get())) : "the connection was lost");
    }
    sending_ = false;
}

net::awaitable<bool> health_share::load(io::redis_connection& conn) {
    std::string cursor = "0";
    do {
        std::vector<std::string> scan{"SCAN",  cursor, "MATCH", std::string(channel) + ":*",
                                      "COUNT", "500"};
        auto page = co_await conn.command(scan);
        if (!page || page->type != REDIS_REPLY_ARRAY || page->elements != 2) co_return false;
        cursor = std::string(text_of(page->element[0]));
        const auto* keys = page->element[1];
        for (std::size_t i = 0; keys->type == REDIS_REPLY_ARRAY && i < keys->elements; ++i) {
            std::vector<std::string> get{"GET", std::string(text_of(keys->element[i]))};
            auto value = co_await conn.command(get);
            if (!value) co_return false;
            if (value->type == REDIS_REPLY_STRING)
                if (auto c = read(text_of(value.get()))) board_.apply(*c);
        }
    } while (cursor != "0" && !stopping_);
    co_return true;
}

net::awaitable<void> health_share::subscribe() {
    auto pause = std::chrono::milliseconds(250);
    while (!stopping_) {
        listener_ = std::make_unique<io::redis_connection>(io_.get_executor());
        auto problem = co_await listener_->connect(address_);
        // The cooldowns kept while this replica was away, then every change from now on. (A
        // change published between the two is missed: its target fails here once and is
        // cooled by this replica's own board.)
        if (problem.empty() && !co_await load(*listener_))
            problem = "reading the shared cooldowns failed";
        if (problem.empty()) {
            std::vector<std::string> command{"SUBSCRIBE", channel};
            auto reply = co_await listener_->command(command);
            if (!reply || reply->type == REDIS_REPLY_ERROR) problem = "SUBSCRIBE was refused";
        }
        if (problem.empty()) {
            if (down_) {
                observability::log_info("routes: upstream health is shared through Redis again");
                down_ = false;
            }
            pause = std::chrono::milliseconds(250);
            for (;;) {
                auto r = co_await listener_->next_reply();
                if (!r) break;
                if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
                    text_of(r->element[0]) == "message")
                    if (auto c = read(text_of(r->element[2]))) board_.apply(*c);
            }
            problem = "the connection was lost";
        }
        listener_->close();
        if (stopping_) break;
        outage(problem);
        pause_->expires_after(pause);
        co_await pause_->async_wait(use_ec);
        pause = std::min<std::chrono::milliseconds>(pause * 2, 10s);
    }
}

void health_share::outage(const std::string& problem) {
    if (down_ || stopping_) return;
    down_ = true;
    observability::log_warn("routes: Redis at " + address_.host + ":" + address_.port + ": " +
                            problem +
                            "; each replica keeps its own upstream health until it is back");
}

}  // namespace gateway::upstream
