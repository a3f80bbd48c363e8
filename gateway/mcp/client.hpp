#pragma once

#include "gateway/config/config.hpp"
#include "gateway/mcp/transport.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/array.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gateway::mcp {

// The protocol versions this client speaks, newest first; it offers the first.
inline constexpr std::string_view protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                         "2024-11-05"};

// How a request ended.
struct outcome {
    enum class kind {
        ok,            // `result` holds the server's result
        rpc_error,     // the server answered with a JSON-RPC error (`message`, `code`)
        failed,        // no answer: the transport failed or the server went away
        timeout,       // no answer in time; the request was cancelled on the server
        session_gone,  // Streamable HTTP: the server no longer knows the session
    };
    kind what = kind::failed;
    boost::json::value result;
    std::string message;
    std::int64_t code = 0;
    bool ok() const { return what == kind::ok; }
};

// One MCP client session over a transport: the JSON-RPC 2.0 exchange (ids, answers matched to
// requests, the server's own requests answered: `ping`, and "method not found" for what this
// client does not offer), the lifecycle (`initialize` with version negotiation, then
// `notifications/initialized`), `tools/list` across pages and `tools/call` with a deadline after
// which the call is cancelled (`notifications/cancelled`). Lives on one executor; not
// thread-safe. Held by shared_ptr: a call in flight keeps its session alive.
class client {
public:
    client(net::any_io_executor executor, std::string label, std::unique_ptr<transport> t);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    // Opens the transport and initializes within `timeout`. "" or why not (a version this client
    // does not speak is refused).
    net::awaitable<std::string> connect(config::duration timeout);

    // One request; its outcome within `timeout` (then cancelled on the server).
    net::awaitable<outcome> request(std::string method, boost::json::object params,
                                    config::duration timeout);
    void notify(std::string method, boost::json::object params = {});

    // Every tool the server lists, following `nextCursor` (at most 100 pages).
    struct listing {
        boost::json::array tools;
        std::string error;  // "" when listed
    };
    net::awaitable<listing> list_tools(config::duration timeout);

    // Ends the session: the transport closes, waiting requests end as failed. Idempotent.
    void close(const std::string& why = "the connection was closed");
    bool open() const { return open_; }

    const std::string& protocol_version() const { return protocol_version_; }
    const boost::json::object& server_info() const { return server_info_; }

    // Told on the executor: the server's tool list changed; the connection ended by itself.
    std::function<void()> on_tools_changed;
    std::function<void(std::string)> on_closed;

private:
    struct waiter {
        explicit waiter(net::any_io_executor executor) : timer(executor) {}
        net::steady_timer timer;
        std::optional<outcome> done;
    };

    void received(boost::json::object message);
    void answer(const boost::json::value& id, boost::json::object result);
    void refuse(const boost::json::value& id, std::int64_t code, std::string message);
    void finish(std::int64_t id, outcome o);

    net::any_io_executor executor_;
    std::string label_;
    std::unique_ptr<transport> transport_;
    bool open_ = false;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, std::shared_ptr<waiter>> waiting_;
    std::string protocol_version_;
    boost::json::object server_info_;
};

}  // namespace gateway::mcp
