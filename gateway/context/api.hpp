#pragma once

#include "gateway/agent/run_registry.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/config/config.hpp"
#include "gateway/context/event_stream.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/http/router.hpp"
#include "gateway/sessions/edit_sessions.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/tools/registry.hpp"
#include "gateway/tools/workspace_roots.hpp"
#include "gateway/workflows/registry.hpp"
#include "gateway/workflows/runner.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gateway::context {

namespace net = boost::asio;

// The /context/* endpoints and /v1/system-prompts: chats, messages that start runs, runs and
// their event streams, approvals, cancel, undo, the chat's open document, edit sessions under
// review, and workflows. Each
// handler returns a reply value that http::write_reply writes. Stateless itself: the store, the
// run registry and the workflow runner hold everything, and no handler waits on anything but
// awaitables, so one instance serves every worker. Requests need `Authorization: Bearer <key>`
// or a sign-in session when `context.api_keys` is set or people sign in (`signs_in`:
// auth.oidc); a gateway with neither is open to whoever reaches it: see guard().
class api {
public:
    api(const config::context_config& config, bool signs_in, store::state_store& store,
        agent::run_registry& runs, agent::run_journal& journal,
        const agent::system_prompts& prompts, const tools::registry& tools,
        const tools::workspace_roots& roots, const workflows::registry& workflows,
        workflows::runner& workflow_runs, sessions::edit_sessions& sessions);

    using method = net::awaitable<http::reply> (api::*)(http::request_context&);
    // The route handler for `m`: calls it and writes its reply, unless the chat the path names
    // (itself, or through its run or edit session) is not the asker's to see: then 404, as for a
    // chat that is not there, so that nobody learns of another's chats. The API-key check is not
    // here: it is guard(), which the router applies to every request's head under the API's
    // prefixes.
    http::handler route(method m);
    // The API-key check for the paths under `prefix`, as a router guard: a key, or a principal
    // (a signed-in user, the admin key).
    http::guard guard(std::string_view prefix) const;

    net::awaitable<http::reply> list_prompts(http::request_context& ctx);
    net::awaitable<http::reply> get_prompt(http::request_context& ctx);
    net::awaitable<http::reply> get_enhanced_prompt(http::request_context& ctx);

    net::awaitable<http::reply> list_workspaces(http::request_context& ctx);
    net::awaitable<http::reply> create_chat(http::request_context& ctx);
    net::awaitable<http::reply> list_chats(http::request_context& ctx);
    net::awaitable<http::reply> get_chat(http::request_context& ctx);
    net::awaitable<http::reply> list_messages(http::request_context& ctx);
    net::awaitable<http::reply> delete_chat(http::request_context& ctx);
    net::awaitable<http::reply> patch_chat(http::request_context& ctx);
    net::awaitable<http::reply> post_message(http::request_context& ctx);
    net::awaitable<http::reply> put_document(http::request_context& ctx);
    net::awaitable<http::reply> get_document(http::request_context& ctx);

    net::awaitable<http::reply> get_run(http::request_context& ctx);
    net::awaitable<http::reply> get_call(http::request_context& ctx);
    net::awaitable<http::reply> run_events(http::request_context& ctx);
    net::awaitable<http::reply> cancel_run(http::request_context& ctx);
    net::awaitable<http::reply> undo_run(http::request_context& ctx);
    net::awaitable<http::reply> decide(http::request_context& ctx);

    net::awaitable<http::reply> list_sessions(http::request_context& ctx);
    net::awaitable<http::reply> get_session(http::request_context& ctx);
    net::awaitable<http::reply> accept_session(http::request_context& ctx);
    net::awaitable<http::reply> reject_session(http::request_context& ctx);

    net::awaitable<http::reply> list_workflows(http::request_context& ctx);
    net::awaitable<http::reply> workflow_categories(http::request_context& ctx);
    net::awaitable<http::reply> get_workflow(http::request_context& ctx);
    net::awaitable<http::reply> start_workflow(http::request_context& ctx);

    // Ends every open event stream (the gateway is draining); clients resume with Last-Event-ID.
    void end_streams() { streams_.end_all(); }

    // Whether the request head carries one of the configured keys (always true on an open
    // gateway: no keys configured and nobody signs in). Every key is compared, in constant time,
    // whatever matched earlier.
    bool authorized(const boost::beast::http::request_header<>& head) const;

private:
    // Whose chats `who` sees (chat_record::user): nullopt for everybody's (an admin, a key's
    // holder, anyone on an open gateway), else the signed-in user's own and, for a team admin,
    // their team members'.
    net::awaitable<std::optional<std::set<std::string>>> owners_seen(
        const std::optional<auth::principal>& who);
    // The 404 for the chat, run or edit session `ctx`'s path names when it is not the asker's to
    // see (route()), or nullopt when it is, or when the path names none.
    net::awaitable<std::optional<http::reply>> hidden(const http::request_context& ctx);
    net::awaitable<http::reply> run_view(const store::run_record& run);
    // A started run: 202 with its id, or its event stream when the client asked for one.
    http::reply started(http::request_context& ctx, const agent::started_run& run,
                        boost::json::object reply);

    const config::context_config& config_;
    store::state_store& store_;
    agent::run_registry& runs_;
    const agent::system_prompts& prompts_;
    const tools::registry& tools_;
    const tools::workspace_roots& roots_;
    const workflows::registry& workflows_;
    workflows::runner& workflow_runs_;
    sessions::edit_sessions& sessions_;
    event_streams streams_;
    std::vector<std::string> key_hashes_;  // "sha256:<hex>" of each configured key
    // Neither keys nor sign-in: a single user's gateway, where every request is that user's.
    bool open_;
};

}  // namespace gateway::context
