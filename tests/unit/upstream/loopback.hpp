#pragma once

// A pool for an upstream listening on loopback, and connections opened through it with the
// upstream's end in the test's hands (the upstream/ unit tests).

#include "gateway/upstream/pool.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace gateway::testing {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// A pool for an upstream listening on loopback.
struct loopback {
    net::io_context io;
    tcp::acceptor acceptor{io, {net::ip::make_address("127.0.0.1"), 0}};
    config::upstream_config up;
    std::optional<upstream::pool> p;

    loopback() {
        up.name = "loop";
        up.base_url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
        up.endpoint = *config::parse_base_url(up.base_url).value;
        p.emplace(up, nullptr);
    }

    // A connection opened through the pool, and the upstream's end of it.
    std::pair<std::unique_ptr<upstream::connection>, tcp::socket> open() {
        auto conn = p->make(io.get_executor());
        auto opened = net::co_spawn(io, conn->open(up), net::use_future);
        tcp::socket server_side(io);
        bool accepted = false;
        acceptor.async_accept(server_side, [&](boost::system::error_code) { accepted = true; });
        // Only until both ends are up: the connection's deadline timer is still armed (the
        // gateway re-arms it before each use), and running it out would close the socket.
        while (!accepted ||
               opened.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready)
            io.run_one();
        BOOST_TEST_REQUIRE(!opened.get(), "the connection did not open");
        return {std::move(conn), std::move(server_side)};
    }
};

}  // namespace gateway::testing
