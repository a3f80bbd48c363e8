#pragma once

#include "gateway/io/task_group.hpp"
#include "gateway/mcp/transport.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gateway::mcp {

// MCP's stdio transport: the server is a child process; each message is one line of JSON on its
// stdin (ours) or stdout (its). Its stderr is logged and its last lines are kept for the error
// shown when it exits. The process gets the gateway's environment plus `env`; it is stopped
// with SIGTERM on close and SIGKILL two seconds later, and always reaped. A line longer than
// `max_line_bytes` ends the connection (the server is misbehaving).
class stdio_transport : public transport {
public:
    // Its reader, writer and reaper run in `tasks` (the hub's), on the tasks' executor.
    stdio_transport(io::task_group& tasks, std::string label, std::string command,
                    std::vector<std::string> args,
                    std::vector<std::pair<std::string, std::string>> env,
                    std::size_t max_line_bytes = 16 * 1024 * 1024);
    ~stdio_transport() override;

    net::awaitable<std::string> open(transport_events events) override;
    void send(boost::json::object message) override;
    void close() override;

    // The child's process id once open() started it (0 before or when it failed).
    int pid() const;

    struct state;

private:
    std::shared_ptr<state> state_;
    io::task_group& tasks_;
};

}  // namespace gateway::mcp
