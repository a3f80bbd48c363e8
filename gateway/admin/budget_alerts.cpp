#include "gateway/admin/budget_alerts.hpp"

#include "gateway/clock.hpp"
#include "gateway/ids.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::admin {

namespace json = boost::json;

std::vector<unsigned> crossed_thresholds(const std::vector<unsigned>& thresholds,
                                         std::uint64_t budget, std::uint64_t before,
                                         std::uint64_t after) {
    std::vector<unsigned> out;
    for (std::uint64_t percent : thresholds) {
        // The least spend that is `percent` of the budget: budget * percent / 100 rounded up,
        // without the product (which could overflow).
        auto line = budget / 100 * percent + (budget % 100 * percent + 99) / 100;
        if (before < line && after >= line) out.push_back(static_cast<unsigned>(percent));
    }
    return out;
}

namespace {

// The webhook as the gateway's outbound client sees an upstream: every step (connecting, the
// answer's head, its body) within the alert's timeout; no connection is kept between alerts.
config::upstream_config webhook_upstream(const config::budget_alerts_config& settings) {
    config::upstream_config up;
    up.name = "budget-alerts";
    up.base_url = settings.webhook;
    up.endpoint = settings.endpoint;
    up.connect_timeout = settings.timeout;
    up.first_byte_timeout = settings.timeout;
    up.idle_timeout = settings.timeout;
    up.max_idle_connections = 0;
    return up;
}

// One post of `body`: "" when the webhook answered 2xx, else what went wrong.
net::awaitable<std::string> post_once(upstream::pool& pool, std::string head, std::string body) {
    auto executor = co_await net::this_coro::executor;
    std::optional<upstream::response_parser> parser;
    upstream::exchange_hooks hooks;
    auto started =
        co_await upstream::start_exchange(pool, executor, head, body, parser, false, true, hooks);
    if (!started.conn) co_return started.failed.detail;
    std::string answer;
    auto failed = co_await upstream::read_body(*started.conn, *parser, answer, 64 * 1024,
                                               pool.upstream().idle_timeout);
    if (failed) co_return failed.detail;
    auto status = parser->get().result_int();
    if (status / 100 != 2) co_return "it answered " + std::to_string(status);
    co_return std::string();
}

// Posts `body` to the webhook `settings` names, on a private event loop of the calling thread.
std::string post(const config::budget_alerts_config& settings,
                 std::shared_ptr<net::ssl::context> tls, const std::string& body) {
    auto up = webhook_upstream(settings);
    net::io_context io;
    std::string problem;
    {
        upstream::pool pool(up, std::move(tls));
        auto head = upstream::json_post_head(up, "", "", false, "User-Agent: contextgate\r\n",
                                             random_id("alert_", 8), body.size());
        auto done = net::co_spawn(io, post_once(pool, std::move(head), body), net::use_future);
        io.run();
        try {
            problem = done.get();
        } catch (const std::exception& e) {
            problem = e.what();
        }
    }
    return problem;
}

std::string money(std::uint64_t nano) {
    return "$" + config::usd_text(nano);
}

}  // namespace

budget_alerts::budget_alerts(const config::budget_alerts_config& settings) {
    configure(settings);
    thread_ = std::thread([this] { run(); });
}

budget_alerts::~budget_alerts() {
    stop();
}

void budget_alerts::configure(const config::budget_alerts_config& settings) {
    auto next = std::make_shared<destination>();
    next->settings = settings;
    if (!settings.webhook.empty() && settings.endpoint.tls) {
        auto made = upstream::make_client_context(webhook_upstream(settings));
        if (made)
            next->tls = *made.value;
        else
            observability::log_warn("budget alerts: " + made.error +
                                    "; the webhook's posts will fail");
    }
    std::lock_guard lock(mutex_);
    destination_ = std::move(next);
}

std::shared_ptr<const budget_alerts::destination> budget_alerts::current() const {
    std::lock_guard lock(mutex_);
    return destination_;
}

void budget_alerts::observe(const config::virtual_key& key, const spend_change& change) {
    alert({"Key `" + key.name + "`", json::object{{"key_id", key.id}, {"key_name", key.name}},
           key.budget_usd_nano, key.budget_period},
          change);
}

void budget_alerts::observe(const config::team_config& team, const spend_change& change) {
    alert({"Team `" + team.name + "`", json::object{{"team", team.name}}, team.budget_usd_nano,
           team.budget_period},
          change);
}

void budget_alerts::alert(const budget_holder& holder, const spend_change& change) {
    auto to = current();
    auto crossed = crossed_thresholds(to->settings.thresholds, holder.budget_usd_nano,
                                      change.before, change.after);
    if (crossed.empty()) return;
    auto period = std::string(config::budget_period_name(holder.period));
    auto ends = period_end(holder.period, change.period_start);
    for (auto percent : crossed) {
        auto text = holder.named + " has spent " + money(change.after) + " of its " +
                    money(holder.budget_usd_nano) + " budget per " + period + " (" +
                    std::to_string(percent) + " % reached); the budget resets at " +
                    config::format_time(ends) + ".";
        observability::log_warn("budget alert: " + text);
        if (to->settings.webhook.empty()) continue;
        json::object event{
            {"type", "budget_threshold_crossed"},
            {"text", text},
            {"threshold_percent", percent},
            {"spent_usd", static_cast<double>(change.after) / 1e9},
            {"budget_usd", static_cast<double>(holder.budget_usd_nano) / 1e9},
            {"period", period},
            {"period_start", config::format_time(change.period_start)},
            {"period_end", config::format_time(ends)},
            {"time", config::format_time(now_ms())},
        };
        for (const auto& [name, value] : holder.members) event[name] = value;
        std::unique_lock lock(mutex_);
        if (queue_.size() >= max_queued) {
            lock.unlock();
            observability::log_warn("budget alerts: " + std::to_string(max_queued) +
                                    " alerts wait for the webhook already; this one is dropped");
            continue;
        }
        queue_.push_back({json::serialize(event), to});
        wake_.notify_one();
    }
}

void budget_alerts::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void budget_alerts::run() {
    io::name_this_thread("budget-alerts");
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        auto next = std::move(queue_.front());
        queue_.pop_front();
        bool last_chance = stopping_;
        lock.unlock();
        const auto& settings = next.to->settings;
        auto problem = post(settings, next.to->tls, next.body);
        // One more try a second later (none once stopping), then the event is given up.
        if (!problem.empty() && !last_chance) {
            lock.lock();
            bool stopped =
                wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
            lock.unlock();
            if (!stopped) problem = post(settings, next.to->tls, next.body);
        }
        if (!problem.empty())
            observability::log_warn("budget alerts: the webhook at " + settings.endpoint.host +
                                    ":" + std::to_string(settings.endpoint.port) +
                                    " did not take an alert: " + problem + "; it is dropped");
        lock.lock();
    }
}

}  // namespace gateway::admin
