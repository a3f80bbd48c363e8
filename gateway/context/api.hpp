#pragma once

#include "gateway/agent/run_engine.hpp"
#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/router.hpp"
#include "gateway/store/store.hpp"
#include "gateway/tools/workspace_roots.hpp"
#include "gateway/workflows/registry.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gateway::context {

namespace net = boost::asio;

class run_watch;

// The /context/* endpoints and /v1/system-prompts: chats, messages that start runs, runs and
// their SSE event streams, approvals, cancellation and the chat's open document. Stateless
// itself (the store and the run engine hold everything), so one instance serves every worker.
// Requests need `Authorization: Bearer <key>` when `context.api_keys` is set.
class api {
public:
    api(const config::gateway_config& config, store::store& store, agent::run_engine& engine,
        const tools::registry& tools, const tools::workspace_roots& roots,
        const workflows::registry& workflows);

    using method = net::awaitable<void> (api::*)(http::request_context&);
    // The route handler for `m`. The API-key check is not here: it is guard(), which the router
    // applies to the head of every request under the API's prefixes, before the body is read.
    http::handler route(method m);
    // The API-key check for the paths under `prefix`, as a router guard.
    http::guard guard(std::string_view prefix) const;

    net::awaitable<void> list_prompts(http::request_context& ctx);
    net::awaitable<void> get_prompt(http::request_context& ctx);
    net::awaitable<void> get_enhanced_prompt(http::request_context& ctx);

    net::awaitable<void> create_chat(http::request_context& ctx);
    net::awaitable<void> list_chats(http::request_context& ctx);
    net::awaitable<void> get_chat(http::request_context& ctx);
    net::awaitable<void> list_messages(http::request_context& ctx);
    net::awaitable<void> delete_chat(http::request_context& ctx);
    net::awaitable<void> post_message(http::request_context& ctx);
    net::awaitable<void> put_document(http::request_context& ctx);
    net::awaitable<void> get_document(http::request_context& ctx);

    net::awaitable<void> get_run(http::request_context& ctx);
    net::awaitable<void> get_call(http::request_context& ctx);
    net::awaitable<void> run_events(http::request_context& ctx);
    net::awaitable<void> cancel_run(http::request_context& ctx);
    net::awaitable<void> decide(http::request_context& ctx);

    net::awaitable<void> list_workflows(http::request_context& ctx);
    net::awaitable<void> workflow_categories(http::request_context& ctx);
    net::awaitable<void> get_workflow(http::request_context& ctx);
    net::awaitable<void> start_workflow(http::request_context& ctx);

    // Ends every open event stream (the gateway is draining); clients resume with Last-Event-ID.
    void end_streams();

    // Whether the request carries one of the configured keys (always true when none are).
    // Every key is compared, in constant time, whatever matched earlier.
    bool authorized(const boost::beast::http::request_header<>& head) const;

private:
    net::awaitable<void> stream_events(http::request_context& ctx, const std::string& run_id,
                                       std::int64_t after);
    net::awaitable<bool> pump_events(http::request_context& ctx, run_watch& watch,
                                     const std::string& run_id, std::int64_t after, bool chunked);

    const config::gateway_config& config_;
    store::store& store_;
    agent::run_engine& engine_;
    const tools::registry& tools_;
    const tools::workspace_roots& roots_;
    const workflows::registry& workflows_;
    std::vector<std::string> key_hashes_;  // 32-byte SHA-256 digests
    std::mutex streams_mutex_;
    std::map<const void*, std::function<void()>> streams_;  // open event streams: their wakers
    std::map<std::string, unsigned> watchers_;              // open event streams per run
    std::atomic<bool> closing_ = false;
};

}  // namespace gateway::context
