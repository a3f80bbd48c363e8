#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace gateway::io {

// A lazy per-connection I/O deadline: arm() before each read or write; when the deadline passes
// with the operation still pending, the socket is closed and the operation fails. Arming only
// records a time: the timer is re-programmed when a deadline moves earlier, and otherwise wakes at
// most once per deadline period. (A per-operation timer, as in beast::tcp_stream, costs a timer
// re-arm, a cancellation handler and often a timerfd syscall on every read and write.)
// Not thread-safe: one connection, one thread.
class deadline {
public:
    using clock = std::chrono::steady_clock;

    deadline(boost::asio::any_io_executor executor, boost::asio::ip::tcp::socket& socket);
    ~deadline();
    deadline(const deadline&) = delete;
    deadline& operator=(const deadline&) = delete;

    // The next operation must complete within `within`.
    void arm(clock::duration within);
    // No deadline until the next arm() (e.g. while the connection idles in a pool).
    void disarm();
    // True once a deadline passed and closed the socket; cleared by the next arm().
    bool expired() const;

private:
    struct state;
    std::shared_ptr<state> state_;  // shared with the pending timer handler
};

}  // namespace gateway::io
