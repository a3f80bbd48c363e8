// The Asio change in third_party/asio-1.81-patch (detail/impl/scheduler.ipp): on a single-threaded
// io_context, the reactor's turn is passed over once when handlers are queued behind it, instead
// of polling epoll with a timeout of 0 that mostly finds nothing; and it is passed over only once
// in a row, so handlers that keep posting cannot starve I/O.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>
#include <optional>

#include <dlfcn.h>
#include <sys/epoll.h>

namespace io_reactor_turn_test {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// epoll_wait() calls with a timeout of 0 (polls) made by the thread that counts. The test
// binary's own epoll_wait() comes first in symbol lookup, so Asio's calls land here and go on to
// the C library's; other threads of the binary are not counted.
thread_local bool counting = false;
thread_local int polls = 0;

}  // namespace

extern "C" int epoll_wait(int epfd, struct epoll_event* events, int max_events, int timeout) {
    using epoll_wait_fn = int (*)(int, struct epoll_event*, int, int);
    static auto next = reinterpret_cast<epoll_wait_fn>(dlsym(RTLD_NEXT, "epoll_wait"));
    if (counting && timeout == 0) ++polls;
    return next(epfd, events, max_events, timeout);
}

namespace {

// A loopback connection on a single-threaded io_context, as each gateway worker has.
struct connection_pair {
    net::io_context io{1};
    tcp::socket near{io};
    tcp::socket far{io};
    char buffer[64] = {};
    std::optional<std::size_t> got;

    connection_pair() {
        tcp::acceptor acceptor(io, {net::ip::make_address("127.0.0.1"), 0});
        near.connect(acceptor.local_endpoint());
        far = acceptor.accept();
    }

    // Starts a read on `near` whose handler, when it runs, calls `then`.
    void start_read(std::function<void()> then = {}) {
        near.async_read_some(net::buffer(buffer),
                             [this, then](boost::system::error_code, std::size_t n) {
                                 got = n;
                                 if (then) then();
                             });
    }

    void send(std::string_view bytes) { net::write(far, net::buffer(bytes)); }
};

struct count_polls {
    count_polls() {
        polls = 0;
        counting = true;
    }
    ~count_polls() { counting = false; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(io_reactor_turn)

// The gateway's pattern: a readiness event's handler starts work whose completion is posted (a
// send that finished at once, a resumed coroutine). Unpatched, the reactor polls before running
// it (1 != 0).
BOOST_AUTO_TEST_CASE(a_completion_posted_by_an_io_handler_runs_without_a_poll_before_it) {
    connection_pair p;
    bool posted_ran = false;
    p.start_read([&] { net::post(p.io, [&] { posted_ran = true; }); });
    p.send("abc");

    count_polls counter;
    // Blocks in epoll_wait until the bytes are there, then runs the read's handler.
    BOOST_TEST_REQUIRE(p.io.run_one() == 1);
    BOOST_TEST_REQUIRE(p.got.value_or(0) == 3u);
    BOOST_TEST_REQUIRE(!posted_ran);
    BOOST_TEST_REQUIRE(p.io.run_one() == 1);
    BOOST_TEST(posted_ran);
    BOOST_TEST(polls == 0);
}

// Handlers that post a handler each time they run never leave the queue empty; the reactor must
// still get its turn and deliver the read. With the turn passed over every time, this read would
// never complete.
BOOST_AUTO_TEST_CASE(handlers_that_keep_posting_do_not_starve_the_reactor) {
    connection_pair p;
    p.start_read();
    int rounds = 0;
    std::optional<int> sent_at;
    std::function<void()> spin = [&] {
        ++rounds;
        if (rounds == 5) {
            p.send("abc");
            sent_at = rounds;
        }
        if (!p.got && rounds < 1000) net::post(p.io, spin);
    };
    net::post(p.io, spin);
    while (!p.got && rounds < 1000) BOOST_TEST_REQUIRE(p.io.run_one() == 1);

    BOOST_TEST_REQUIRE(p.got.has_value());
    BOOST_TEST_REQUIRE(sent_at.has_value());
    // The bytes were on the socket before the next round; at most one turn is passed over.
    BOOST_TEST(rounds - *sent_at <= 2);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace io_reactor_turn_test
