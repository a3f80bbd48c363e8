#include "gateway/context/mcp_servers.hpp"

#include "gateway/error.hpp"
#include "gateway/mcp/hub.hpp"

namespace gateway::context {

net::awaitable<http::reply> list_mcp_servers(const mcp::hub& hub, http::request_context&) {
    auto body = hub.status();
    body["object"] = "list";
    co_return http::reply::json(200, body);
}

net::awaitable<http::reply> refresh_mcp_server(mcp::hub& hub, http::request_context& ctx) {
    auto state = co_await hub.refresh(ctx.path_params[0]);
    if (!state)
        co_return http::reply::error(errc::not_found,
                                     "No MCP server `" + ctx.path_params[0] + "` is configured.");
    co_return http::reply::json(200, *state);
}

}  // namespace gateway::context
