#include "gateway/io/offload.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <thread>

namespace io_offload_test {

namespace net = boost::asio;
using gateway::io::run_on;

BOOST_AUTO_TEST_SUITE(offload)

BOOST_AUTO_TEST_CASE(work_runs_there_and_the_caller_resumes_here) {
    net::io_context home;
    net::thread_pool there(1);
    std::thread::id worked_on, resumed_on;
    auto caller = [&]() -> net::awaitable<int> {
        auto work = [&] {
            worked_on = std::this_thread::get_id();
            return 41;
        };
        auto value = co_await run_on(there.get_executor(), work);
        resumed_on = std::this_thread::get_id();
        co_return value + 1;
    };
    auto done = net::co_spawn(home, caller(), net::use_future);
    home.run();  // returns only once the result is back: the caller's loop was kept busy
    BOOST_TEST(done.get() == 42);
    BOOST_TEST((worked_on != std::this_thread::get_id()));
    BOOST_TEST((resumed_on == std::this_thread::get_id()));
    there.join();
}

BOOST_AUTO_TEST_CASE(an_exception_reaches_the_caller_and_void_work_works) {
    net::io_context home;
    net::thread_pool there(1);
    int side_effect = 0;
    auto caller = [&]() -> net::awaitable<void> {
        auto work = [&] { side_effect = 7; };
        co_await run_on(there.get_executor(), work);
        auto failing = []() -> int { throw std::runtime_error("disk full"); };
        co_await run_on(there.get_executor(), failing);
    };
    auto done = net::co_spawn(home, caller(), net::use_future);
    home.run();
    BOOST_CHECK_THROW(done.get(), std::runtime_error);
    BOOST_TEST(side_effect == 7);
    there.join();
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_offload_test
