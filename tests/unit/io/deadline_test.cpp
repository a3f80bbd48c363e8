#include "gateway/io/deadline.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/test/unit_test.hpp>

namespace io_deadline_test {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// A connected loopback pair: reads on `near` wait until `far` writes, which it never does.
struct socket_pair {
    net::io_context io;
    tcp::socket near{io};
    tcp::socket far{io};
    // Read state lives here: the handler may run after the helper below has returned.
    char byte = 0;
    clock_type::time_point started;
    clock_type::duration failed_after = clock_type::duration::max();
    socket_pair() {
        tcp::acceptor acceptor(io, {net::ip::make_address("127.0.0.1"), 0});
        near.connect(acceptor.local_endpoint());
        far = acceptor.accept();
    }
};

// Starts a read on `near` and returns how long it took to fail, running the io_context at most
// `limit`; the optional step runs `at` into the wait.
clock_type::duration time_until_read_fails(socket_pair& p, clock_type::duration limit,
                                           std::function<void()> step = {},
                                           clock_type::duration at = {}) {
    p.started = clock_type::now();
    p.near.async_read_some(net::buffer(&p.byte, 1),
                           [&p](boost::system::error_code ec, std::size_t) {
                               if (ec) p.failed_after = clock_type::now() - p.started;
                           });
    net::steady_timer stepper(p.io, at);
    if (step)
        stepper.async_wait([step](boost::system::error_code ec) {
            if (!ec) step();
        });
    p.io.run_for(limit);
    return p.failed_after;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(io_deadline)

BOOST_AUTO_TEST_CASE(a_passed_deadline_closes_the_socket_and_fails_the_pending_read) {
    socket_pair p;
    gateway::io::deadline d(p.io.get_executor(), p.near);
    d.arm(50ms);
    auto took = time_until_read_fails(p, 2s);
    BOOST_TEST((took >= 45ms && took < 1s));
    BOOST_TEST(d.expired());
    BOOST_TEST(!p.near.is_open());
}

BOOST_AUTO_TEST_CASE(re_arming_later_extends_and_earlier_shortens) {
    socket_pair later;
    gateway::io::deadline extended(later.io.get_executor(), later.near);
    extended.arm(100ms);
    auto took = time_until_read_fails(
        later, 3s, [&] { extended.arm(400ms); }, 50ms);
    BOOST_TEST((took >= 400ms && took < 2s));  // 50 + 400, not 100

    socket_pair earlier;
    gateway::io::deadline shortened(earlier.io.get_executor(), earlier.near);
    shortened.arm(10s);
    took = time_until_read_fails(
        earlier, 3s, [&] { shortened.arm(50ms); }, 20ms);
    BOOST_TEST((took >= 60ms && took < 1s));
}

BOOST_AUTO_TEST_CASE(disarmed_or_destroyed_deadlines_never_fire) {
    socket_pair p;
    {
        gateway::io::deadline d(p.io.get_executor(), p.near);
        d.arm(50ms);
        d.disarm();
        auto took = time_until_read_fails(p, 300ms);
        BOOST_TEST((took == clock_type::duration::max()));
        BOOST_TEST(!d.expired());
        p.io.restart();
        d.arm(30ms);
    }  // destroyed while its timer is pending: the socket is left alone
    p.near.cancel();
    p.io.run_for(200ms);
    BOOST_TEST(p.near.is_open());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_deadline_test
