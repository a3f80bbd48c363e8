#pragma once

#include "gateway/app/generation.hpp"
#include "gateway/config/config.hpp"
#include "gateway/prompts/prompt_library.hpp"
#include "gateway/workflows/registry.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gateway::admin {
class usage_ledger;
}
namespace gateway::agent {
class agent_loop;
class approval_gate;
class model_switch;
class run_journal;
class run_registry;
class system_prompts;
class tool_runner;
}  // namespace gateway::agent
namespace gateway::guardrails {
class model_caller;
}
namespace gateway::context {
class api;
class mcp_endpoint;
}  // namespace gateway::context
namespace gateway::sessions {
class edit_sessions;
}
namespace gateway::mcp {
class hub;
}
namespace gateway::store {
class data_dir_lock;
class state_store;
}  // namespace gateway::store
namespace gateway::tools {
class registry;
class workspace_roots;
}  // namespace gateway::tools
namespace gateway::workflows {
class runner;
}

namespace gateway::app {

// The folder `name` ("prompts", "workflows") shipped with this binary: installed beside it
// (<prefix>/share/contextgate/<name> for <prefix>/bin/contextgate) or, for a binary in a build
// tree, the source tree's. "" when there is none.
std::string shipped_folder(std::string_view name);

// What the context section names besides the database: the prompts and the workflows, loaded
// and checked (approval tool names too), the shipped ones when none are configured. Errors name
// the file and line. check-config uses it.
struct context_files {
    std::vector<prompts::prompt> prompts;
    std::unique_ptr<workflows::registry> workflows;
};
config::parsed<context_files> load_context_files(const config::gateway_config& config);

// The Context API's parts, built in dependency order and owned together: the data directory's
// lock, the state store, the MCP servers and the tool registry that includes theirs, the engine
// (its io_context and thread, journal, tool runner, approval gate, agent loop, run registry, model
// client), the workflow runner and the HTTP handlers. Part of the composition root: the only place
// that wires them.
class context_service {
public:
    // Loads the prompts and workflows, takes the data directory, opens the store and starts the
    // engine, which resumes the unfinished runs. The error names what failed.
    // The agent's model calls go to `serving`'s upstreams and routes.
    static config::parsed<std::unique_ptr<context_service>> start(
        const config::gateway_config& config, std::shared_ptr<const generation> serving);
    ~context_service();

    context::api& api() { return *api_; }
    store::state_store& store() { return *store_; }
    admin::usage_ledger& ledger() { return *ledger_; }
    mcp::hub& mcp() { return *mcp_; }
    // What the guardrails' model checks call: the engine's model client of the configuration in
    // force.
    guardrails::model_caller& moderation() { return *moderation_; }
    // The /mcp server; null unless `mcp.serve`.
    context::mcp_endpoint* mcp_endpoint() { return mcp_endpoint_.get(); }

    // SIGHUP: loads the workflows again; a broken change keeps the old set. Returns the error.
    std::string reload_workflows();
    // A reload: the model calls that start from now on go to `serving`'s upstreams and routes;
    // a call in flight ends on the generation it started with.
    void use(std::shared_ptr<const generation> serving);

    // Stops the engine: every run where it stands (resumable), then the tools, then writes the
    // pending usage. Idempotent.
    // The gateway starts draining: the engine takes no more work (run_registry::quiesce).
    void quiesce();
    void stop();

private:
    context_service() = default;

    std::unique_ptr<workflows::registry> workflows_;
    std::unique_ptr<store::data_dir_lock> lock_;  // held while the store is open
    std::unique_ptr<store::state_store> store_;
    std::unique_ptr<admin::usage_ledger> ledger_;  // writes to store_
    std::unique_ptr<tools::workspace_roots> roots_;
    std::unique_ptr<mcp::hub> mcp_;
    std::unique_ptr<tools::registry> tools_;  // the standard tools and the MCP servers'

    std::unique_ptr<agent::system_prompts> prompts_;
    boost::asio::io_context engine_{1};
    unsigned model_retries_ = 3;  // context.model_retries
    std::unique_ptr<agent::model_switch> model_;
    std::unique_ptr<guardrails::model_caller> moderation_;  // over model_
    std::unique_ptr<agent::run_journal> journal_;
    std::unique_ptr<agent::tool_runner> runner_;
    std::unique_ptr<agent::approval_gate> gate_;
    std::unique_ptr<agent::agent_loop> loop_;
    std::unique_ptr<agent::run_registry> runs_;
    std::unique_ptr<workflows::runner> workflow_runs_;
    std::unique_ptr<sessions::edit_sessions> sessions_;
    std::unique_ptr<context::api> api_;
    std::unique_ptr<context::mcp_endpoint> mcp_endpoint_;
};

}  // namespace gateway::app
