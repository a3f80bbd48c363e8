#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/upstream/connection.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

// The machinery every cloud credential the gateway fetches shares: Bedrock's temporary AWS
// credentials (aws::credentials_provider), Vertex AI's and Entra ID's access tokens
// (token_sources.hpp). Included by their .cpp files only: it brings the io_context and its thread.
namespace gateway::upstream {

// What a refresher says in its errors and logs, and when it fetches again.
struct refresh_settings {
    std::string upstream;  // the upstream's name
    std::string what;      // what is fetched: "AWS credentials", "access token"
    std::string origin;    // where from, never a secret: "the metadata server (…)"
    std::string thread;    // its thread's role ("cg-" and 12 characters are shown)
    // A value is replaced this long before it expires (half way through a shorter life).
    config::duration refresh_early{300'000};
    // After a failed fetch the failure is the answer for this long, rather than every request
    // asking again (the value in hand serves meanwhile while it has not expired).
    config::duration retry_after_failure{5'000};
};

// Hands out one fetched value (temporary credentials, an access token) to every worker: fetched
// at the first call and again `refresh_early` before it expires, on a thread of the refresher's
// own, one fetch at a time. While the value in hand has not expired callers get it at once (its
// refresh runs meanwhile); only callers without one await the fetch. A failed fetch is an error
// value that says why (and, within `retry_after_failure`, the answer without asking again);
// nothing throws into a request, and every wait is bounded by the fetch's own timeouts.
// Thread-safe.
template <class T>
class refresher {
public:
    using clock = std::chrono::system_clock;
    // One fetch, run on the refresher's thread. `hooks`: in_use and abandoned as start_exchange
    // takes them (stop() closes the connection in use and abandons the fetch). The error says
    // what failed, without the upstream's name or the origin (the refresher adds them).
    using fetch_function =
        std::function<boost::asio::awaitable<config::parsed<T>>(const exchange_hooks& hooks)>;
    // When a value stops working.
    using expiry_function = std::function<clock::time_point(const T&)>;

    struct answer {
        std::shared_ptr<const T> value;
        std::string error;  // set when `value` is null: why there is none
    };

    refresher(refresh_settings s, fetch_function fetch, expiry_function expiry)
        : settings_(std::move(s)), fetch_(std::move(fetch)), expiry_(std::move(expiry)) {}
    ~refresher() { stop(); }
    refresher(const refresher&) = delete;
    refresher& operator=(const refresher&) = delete;

    const refresh_settings& settings() const { return settings_; }

    // The value to use now. Resumes on the caller's executor. After stop(): an error.
    boost::asio::awaitable<answer> current() {
        std::optional<answer> known;
        bool due = false;
        {
            std::lock_guard lock(mutex_);
            known = known_answer();
            // The value in hand serves while its replacement is fetched: a slow or hanging
            // endpoint delays nobody until the value expires.
            due = known && known->value && refresh_due();
            if (due) fetching_ = true;
        }
        if (due) refresh_in_background();
        if (known) co_return std::move(*known);
        auto hold = start();
        if (!hold) co_return answer{nullptr, stopping};
        auto joined = join_fetch();
        auto got =
            co_await boost::asio::co_spawn(io_, std::move(joined), boost::asio::use_awaitable);
        co_return got;
    }

    // Told that the upstream refused a value (a 401 to the token it carried): drops the value in
    // hand if `refused` says it is that one, so that the next caller awaits a new one rather than
    // hearing the refusal again until the value's refresh. A newer value stays.
    void invalidate(const std::function<bool(const T&)>& refused) {
        std::lock_guard lock(mutex_);
        if (value_ && refused(*value_)) value_.reset();
    }

    // Cancels a fetch under way (its waiters get an error) and joins the thread. Safe twice.
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopped_ = true;
        }
        if (!thread_.joinable()) return;
        boost::asio::post(io_, [this] {
            tasks_.cancel();
            if (in_use_) in_use_->close();
            if (arrived_) arrived_->cancel();
            work_.reset();
        });
        thread_.join();
    }

private:
    static constexpr const char* stopping = "the gateway is stopping";
    using hold = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

    bool usable(clock::time_point now) const { return value_ && expiry_(*value_) > now; }

    // Starts the thread at the first call. While the returned hold lives the thread runs on;
    // none once stopped.
    std::optional<hold> start() {
        std::lock_guard lock(mutex_);
        if (stopped_) return std::nullopt;
        if (!started_) {
            started_ = true;
            work_.emplace(io_.get_executor());
            thread_ = std::thread([this] {
                io::name_this_thread(settings_.thread);
                io_.run();
            });
        }
        return boost::asio::make_work_guard(io_);
    }

    // Under `mutex_`: whether the last fetch failed within `retry_after_failure`.
    bool pausing() const {
        return !error_.empty() &&
               std::chrono::steady_clock::now() - failed_at_ < settings_.retry_after_failure;
    }

    // The answer from what is known, under `mutex_`: the value while it has not expired; or,
    // within the pause after a failure, the failure; or nothing (a fetch is needed).
    std::optional<answer> known_answer() const {
        if (stopped_) return answer{nullptr, stopping};
        if (usable(clock::now())) return answer{value_, {}};
        if (pausing()) return answer{nullptr, error_};
        return std::nullopt;
    }

    // Under `mutex_`: whether the value in hand is due for its refresh and none is under way (nor
    // paused after a failure).
    bool refresh_due() const { return clock::now() >= renew_at_ && !fetching_ && !pausing(); }

    // Starts a fetch that nobody awaits (`fetching_` is set).
    void refresh_in_background() {
        auto hold = start();
        if (!hold) return;
        // (The hold keeps the thread running until the fetch has started.)
        boost::asio::post(io_, [this, hold = std::move(*hold)] {
            {
                std::lock_guard lock(mutex_);
                if (stopped_) return;  // (stop() has cancelled the fetches already)
            }
            fetch_under_way();
        });
    }

    // On the refresher's thread: the timer the fetch under way cancels when it ends, that fetch
    // started if there was none.
    std::shared_ptr<boost::asio::steady_timer> fetch_under_way() {
        if (!arrived_) {
            {
                std::lock_guard lock(mutex_);
                fetching_ = true;
            }
            arrived_ = std::make_shared<boost::asio::steady_timer>(io_);
            arrived_->expires_at(std::chrono::steady_clock::time_point::max());
            tasks_.spawn(settings_.what + " of upstream " + settings_.upstream, fetch());
        }
        return arrived_;
    }

    // On the refresher's thread: the answer once the fetch under way, or a new one, has ended.
    boost::asio::awaitable<answer> join_fetch() {
        namespace net = boost::asio;
        co_await net::this_coro::throw_if_cancelled(false);
        {
            std::lock_guard lock(mutex_);
            if (auto known = known_answer()) co_return std::move(*known);
        }
        auto waited = fetch_under_way();  // the fetch lets go of it when it ends
        co_await waited->async_wait(net::as_tuple(net::use_awaitable));
        std::lock_guard lock(mutex_);
        if (stopped_) co_return answer{nullptr, stopping};
        // A failed fetch still leaves the value in hand to use until it expires.
        if (usable(clock::now())) co_return answer{value_, {}};
        co_return answer{nullptr, error_.empty() ? "the wait was cancelled" : error_};
    }

    // One fetch; its outcome goes into `value_` or `error_`.
    boost::asio::awaitable<void> fetch() {
        co_await boost::asio::this_coro::throw_if_cancelled(false);
        exchange_hooks hooks;
        hooks.in_use = [this](connection* c) { in_use_ = c; };
        hooks.abandoned = [this] {
            std::lock_guard lock(mutex_);
            return stopped_;
        };
        auto got = co_await fetch_(hooks);
        in_use_ = nullptr;
        std::string said;
        {
            std::lock_guard lock(mutex_);
            fetching_ = false;
            if (got) {
                value_ = std::make_shared<const T>(std::move(*got.value));
                error_.clear();
                // refresh_early before it expires, or half way through a shorter life: a value
                // that lives less than refresh_early is still used before it is fetched again.
                auto now = clock::now();
                auto life = expiry_(*value_) - now;
                renew_at_ = now + std::max(life - std::chrono::duration_cast<clock::duration>(
                                                      settings_.refresh_early),
                                           life / 2);
                auto until = std::chrono::duration_cast<std::chrono::milliseconds>(
                    expiry_(*value_).time_since_epoch());
                said = "upstream `" + settings_.upstream + "`: " + settings_.what + " from " +
                       settings_.origin + ", until " + config::format_time(until.count());
            } else if (!stopped_) {  // (a fetch stop() cut short is no news)
                error_ = "no " + settings_.what + " for upstream `" + settings_.upstream +
                         "` from " + settings_.origin + ": " + got.error;
                failed_at_ = std::chrono::steady_clock::now();
                said = error_ +
                       (usable(clock::now()) ? "; the one in hand serves until it expires" : "");
            }
        }
        if (got)
            observability::log_info(said);
        else if (!said.empty())
            observability::log_warn(said);
        auto done = std::move(arrived_);
        if (done) done->cancel();
    }

    refresh_settings settings_;
    fetch_function fetch_;
    expiry_function expiry_;

    // What the callers share, under `mutex_`.
    std::mutex mutex_;
    std::shared_ptr<const T> value_;
    clock::time_point renew_at_;  // when `value_` is fetched again
    std::string error_;           // the last fetch's failure; "" after a success
    std::chrono::steady_clock::time_point failed_at_;
    bool fetching_ = false;  // a fetch is asked for or under way
    bool started_ = false;
    bool stopped_ = false;

    // What the refresher's thread alone touches.
    boost::asio::io_context io_;
    std::optional<hold> work_;
    // The fetch, owned here: stop() cancels it and the thread runs until it has ended.
    io::task_group tasks_{io_.get_executor(), [](const std::string& task, std::exception_ptr e) {
                              observability::log_stray(e, task);
                          }};
    // While a fetch runs: its waiters wait on it, and the fetch cancels it when it ends.
    std::shared_ptr<boost::asio::steady_timer> arrived_;
    connection* in_use_ = nullptr;
    std::thread thread_;
};

}  // namespace gateway::upstream
