// The HTTP server itself: limits, malformed input, timeouts, health endpoints, graceful drain.
#include "gateway/app/server.hpp"

#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace integration_server_test {

using namespace gateway::testing;
namespace json = boost::json;

namespace {

std::string error_code_of(const response& r) {
    return std::string(json::parse(r.body).at("error").at("code").as_string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(server)

BOOST_AUTO_TEST_CASE(health_and_readiness) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto health = c.request(make_request("GET", "/healthz"));
    BOOST_TEST(health.status == 200u);
    BOOST_TEST(health.body == R"({"status":"ok"})");
    BOOST_TEST(health.header("x-request-id").size() == 32u);
    auto ready = c.request(make_request("GET", "/readyz", {}, "x-request-id: mine\r\n"));
    BOOST_TEST(ready.status == 200u);
    BOOST_TEST(ready.header("x-request-id") == "mine");
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(request_ids_are_generated_unique_and_forwarded) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto a = c.request(make_request("GET", "/v1/models", {}, "x-fake-mode: echo\r\n"));
    auto b = c.request(make_request("GET", "/v1/models", {}, "x-fake-mode: echo\r\n"));
    auto id_a = fake.requests()[0].header("x-request-id");
    auto id_b = fake.requests()[1].header("x-request-id");
    BOOST_TEST(id_a.size() == 32u);
    BOOST_TEST(id_a != id_b);
    BOOST_TEST(a.header("x-request-id") == id_a);  // the upstream sent none: ours is returned
}

BOOST_AUTO_TEST_CASE(unknown_paths_and_methods_use_the_openai_envelope) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto missing = c.request(make_request("GET", "/nothing/here"));
    BOOST_TEST(missing.status == 404u);
    BOOST_TEST(error_code_of(missing) == "not_found");
    auto wrong = c.request(make_request("POST", "/healthz", "{}"));
    BOOST_TEST(wrong.status == 405u);
    auto bare = c.request(make_request("GET", "/v1"));
    BOOST_TEST(bare.status == 404u);
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(oversized_body_is_413_without_reading_it) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.body_limit = 1024;
    running_gateway gw(config);
    client c(gw.port());
    c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
        "Content-Length: 2000000\r\n\r\n");
    auto r = c.read_response();
    BOOST_TEST(r.status == 413u);
    BOOST_TEST(error_code_of(r) == "request_too_large");
    BOOST_TEST(r.header("connection") == "close");
    client chunked(gw.port());
    std::string big(3000, 'x');
    auto r2 = chunked.request(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
        "chunked\r\n\r\n" +
        (std::string("bb8\r\n") + big + "\r\n0\r\n\r\n"));
    BOOST_TEST(r2.status == 413u);
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(malformed_requests_are_400) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.header_limit = 2048;
    running_gateway gw(config);
    {
        client c(gw.port());
        auto r = c.request("GARBAGE\r\n\r\n");
        BOOST_TEST(r.status == 400u);
        BOOST_TEST(error_code_of(r) == "bad_request");
        BOOST_TEST(c.closed_by_peer());
    }
    {
        client c(gw.port());
        auto r = c.request("POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n");
        BOOST_TEST(r.status == 400u);
    }
    {
        client c(gw.port());
        auto r = c.request("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                           std::string(4000, 'a') + "\r\n\r\n");
        BOOST_TEST(r.status == 400u);
        BOOST_TEST(error_code_of(r) == "request_header_too_large");
    }
    {
        client c(gw.port());
        auto r = c.request(
            "POST /v1/x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
        BOOST_TEST(r.status == 400u);
    }
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(slow_header_and_idle_keep_alive_are_closed) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.header_timeout = 300ms;
    config.server.keep_alive_timeout = 300ms;
    running_gateway gw(config);
    client slow(gw.port());
    slow.send("GET /healthz HTTP/1.1\r\nHost:");  // and then nothing
    auto started = clock::now();
    BOOST_TEST(slow.closed_by_peer());
    BOOST_TEST((clock::now() - started < 3s));
    client idle(gw.port());
    BOOST_TEST(idle.request(make_request("GET", "/healthz")).status == 200u);
    BOOST_TEST(idle.closed_by_peer());
}

BOOST_AUTO_TEST_CASE(a_client_stalling_mid_body_is_closed_after_body_timeout) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.body_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
        "100\r\n\r\n{\"model\":");
    auto started = clock::now();
    BOOST_TEST(c.closed_by_peer());
    BOOST_TEST((clock::now() - started < 3s));
    BOOST_TEST(fake.requests().empty());  // nothing half-read goes upstream
}

BOOST_AUTO_TEST_CASE(a_client_that_stops_reading_is_closed_after_write_timeout) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.write_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    // A 24 MB echo: far more than the socket buffers hold while the client reads nothing.
    std::string body(24 << 20, 'x');
    c.send(make_request("POST", "/v1/files", body, "x-fake-mode: echo\r\n"));
    BOOST_TEST_REQUIRE(fake.wait_requests(1, 5s));
    // The gateway gives up on the client and lets go of the upstream connection too.
    BOOST_TEST(fake.wait_connections_open(0, 5s));
}

BOOST_AUTO_TEST_CASE(connection_close_and_max_requests_are_honoured) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.max_requests_per_connection = 2;
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(make_request("GET", "/v1/models", {}, "Connection: close\r\n"));
    BOOST_TEST(r.header("connection") == "close");
    BOOST_TEST(c.closed_by_peer());
    client twice(gw.port());
    BOOST_TEST(twice.request(make_request("GET", "/healthz")).status == 200u);
    BOOST_TEST(twice.request(make_request("GET", "/healthz")).status == 200u);
    BOOST_TEST(twice.closed_by_peer());
}

BOOST_AUTO_TEST_CASE(graceful_drain_finishes_in_flight_streams_and_refuses_new_connections) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.drain_time = 10s;
    running_gateway gw(config);
    client idle(gw.port());
    BOOST_TEST(idle.request(make_request("GET", "/healthz")).status == 200u);
    client streaming(gw.port());
    streaming.send(make_request("POST", "/v1/chat/completions", R"({"model":"m","stream":true})",
                                "x-fake-delay-ms: 100\r\n"));
    response r;
    BOOST_TEST_REQUIRE(streaming.read_header(r));
    BOOST_TEST_REQUIRE(streaming.read_piece(r).has_value());
    gw.server().stop();
    BOOST_TEST(idle.closed_by_peer());  // idle keep-alive connections close at once
    while (streaming.read_piece(r)) {
    }
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("m", false, false)));
    BOOST_TEST(streaming.closed_by_peer());  // closed once its response is done
    gw.server().wait();
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket probe(io);
    boost::system::error_code ec;
    probe.connect({boost::asio::ip::make_address("127.0.0.1"), gw.port()}, ec);
    BOOST_TEST(ec == boost::asio::error::connection_refused);
}

BOOST_AUTO_TEST_CASE(shutdown_is_prompt_with_pooled_upstream_connections) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.upstreams[0].idle_timeout = 60s;  // a pooled connection's last deadline
    config.upstreams[0].first_byte_timeout = 60s;
    running_gateway gw(config);
    {
        client c(gw.port());
        for (int i = 0; i < 3; ++i)
            BOOST_TEST(c.request(make_request("POST", "/v1/chat/completions", "{}")).status ==
                       200u);
    }
    auto started = clock::now();
    gw.server().stop();
    gw.server().wait();
    BOOST_TEST((clock::now() - started < 1s));
    BOOST_TEST(fake.wait_connections_open(0, 2s));  // the pooled connections were closed
}

BOOST_AUTO_TEST_CASE(drain_time_bounds_shutdown) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.drain_time = 300ms;
    running_gateway gw(config);
    client stuck(gw.port());
    stuck.send(make_request("POST", "/v1/chat/completions", "{}", "x-fake-mode: stall\r\n"));
    BOOST_TEST_REQUIRE(fake.wait_requests(1, 2s));
    auto started = clock::now();
    gw.server().stop();
    // The request waiting on the stalled upstream is told why, then closed.
    auto r = stuck.read_response();
    BOOST_TEST(r.status == 503u, r.body);
    BOOST_TEST(r.body.find("shutting_down") != std::string::npos, r.body);
    gw.server().wait();
    BOOST_TEST((clock::now() - started < 2s));
    BOOST_TEST(stuck.closed_by_peer());
    BOOST_TEST(fake.wait_connections_open(0, 2s));  // the upstream request was cancelled too
}

BOOST_AUTO_TEST_CASE(start_fails_clearly_when_the_port_is_taken) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.listen.port = fake.port();
    gateway::app::server taken(config);
    auto error = taken.start();
    BOOST_TEST(error.find("cannot listen on 127.0.0.1:" + std::to_string(fake.port())) == 0u);
}

// The kernel wakes every worker for new connections on the shared socket, and the first one
// awake used to accept a whole burst: 16 connections opened at once went 16/0 or close to it.
// Each is served by the worker with the fewest connections instead.
BOOST_AUTO_TEST_CASE(a_burst_of_connections_is_spread_evenly_across_the_workers) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.workers = 2;
    running_gateway gw(config);
    // All connected (queued by the kernel) before any is served.
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 16; ++i) clients.push_back(std::make_unique<client>(gw.port()));
    for (auto& c : clients) {
        // Answered: the connection has been accepted and is being served.
        BOOST_TEST_REQUIRE(c->request(make_request("GET", "/healthz")).status == 200u);
        // Handed over or not, the connection goes on serving, upstream requests included.
        BOOST_TEST_REQUIRE(c->request(make_request("GET", "/v1/models")).status == 200u);
    }
    auto loads = gw.server().connections_per_worker();
    BOOST_TEST_REQUIRE(loads.size() == 2u);
    BOOST_TEST(loads[0] + loads[1] == 16u);
    // Two workers accepting at the same moment may both choose one of them: off by one at most.
    BOOST_TEST(std::max(loads[0], loads[1]) - std::min(loads[0], loads[1]) <= 1u);

    // A closed connection no longer counts, wherever it was served.
    clients.clear();
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (gw.server().connections_per_worker() != std::vector<std::size_t>{0, 0} &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    BOOST_TEST((gw.server().connections_per_worker() == std::vector<std::size_t>{0, 0}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_server_test
