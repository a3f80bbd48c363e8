#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace gateway::http {

class worker;

// Serves one client connection: reads requests one at a time (pipelined requests wait in the
// buffer, bounded by header_limit), enforces header/body limits and timeouts, answers
// `Expect: 100-continue`, dispatches through the worker's router and writes the access log.
// Ends on close, error, timeout, `Connection: close`, max_requests_per_connection, or drain.
boost::asio::awaitable<void> run_session(boost::asio::ip::tcp::socket socket, worker& owner);

}  // namespace gateway::http
