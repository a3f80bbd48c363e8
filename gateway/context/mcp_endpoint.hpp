#pragma once

#include "gateway/agent/run_registry.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/config/config.hpp"
#include "gateway/context/event_stream.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/http/router.hpp"
#include "gateway/http/streaming.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/tools/workspace_roots.hpp"
#include "gateway/workflows/registry.hpp"
#include "gateway/workflows/runner.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gateway::context {

// The gateway's workflows as an MCP server at /mcp (Streamable HTTP; docs/mcp.md), for IDE
// agents that speak MCP. `initialize` opens a session (Mcp-Session-Id) with the protocol version
// negotiated; `tools/list` gives one tool per workflow (its id, description and parameter
// schema); `tools/call` runs the workflow in a chat of its own (mcp.model, mcp.workspace) and
// answers on an SSE stream: a progress notification per step when the client sent a progress
// token, an elicitation when a step needs a human approval and the client can be asked (else the
// run is cancelled with a message saying where it can run), and the run's output as the result.
// `prompts/list` and `prompts/get` offer the system prompts. notifications/cancelled cancels the
// call's run; DELETE ends the session and cancels its calls. GET is 405 (nothing is sent
// unasked). The run itself is an ordinary run: in the store, on the console, resumable; a client
// that disconnects does not cancel it.
//
// Sessions live in this process (with several replicas, route /mcp by Mcp-Session-Id); an
// answer to an elicitation is applied through the run registry, so it reaches the run wherever
// it is driven. Thread-safe: the handlers run on every worker.
class mcp_endpoint {
public:
    mcp_endpoint(const config::context_config& context, const config::mcp_serve_config& config,
                 store::state_store& store, agent::run_registry& runs, agent::run_journal& journal,
                 const agent::system_prompts& prompts, const tools::workspace_roots& roots,
                 const workflows::registry& workflows, workflows::runner& workflow_runs);

    net::awaitable<http::reply> post(http::request_context& ctx);
    net::awaitable<http::reply> get(http::request_context& ctx);
    net::awaitable<http::reply> remove(http::request_context& ctx);

    using method = net::awaitable<http::reply> (mcp_endpoint::*)(http::request_context&);
    http::handler route(method m);
    // Ends the tools/call streams (the gateway is draining); their runs go on.
    void end_streams() { streams_.end_all(); }

    // Whether the chats' settings can be used: the system prompt exists and the workspace opens.
    // The error, naming the setting; "" when they can. Called at start.
    std::string check() const;

private:
    struct session;
    struct call;

    // One JSON-RPC message of a session: its answer.
    net::awaitable<http::reply> request(http::request_context& ctx, std::shared_ptr<session> s,
                                        const boost::json::object& message);
    net::awaitable<http::reply> call_tool(http::request_context& ctx, std::shared_ptr<session> s,
                                          boost::json::value id, const boost::json::object& params);
    // Relays the run's progress and approvals to the client and ends with its result.
    net::awaitable<void> follow(http::request_context& ctx, std::shared_ptr<session> s,
                                std::shared_ptr<call> c);
    net::awaitable<std::optional<boost::json::object>> relay(http::request_context& ctx, session& s,
                                                             call& c, http::body_stream* body);
    net::awaitable<boost::json::object> outcome(session& s, const call& c, std::string why_not);
    // The client's answer to an elicitation (an approval).
    net::awaitable<void> answered(std::shared_ptr<session> s, const boost::json::object& message);
    std::shared_ptr<session> open_session(std::string version, bool can_ask, std::string& id);

    const config::mcp_serve_config& config_;
    store::state_store& store_;
    agent::run_registry& runs_;
    const agent::system_prompts& prompts_;
    const tools::workspace_roots& roots_;
    const workflows::registry& workflows_;
    workflows::runner& workflow_runs_;
    event_streams streams_;
    std::string workspace_;  // the chats' workspace ("": none), system prompt
    std::string system_prompt_;

    mutable std::mutex mutex_;  // guards sessions_ and every session's members
    std::map<std::string, std::shared_ptr<session>> sessions_;
};

}  // namespace gateway::context
