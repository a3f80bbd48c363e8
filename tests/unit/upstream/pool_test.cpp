#include "gateway/upstream/pool.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

using namespace gateway::upstream;
namespace config = gateway::config;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

// A pool for an upstream listening on loopback.
struct loopback {
    net::io_context io;
    tcp::acceptor acceptor{io, {net::ip::make_address("127.0.0.1"), 0}};
    config::upstream_config up;
    std::optional<pool> p;

    loopback() {
        up.name = "loop";
        up.base_url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
        up.endpoint = *config::parse_base_url(up.base_url).value;
        p.emplace(up, nullptr);
    }

    // A connection opened through the pool, and the upstream's end of it.
    std::pair<std::unique_ptr<connection>, tcp::socket> open() {
        auto conn = p->make(io.get_executor());
        auto opened = net::co_spawn(io, conn->open(up), net::use_future);
        tcp::socket server_side(io);
        bool accepted = false;
        acceptor.async_accept(server_side, [&](boost::system::error_code) { accepted = true; });
        // Only until both ends are up: the connection's deadline timer is still armed (the
        // gateway re-arms it before each use), and running it out would close the socket.
        while (!accepted || opened.wait_for(0ms) != std::future_status::ready) io.run_one();
        BOOST_TEST_REQUIRE(!opened.get(), "the connection did not open");
        return {std::move(conn), std::move(server_side)};
    }
};

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
