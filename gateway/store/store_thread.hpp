#pragma once

#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <thread>
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
        busy_.emplace(io_.get_executor());
        thread_ = std::thread([this, role] {
            io::name_this_thread(role);
            io_.run();
        });
    }
    // Finishes the queued work, then joins the thread.
    void stop() {
        busy_.reset();
        if (thread_.joinable()) thread_.join();
    }

    // Runs `work(db)` on the thread and resumes the caller with its result.
    template <class Work>
    auto run(Work work) {
        return io::run_on(io_.get_executor(),
                          [db = db_.get(), work = std::move(work)]() mutable { return work(*db); });
    }

    // The connection itself, for use before the thread is busy (start-up, tests).
    Database& database() { return *db_; }

private:
    std::unique_ptr<Database> db_;
    boost::asio::io_context io_{1};
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> busy_;
    std::thread thread_;
};

}  // namespace gateway::store
