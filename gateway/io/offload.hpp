#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace gateway::io {

// Runs `work` on `where` (another thread's executor: the store's, the engine's, a pool) and
// resumes the awaiting coroutine on its own executor with the result, or with the exception
// `work` threw. The caller's executor is kept busy meanwhile, so its io_context does not run
// out of work while the result is on its way. `work` must own what it uses (capture by value).
template <class Work>
boost::asio::awaitable<std::invoke_result_t<Work&>> run_on(boost::asio::any_io_executor where,
                                                           Work work) {
    namespace net = boost::asio;
    using result = std::invoke_result_t<Work&>;
    // The initiations are named locals: GCC 12 mishandles a capturing lambda that is a temporary
    // of a co_await expression (it destroys the captures twice).
    if constexpr (std::is_void_v<result>) {
        auto initiation = [where](auto handler, Work work) mutable {
            auto home = net::make_work_guard(net::get_associated_executor(handler));
            net::post(where, [handler = std::move(handler), work = std::move(work),
                              home = std::move(home)]() mutable {
                std::exception_ptr failure;
                try {
                    work();
                } catch (...) {
                    failure = std::current_exception();
                }
                auto back = home.get_executor();
                net::post(back,
                          [handler = std::move(handler), failure,
                           home = std::move(home)]() mutable { std::move(handler)(failure); });
            });
        };
        co_await net::async_initiate<const net::use_awaitable_t<>&, void(std::exception_ptr)>(
            std::move(initiation), net::use_awaitable, std::move(work));
    } else {
        auto initiation = [where](auto handler, Work work) mutable {
            auto home = net::make_work_guard(net::get_associated_executor(handler));
            net::post(where, [handler = std::move(handler), work = std::move(work),
                              home = std::move(home)]() mutable {
                std::exception_ptr failure;
                std::optional<result> value;
                try {
                    value.emplace(work());
                } catch (...) {
                    failure = std::current_exception();
                }
                auto back = home.get_executor();
                net::post(back, [handler = std::move(handler), failure, value = std::move(value),
                                 home = std::move(home)]() mutable {
                    std::move(handler)(failure, std::move(value));
                });
            });
        };
        auto value = co_await net::async_initiate<const net::use_awaitable_t<>&,
                                                  void(std::exception_ptr, std::optional<result>)>(
            std::move(initiation), net::use_awaitable, std::move(work));
        co_return std::move(*value);
    }
}

// The other way round: runs an awaitable to its end from a thread that is no event loop (start-up,
// a background thread), on a private io_context, and returns its result or throws what it threw.
// Awaitables of the store resume on that io_context, so nothing else needs to run.
template <class T>
T run_blocking(boost::asio::awaitable<T> work) {
    namespace net = boost::asio;
    net::io_context io;
    auto done = net::co_spawn(io, std::move(work), net::use_future);
    io.run();
    return done.get();
}

}  // namespace gateway::io
