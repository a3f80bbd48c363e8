#pragma once

#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"

#include <boost/asio/awaitable.hpp>

namespace gateway::mcp {
class hub;
}

namespace gateway::context {

namespace net = boost::asio;

// GET /context/mcp/servers: each configured MCP server's state (starting, ready, down), protocol
// version, server info, tools (exposed and own names, approval) and last error.
net::awaitable<http::reply> list_mcp_servers(const mcp::hub& hub, http::request_context& ctx);

// POST /context/mcp/servers/{name}/refresh: disconnects the server and connects it again now;
// 200 with its state afterwards (which says whether that worked), 404 for an unknown name.
net::awaitable<http::reply> refresh_mcp_server(mcp::hub& hub, http::request_context& ctx);

}  // namespace gateway::context
