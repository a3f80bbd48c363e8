#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <list>
#include <string>
#include <utility>

namespace gateway::io {

namespace net = boost::asio;

// The coroutines a component starts, owned together: spawn() starts one on the group's executor
// and the group keeps it until it ends; cancel() emits terminal cancellation to every one still
// going (each ends at its next cancellable wait, as a coroutine whose operation was aborted);
// size() is how many are left. Whoever owns the group's executor runs it until they have all
// ended, so a component's stop is "cancel the group, then let its io_context run out". Nothing
// the gateway starts is spawned bare-detached: a group owns it.
//
// A task that must finish a step before it stops (a run storing its state) is stopped by its own
// means first; the group still owns it and is waited for. A task's exception is handed to
// `on_error` with the task's name (it cannot reach anyone else).
//
// Not thread-safe: used on its executor's one thread (the engine's, the MCP hub's).
class task_group {
public:
    using error_handler = std::function<void(const std::string& task, std::exception_ptr)>;

    task_group(net::any_io_executor executor, error_handler on_error)
        : executor_(std::move(executor)), on_error_(std::move(on_error)) {}
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    // Starts `task` (an awaitable<void>) on the group's executor. After cancel(), a task started
    // is cancelled at once.
    template <class Task>
    void spawn(std::string name, Task task) {
        tasks_.emplace_front();
        auto it = tasks_.begin();
        it->name = std::move(name);
        net::co_spawn(
            executor_, std::move(task),
            net::bind_cancellation_slot(it->signal.slot(), [this, it](std::exception_ptr e) {
                if (e && on_error_) on_error_(it->name, e);
                // Removed once co_spawn is done with the slot the entry holds.
                net::post(executor_, [this, it] { tasks_.erase(it); });
            }));
        if (cancelled_) it->signal.emit(net::cancellation_type::terminal);
    }

    void cancel() {
        cancelled_ = true;
        for (auto& t : tasks_) t.signal.emit(net::cancellation_type::terminal);
    }

    std::size_t size() const { return tasks_.size(); }
    const net::any_io_executor& executor() const { return executor_; }

private:
    struct task {
        std::string name;
        net::cancellation_signal signal;
    };
    net::any_io_executor executor_;
    error_handler on_error_;
    std::list<task> tasks_;
    bool cancelled_ = false;
};

}  // namespace gateway::io
