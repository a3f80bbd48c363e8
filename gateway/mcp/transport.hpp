#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <string>

namespace gateway::mcp {

namespace net = boost::asio;

// What a transport tells its client, on the transport's executor.
struct transport_events {
    // Each JSON-RPC message the server sent (responses, requests and notifications alike).
    std::function<void(boost::json::object)> message;
    // A request that will get no answer over this transport: why, and whether the server said
    // that the session is gone (Streamable HTTP's 404 for a session id it no longer knows).
    std::function<void(const boost::json::value& id, std::string why, bool session_gone)>
        request_failed;
    // The connection is gone for good (stdio: the process ended); `why` says how.
    std::function<void(std::string why)> closed;
};

// How JSON-RPC messages reach one MCP server: a child process's stdin/stdout (stdio_transport)
// or Streamable HTTP (http_transport). Used on one executor only; not thread-safe.
class transport {
public:
    virtual ~transport() = default;
    // Starts the connection (stdio: spawns the process). "" or why it could not.
    virtual net::awaitable<std::string> open(transport_events events) = 0;
    // Queues one message; never waits. A request's failure comes back through request_failed.
    virtual void send(boost::json::object message) = 0;
    // After initialization: the negotiated protocol version (HTTP sends it with each request).
    // Also where HTTP opens its stream for messages the server sends on its own.
    virtual void initialized(std::string protocol_version) { (void)protocol_version; }
    // Ends the connection; requests in flight get no answer and no event follows. Idempotent.
    virtual void close() = 0;
};

}  // namespace gateway::mcp
