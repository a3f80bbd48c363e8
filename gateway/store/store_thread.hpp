#pragma once

#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace gateway::store {

// A thread that owns one database connection and runs the work posted to it, one piece at a
// time: how a store keeps blocking database calls off its callers' threads.
template <class Database>
class store_thread {
public:
    store_thread() = default;
    store_thread(const store_thread&) = delete;
    store_thread& operator=(const store_thread&) = delete;
    ~store_thread() { stop(); }

    void start(std::unique_ptr<Database> db, const char* role) {
        db_ = std::move(db);
        queued_ = &observability::metrics().store_queue.with({role});
        busy_.emplace(io_.get_executor());
        thread_ = std::thread([this, role] {
            io::name_this_thread(role);
            io::yield_to_workers();
            io_.run();
        });
    }
    // Finishes the queued work, then joins the thread.
    void stop() {
        busy_.reset();
        if (thread_.joinable()) thread_.join();
    }

    // Runs `work(db)` on the thread and resumes the caller with its result.
    // Counted in the store_queue gauge from the moment it is awaited until it is done.
    template <class Work>
    auto run(Work work) -> boost::asio::awaitable<std::invoke_result_t<Work&, Database&>> {
        queued_->add(1);
        auto counted = [db = db_.get(), queued = queued_, work = std::move(work)]() mutable {
            struct done {
                observability::gauge* queued;
                ~done() { queued->add(-1); }
            } leaving{queued};
            return work(*db);
        };
        if constexpr (std::is_void_v<std::invoke_result_t<Work&, Database&>>) {
            co_await io::run_on(io_.get_executor(), std::move(counted));
        } else {
            auto result = co_await io::run_on(io_.get_executor(), std::move(counted));
            co_return result;
        }
    }

    // Queues `work(db)` on the thread without waiting for it; `work` must not throw.
    template <class Work>
    void post(Work work) {
        queued_->add(1);
        boost::asio::post(io_,
                          [db = db_.get(), queued = queued_, work = std::move(work)]() mutable {
                              work(*db);
                              queued->add(-1);
                          });
    }

    // The connection itself, for use before the thread is busy (start-up, tests).
    Database& database() { return *db_; }

private:
    std::unique_ptr<Database> db_;
    observability::gauge* queued_ = nullptr;
    boost::asio::io_context io_{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> busy_;
    std::thread thread_;
};

}  // namespace gateway::store
