#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/mcp/transport.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ssl/context.hpp>

#include <memory>

namespace gateway::mcp {

// MCP's Streamable HTTP transport: each message is a POST to the server's endpoint, answered
// with JSON, with an event stream (whose events carry the answer, and the requests and
// notifications the server sends meanwhile), or with 202 for what needs no answer. The session
// id the server gives at initialization (`Mcp-Session-Id`) and the negotiated protocol version
// (`MCP-Protocol-Version`) go with every later request, with the configured headers. An event
// stream that ends before its answer is resumed with GET and `Last-Event-ID` after the `retry`
// the server asked for (1 s when it did not). Once initialized, a GET stream receives what the
// server sends on its own (tools/list_changed), reconnecting the same way; a server that offers
// none (405) is left at that. A 404 for a known session id (or a 400 that says the session is
// not valid, as servers built on the TypeScript SDK's examples answer) is session_gone.
class http_transport : public transport {
public:
    // `tls` for an https URL (see upstream::make_client_context), else null.
    // Its requests and its listening stream run in `tasks` (the hub's), on its executor.
    http_transport(io::task_group& tasks, const config::mcp_server_config& server,
                   std::shared_ptr<net::ssl::context> tls);
    ~http_transport() override;

    net::awaitable<std::string> open(transport_events events) override;
    void send(boost::json::object message) override;
    void initialized(std::string protocol_version) override;
    void close() override;

    struct state;

private:
    std::shared_ptr<state> state_;
    io::task_group& tasks_;
};

// The upstream settings an MCP server's HTTP connections use (its endpoint, TLS, timeouts),
// named "mcp:<name>" in the upstream metrics.
config::upstream_config http_upstream(const config::mcp_server_config& server);

}  // namespace gateway::mcp
