// io::write_all: a write the socket takes at once completes without a trip through the event
// loop; what it does not take is written asynchronously, in order; the deadline bounds the write
// and is disarmed once it is over.
#include "gateway/io/write_all.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>

namespace io_write_all_test {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using gateway::io::deadline;

namespace {

struct connection_pair {
    net::io_context io{1};
    tcp::socket near{io};
    tcp::socket far{io};
    deadline near_deadline{io.get_executor(), near};
    std::optional<boost::system::error_code> written;

    connection_pair() {
        tcp::acceptor acceptor(io, {net::ip::make_address("127.0.0.1"), 0});
        near.connect(acceptor.local_endpoint());
        far = acceptor.accept();
    }

    // Starts write_all of `bytes` on `near`; `written` is set when it is over.
    void write(const std::string& bytes, deadline::clock::duration within = 5s) {
        net::co_spawn(
            io,
            [](connection_pair& p, const std::string& bytes,
               deadline::clock::duration within) -> net::awaitable<void> {
                auto buffer = net::buffer(bytes);
                p.written =
                    co_await gateway::io::write_all(p.near, p.near_deadline, within, buffer);
            }(*this, bytes, within),
            net::detached);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(io_write_all)

// With async_write the coroutine would suspend and its completion wait for a later turn.
BOOST_AUTO_TEST_CASE(a_write_the_socket_takes_at_once_ends_in_the_turn_that_started_it) {
    connection_pair p;
    std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    p.write(bytes);
    BOOST_TEST_REQUIRE(p.io.poll_one() == 1u);  // the co_spawn: runs the coroutine
    BOOST_TEST_REQUIRE(p.written.has_value());
    BOOST_TEST(!*p.written);
    std::string got(bytes.size(), '\0');
    net::read(p.far, net::buffer(got));
    BOOST_TEST(got == bytes);
}

BOOST_AUTO_TEST_CASE(bytes_beyond_the_socket_buffer_follow_through_the_event_loop_in_order) {
    connection_pair p;
    std::string bytes(8 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 % 251);
    p.write(bytes);
    std::string got(bytes.size(), '\0');
    std::optional<boost::system::error_code> read;
    net::async_read(p.far, net::buffer(got),
                    [&](boost::system::error_code ec, std::size_t) { read = ec; });
    while (!p.written || !read) BOOST_TEST_REQUIRE(p.io.run_one_for(5s) == 1u);
    BOOST_TEST(!*p.written);
    BOOST_TEST(!*read);
    BOOST_TEST((got == bytes));
}

// Whatever the caller waits for after a write (an upstream slow to answer, a silent stream), the
// write's deadline does not close the connection under it.
BOOST_AUTO_TEST_CASE(the_deadline_is_disarmed_once_the_write_is_over) {
    connection_pair p;
    std::string bytes(8 << 20, 'x');  // too much for one sendmsg: the deadline is armed
    p.write(bytes, 200ms);
    std::string got(bytes.size(), '\0');
    net::async_read(p.far, net::buffer(got), [](boost::system::error_code, std::size_t) {});
    while (!p.written) BOOST_TEST_REQUIRE(p.io.run_one_for(5s) == 1u);
    BOOST_TEST_REQUIRE(!*p.written);

    net::steady_timer later(p.io, 500ms);
    bool waited = false;
    later.async_wait([&](boost::system::error_code) { waited = true; });
    while (!waited) BOOST_TEST_REQUIRE(p.io.run_one_for(5s) == 1u);
    BOOST_TEST(!p.near_deadline.expired());
    BOOST_TEST(p.near.is_open());
}

// A write that cannot finish in time fails, and the deadline says why.
BOOST_AUTO_TEST_CASE(a_write_the_peer_never_reads_fails_when_the_deadline_passes) {
    connection_pair p;
    std::string bytes(16 << 20, 'x');  // more than both socket buffers hold
    p.write(bytes, 200ms);
    while (!p.written) BOOST_TEST_REQUIRE(p.io.run_one_for(5s) == 1u);
    BOOST_TEST(static_cast<bool>(*p.written));
    BOOST_TEST(p.near_deadline.expired());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_write_all_test
