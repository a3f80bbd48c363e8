// The Asio change in third_party/asio-1.81-patch: a short read of a socket waits for the next
// readiness event instead of calling recv() again at once, and loses no byte doing so.
#include "gateway/io/socket_input.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <optional>
#include <string>

#include <dlfcn.h>
#include <sys/socket.h>

namespace io_short_read_test {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

// recv() calls made on one descriptor. The test binary's own recv() comes first in symbol
// lookup, so Asio's calls land here and go on to the C library's.
std::atomic<int> watched_fd{-1};
std::atomic<int> recv_calls{0};

}  // namespace

extern "C" ssize_t recv(int fd, void* data, size_t size, int flags) {
    using recv_fn = ssize_t (*)(int, void*, size_t, int);
    static auto next = reinterpret_cast<recv_fn>(dlsym(RTLD_NEXT, "recv"));
    if (fd == watched_fd.load()) recv_calls.fetch_add(1);
    return next(fd, data, size, flags);
}

namespace {

struct socket_pair {
    net::io_context io;
    tcp::socket near{io};
    tcp::socket far{io};
    char buffer[64] = {};
    std::optional<std::size_t> got;  // set when the pending read completed
    boost::system::error_code read_ec;

    socket_pair() {
        tcp::acceptor acceptor(io, {net::ip::make_address("127.0.0.1"), 0});
        near.connect(acceptor.local_endpoint());
        far = acceptor.accept();
        watched_fd = near.native_handle();
    }
    ~socket_pair() { watched_fd = -1; }

    void send(std::string_view bytes) { net::write(far, net::buffer(bytes)); }

    void start_read() {
        got.reset();
        near.async_read_some(net::buffer(buffer),
                             [this](boost::system::error_code ec, std::size_t n) {
                                 read_ec = ec;
                                 got = n;
                             });
    }

    // Runs the io_context until the pending read completes, at most `limit`.
    bool wait_read(std::chrono::milliseconds limit = 2000ms) {
        io.restart();
        net::steady_timer guard(io, limit);
        guard.async_wait([](boost::system::error_code) {});
        while (!got && guard.expiry() > std::chrono::steady_clock::now()) io.run_one_for(limit);
        return got.has_value();
    }

    std::string read_bytes() const { return std::string(buffer, got.value_or(0)); }

    // A short read as the gateway makes them: the read waits, the bytes arrive, the reactor
    // reads them on their readiness event.
    void short_read(std::string_view bytes) {
        start_read();
        io.restart();
        io.poll();
        BOOST_TEST_REQUIRE(!got.has_value());
        send(bytes);
        BOOST_TEST_REQUIRE(wait_read());
        BOOST_TEST_REQUIRE(read_bytes() == bytes);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(io_short_read)

BOOST_AUTO_TEST_CASE(a_read_after_a_short_one_waits_for_readiness_without_calling_recv) {
    socket_pair p;
    p.short_read("abc");  // 3 bytes of 64

    int before = recv_calls.load();
    p.start_read();
    p.io.poll();
    BOOST_TEST(!p.got.has_value());
    // Unpatched, Asio tries the read at once and recv() fails with EAGAIN.
    BOOST_TEST(recv_calls.load() == before);

    p.send("de");
    BOOST_TEST_REQUIRE(p.wait_read());
    BOOST_TEST(p.read_bytes() == "de");
    BOOST_TEST(recv_calls.load() == before + 1);
}

BOOST_AUTO_TEST_CASE(bytes_that_arrive_while_no_read_is_pending_are_not_missed) {
    socket_pair p;
    p.short_read("abc");

    // The readiness event for these bytes is taken by the reactor while nothing reads.
    p.send("later");
    net::steady_timer idle(p.io, 50ms);
    idle.async_wait([](boost::system::error_code) {});
    p.io.run_for(100ms);
    p.io.restart();

    p.start_read();
    BOOST_TEST_REQUIRE(p.wait_read(1000ms));
    BOOST_TEST(p.read_bytes() == "later");
}

BOOST_AUTO_TEST_CASE(bytes_sent_from_the_short_reads_handler_are_read_next) {
    socket_pair p;
    p.near.async_read_some(net::buffer(p.buffer), [&](boost::system::error_code, std::size_t) {
        // Arrive after the short recv(), before the next read is queued.
        p.send("de");
        p.start_read();
    });
    p.io.poll();
    p.send("abc");
    p.io.run_one();
    BOOST_TEST_REQUIRE(p.wait_read());
    BOOST_TEST(p.read_bytes() == "de");
}

BOOST_AUTO_TEST_CASE(the_peer_closing_after_a_short_read_ends_the_next_read) {
    socket_pair p;
    p.short_read("abc");
    p.start_read();
    p.far.shutdown(tcp::socket::shutdown_send);
    BOOST_TEST_REQUIRE(p.wait_read());
    BOOST_TEST(p.read_ec == net::error::eof);
}

// The bytes and the close come in one readiness event: after the bytes are read no event is
// left to announce the end of stream, so the next read must not wait for one.
BOOST_AUTO_TEST_CASE(bytes_and_the_close_in_one_event_end_the_read_after_them) {
    socket_pair p;
    p.short_read("abc");
    p.start_read();
    p.io.poll();
    p.send("de");
    p.far.shutdown(tcp::socket::shutdown_send);
    BOOST_TEST_REQUIRE(p.wait_read());
    BOOST_TEST(p.read_bytes() == "de");
    p.start_read();
    BOOST_TEST_REQUIRE(p.wait_read(1000ms));
    BOOST_TEST(p.read_ec == net::error::eof);
}

BOOST_AUTO_TEST_CASE(bytes_and_a_reset_in_one_event_fail_the_read_after_them) {
    socket_pair p;
    p.short_read("abc");
    p.start_read();
    p.io.poll();
    p.send("de");
    // A close with a zero linger time sends a reset.
    p.far.set_option(net::socket_base::linger(true, 0));
    p.far.close();
    BOOST_TEST_REQUIRE(p.wait_read());
    BOOST_TEST(p.read_bytes() == "de");
    p.start_read();
    BOOST_TEST_REQUIRE(p.wait_read(1000ms));
    BOOST_TEST(p.read_ec == net::error::connection_reset);
}

// What a pool asks of an idle connection (gateway::io::may_have_input): after a short read
// nothing is pending, known without a recv(); once the reactor has seen the peer close, or
// bytes nobody asked for, that is known too, again without one.
BOOST_AUTO_TEST_CASE(an_idle_socket_is_known_quiet_or_closed_without_calling_recv) {
    for (bool stray_bytes : {false, true}) {
        socket_pair p;
        p.short_read("abc");
        int before = recv_calls.load();
        BOOST_TEST(!gateway::io::may_have_input(p.near));
        if (stray_bytes)
            p.send("x");
        else
            p.far.close();
        // The worker's reactor polls while other work is pending; here a timer keeps it polling.
        net::steady_timer tick(p.io);
        for (int i = 0; i < 200 && !gateway::io::may_have_input(p.near); ++i) {
            tick.expires_after(5ms);
            tick.async_wait([](boost::system::error_code) {});
            p.io.restart();
            p.io.run_one_for(50ms);
        }
        BOOST_TEST(gateway::io::may_have_input(p.near), (stray_bytes ? "bytes" : "close"));
        BOOST_TEST(recv_calls.load() == before);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_short_read_test
