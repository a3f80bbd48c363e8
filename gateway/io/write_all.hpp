#pragma once

#include "gateway/io/deadline.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <cerrno>
#include <cstddef>

#include <sys/socket.h>
#include <sys/uio.h>

namespace gateway::io {

// Writing a response or a request the socket can take at once is the common case, and an
// async_write of it still allocates an operation, queues its completion and suspends and resumes
// the coroutine: a trip through the event loop per write. write_all() sends with one sendmsg()
// first and goes through the event loop only for what the socket did not take
// (docs/benchmarks.md, 2026-11-24, fourth sitting).

// Sends what the socket takes right now (MSG_DONTWAIT: never blocks, whatever the socket's
// mode). Returns the bytes sent: all of them, fewer, or 0 when its send buffer is full. `ec` is
// set on an error that ends the connection (a reset, a closed socket), not on a full buffer.
template <class ConstBufferSequence>
std::size_t send_now(boost::asio::ip::tcp::socket& socket, const ConstBufferSequence& buffers,
                     boost::system::error_code& ec) {
    // More pieces than this are sent in part; write_all() writes the rest.
    constexpr std::size_t max_pieces = 16;
    std::array<iovec, max_pieces> pieces;
    std::size_t count = 0;
    auto end = boost::asio::buffer_sequence_end(buffers);
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != end && count < max_pieces;
         ++it) {
        boost::asio::const_buffer piece(*it);
        if (piece.size() == 0) continue;
        pieces[count++] = iovec{const_cast<void*>(piece.data()), piece.size()};
    }
    if (count == 0) return 0;
    msghdr message{};
    message.msg_iov = pieces.data();
    message.msg_iovlen = count;
    for (;;) {
        auto sent = ::sendmsg(socket.native_handle(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) return static_cast<std::size_t>(sent);
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            ec = boost::system::error_code(errno, boost::system::system_category());
        return 0;
    }
}

// Writes all of `buffers`: what the socket takes at once, then the rest through the event loop
// within `within` (`deadline` closes the socket when it passes). The deadline is disarmed when
// the write is over: it bounds this write, not whatever the caller waits for next (an upstream
// that is slow to answer, a stream that is silent for a while). `buffers` must outlive the call.
// Not for a socket with another write pending (the bytes would interleave).
template <class ConstBufferSequence>
boost::asio::awaitable<boost::system::error_code> write_all(boost::asio::ip::tcp::socket& socket,
                                                            deadline& deadline,
                                                            deadline::clock::duration within,
                                                            const ConstBufferSequence& buffers) {
    boost::system::error_code ec;
    std::size_t sent = send_now(socket, buffers, ec);
    if (!ec && sent < boost::asio::buffer_size(buffers)) {
        boost::beast::buffers_suffix<ConstBufferSequence> rest(buffers);
        rest.consume(sent);
        deadline.arm(within);
        auto [e, n] = co_await boost::asio::async_write(
            socket, rest, boost::asio::as_tuple(boost::asio::use_awaitable));
        ec = e;
    }
    deadline.disarm();
    co_return ec;
}

}  // namespace gateway::io
