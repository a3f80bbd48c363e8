#include "gateway/upstream/pool.hpp"

#include "tests/unit/upstream/loopback.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>

namespace upstream_pool_test {

using namespace gateway::upstream;
using gateway::testing::loopback;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

// Closes the upstream's end and waits (bounded) until the close reached the connection.
void close_upstream_end(tcp::socket& server_side, connection& conn) {
    server_side.close();
    for (int i = 0; i < 2000 && conn.looks_alive(true); ++i) std::this_thread::sleep_for(1ms);
    BOOST_TEST_REQUIRE(!conn.looks_alive(true));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_pool)

BOOST_AUTO_TEST_CASE(a_connection_given_back_is_taken_again) {
    loopback l;
    auto [conn, server_side] = l.open();
    auto* same = conn.get();
    l.p->give_back(std::move(conn));
    auto again = l.p->take();
    BOOST_TEST(again.get() == same);
    BOOST_TEST(!l.p->take());  // only one was idle
}

// Within a second of coming back a connection is handed out without asking its socket (a GET
// meets a close by being sent again); a caller that must not send twice (a POST) asks, and a
// connection the upstream closed meanwhile is not handed to it.
BOOST_AUTO_TEST_CASE(a_probe_finds_a_connection_the_upstream_closed) {
    loopback l;
    auto [first, first_server] = l.open();
    auto [second, second_server] = l.open();
    close_upstream_end(first_server, *first);
    close_upstream_end(second_server, *second);
    auto* unprobed = second.get();
    l.p->give_back(std::move(first));
    l.p->give_back(std::move(second));
    BOOST_TEST(l.p->take().get() == unprobed);  // not asked: handed out as it is
    BOOST_TEST(!l.p->take(true));               // asked: the closed one is dropped
}

BOOST_AUTO_TEST_CASE(a_closed_pool_keeps_nothing) {
    loopback l;
    auto [conn, server_side] = l.open();
    l.p->close_all();
    l.p->give_back(std::move(conn));
    BOOST_TEST(!l.p->take());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_pool_test
