#include "gateway/clock.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

namespace clock_test {

using namespace gateway;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(clock_suite)

// The coarse clock is steady_clock as of the kernel's last tick: never ahead of it, behind it by
// less than a tick (4 ms on Debian's kernels; 20 ms allowed for a slower one), and it moves on.
BOOST_AUTO_TEST_CASE(the_coarse_clock_trails_steady_clock_by_less_than_a_tick) {
    for (int i = 0; i < 50; ++i) {
        auto coarse = coarse_now();
        auto fine = std::chrono::steady_clock::now();
        BOOST_TEST((coarse <= fine));
        BOOST_TEST((fine - coarse < 20ms));
    }
    // It moves on, a tick at a time (awaited, at most a second).
    auto first = coarse_now();
    auto until = std::chrono::steady_clock::now() + 1s;
    while (coarse_now() == first && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    BOOST_TEST((coarse_now() > first));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace clock_test
