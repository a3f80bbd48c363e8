#pragma once

#include <boost/asio/ip/tcp.hpp>

namespace gateway::io {

// Whether a read of `socket` could find anything now (bytes, an end of stream, an error), as far
// as its reactor knows without a system call: with the gateway's Asio patch
// (third_party/asio-1.81-patch), false when no readiness, close or error was reported since a
// read last emptied the socket, as of the reactor's last poll. True when the reactor cannot tell
// (never read, a read that filled its buffer, Asio unpatched): ask the socket then. For a socket
// no one reads, such as an idle pooled connection; the socket's thread only.
bool may_have_input(boost::asio::ip::tcp::socket& socket);

}  // namespace gateway::io
