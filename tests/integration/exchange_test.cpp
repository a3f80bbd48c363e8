// upstream::start_exchange and read_body against the fake upstream on loopback: the one way the
// passthrough and the model client talk to an upstream.
#include "gateway/upstream/exchange.hpp"

#include "gateway/error.hpp"
#include "tests/integration/harness.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <thread>

namespace integration_exchange_test {

using namespace gateway::testing;
namespace net = boost::asio;
namespace upstream = gateway::upstream;

namespace {

struct exchange_fixture {
    fake_upstream fake;
    gateway::config::gateway_config config = make_config(fake);
    // Declared before the pool: pooled connections hold sockets of this context, so the pool
    // must be destroyed first.
    net::io_context io;
    upstream::pool pool{config.upstreams[0], nullptr};

    static constexpr std::string_view body = R"({"model":"m"})";
    std::string head(std::string_view extra = {}) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n" + std::string(extra) + "\r\n";
    }
    // One exchange to its end: the status and the body, or the failure.
    std::pair<unsigned, std::string> once(std::string head, std::size_t limit = 1 << 20,
                                          bool* failed = nullptr) {
        auto work = [&]() -> net::awaitable<std::pair<unsigned, std::string>> {
            std::optional<upstream::response_parser> parser;
            upstream::exchange_hooks hooks;
            auto started = co_await upstream::start_exchange(pool, io.get_executor(), head, body,
                                                             parser, false, false, hooks);
            if (!started.conn) {
                if (failed) *failed = true;
                co_return std::pair<unsigned, std::string>{0, started.failed.detail};
            }
            std::string body;
            auto read = co_await upstream::read_body(*started.conn, *parser, body, limit,
                                                     std::chrono::seconds(5));
            if (read) {
                if (failed) *failed = true;
                co_return std::pair<unsigned, std::string>{0, read.detail};
            }
            if (parser->get().keep_alive()) pool.give_back(std::move(started.conn));
            co_return std::pair<unsigned, std::string>{parser->get().result_int(), body};
        };
        auto done = net::co_spawn(io, work(), net::use_future);
        // Until this exchange ends, not until the context runs out of work: a parked
        // connection's deadline timer stays pending until the time it was last armed for.
        io.restart();
        while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
        return done.get();
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(exchange)

BOOST_AUTO_TEST_CASE(a_pooled_connection_closed_while_idle_is_replaced_without_a_second_request) {
    exchange_fixture f;
    BOOST_TEST(f.once(f.head()).first == 200u);
    BOOST_TEST(f.once(f.head()).first == 200u);
    BOOST_TEST(f.fake.connections_accepted() == 1u);  // pooled
    // The upstream closes after this answer without saying so; the pool keeps the connection.
    BOOST_TEST(f.once(f.head("x-fake-close-after: 1\r\n")).first == 200u);
    BOOST_TEST(f.fake.wait_connections_open(0, 2s));
    // Idle for longer than the pool reuses a connection without asking its socket (pool::take:
    // one second), as a connection an upstream drops while idle is; and the gateway's loop runs
    // meanwhile, as a worker's does, so that its reactor has seen the close (may_have_input).
    std::this_thread::sleep_for(1100ms);
    f.io.restart();
    f.io.poll();
    auto requests_before = f.fake.requests().size();
    BOOST_TEST(f.once(f.head()).first == 200u);
    BOOST_TEST(f.fake.connections_accepted() == 2u);
    BOOST_TEST(f.fake.requests().size() == requests_before + 1);  // sent once, on the new one
}

BOOST_AUTO_TEST_CASE(a_body_over_the_limit_and_an_unreachable_upstream_are_failures) {
    exchange_fixture f;
    bool failed = false;
    auto [status, detail] = f.once(f.head(), 10, &failed);
    BOOST_TEST(failed);
    BOOST_TEST(detail.find("exceeds 10 bytes") != std::string::npos, detail);
    // A stopped upstream refuses the connection (it is not left to time out).
    f.fake.stop();
    failed = false;
    auto [s2, why] = f.once(f.head(), 1 << 20, &failed);
    BOOST_TEST(failed);
    BOOST_TEST(why.find("refused") != std::string::npos, why);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_exchange_test
