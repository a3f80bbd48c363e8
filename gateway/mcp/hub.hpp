#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/tools/registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gateway::mcp {

namespace net = boost::asio;

class remote_tool;

// The configured MCP servers, connected and supervised on a thread of their own ("mcp"): each is
// started (stdio) or reached (HTTP) and initialized, its tools listed (again on
// tools/list_changed) and offered to the tool registry as `mcp__<server>__<tool>`, filtered by
// the server's allow/deny globs. A server that fails, exits or drops its connection is marked
// down with the reason and connected again with growing backoff (1 s doubling to 60 s); its
// tools stay listed and answer MCP_UNAVAILABLE meanwhile, and nothing else waits for it. A call
// that gets "session gone" re-initializes once and is tried again.
//
// Thread-safe: the registry reads the tools from any thread, the engine awaits calls, the HTTP
// handlers read the servers' state.
class hub : public tools::tool_source {
public:
    explicit hub(std::vector<config::mcp_server_config> servers);
    ~hub() override;
    hub(const hub&) = delete;
    hub& operator=(const hub&) = delete;

    // Starts connecting every server. With `wait`, returns once each has connected or failed
    // once (bounded by its connect_timeout): what a one-shot command needs.
    void start(bool wait = false);
    // Disconnects everything and stops the thread (children stopped and reaped). Idempotent.
    void stop();

    std::vector<entry> current() const override;

    // The tool exposed as `name`, or null.
    const remote_tool* find(std::string_view name) const;

    // Calls the tool exposed as `name` (on the hub's thread; the caller resumes on its own
    // executor): its result, or MCP_UNAVAILABLE / MCP_TIMEOUT / MCP_ERROR / MCP_TOOL_ERROR.
    net::awaitable<tools::tool_result> call(std::string name, boost::json::object arguments);
    // The same for a caller that may block (the command line; never on the hub's thread).
    tools::tool_result call_blocking(const std::string& name, const boost::json::object& arguments);

    // {"servers": [{name, transport, state, protocol_version, server_info, tools, last_error,
    // connects, ...}]}
    boost::json::object status() const;
    // Disconnects `server` and connects it again now; its state afterwards, or nullopt for an
    // unknown name.
    net::awaitable<std::optional<boost::json::object>> refresh(std::string server);

    struct link;

private:
    net::awaitable<void> connect(link& l);
    net::awaitable<void> supervise(link& l);
    net::awaitable<void> relist(link& l);
    net::awaitable<tools::tool_result> call_here(std::string name, boost::json::object arguments);
    void publish(link& l, const boost::json::array& listed);
    void went_down(link& l, std::string why);
    boost::json::object status_of(const link& l) const;

    // What the hub starts (the servers' supervisors, tool relistings, the transports' readers,
    // writers and requests), owned here until they end; stopped by closing the sessions
    // (stop()). Declared before io_ so that it outlives the coroutines io_ may still hold.
    std::unique_ptr<io::task_group> tasks_;
    net::io_context io_{1};
    std::vector<std::unique_ptr<link>> links_;
    std::thread thread_;
    bool stopped_ = false;

    mutable std::mutex mutex_;  // guards what other threads read: tools, states
    std::condition_variable settled_;
    std::vector<entry> offered_;
    // Every tool object ever offered: a pointer handed out stays valid while the hub lives.
    std::deque<std::unique_ptr<remote_tool>> kept_;
};

}  // namespace gateway::mcp
