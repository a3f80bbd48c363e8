#include "gateway/app/context_service.hpp"

#include "gateway/admin/usage_ledger.hpp"
#include "gateway/agent/agent_loop.hpp"
#include "gateway/agent/approval_gate.hpp"
#include "gateway/agent/model_client.hpp"
#include "gateway/agent/model_switch.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/agent/run_registry.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/agent/tool_runner.hpp"
#include "gateway/app/moderation.hpp"
#include "gateway/context/api.hpp"
#include "gateway/context/mcp_endpoint.hpp"
#include "gateway/mcp/hub.hpp"
#include "gateway/mcp/naming.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/sessions/edit_sessions.hpp"
#include "gateway/store/data_dir_lock.hpp"
#include "gateway/store/pg_store.hpp"
#include "gateway/store/sqlite_store.hpp"
#include "gateway/tools/registry.hpp"
#include "gateway/tools/workspace_roots.hpp"
#include "gateway/workflows/runner.hpp"

#include <filesystem>

namespace gateway::app {

std::string shipped_folder(std::string_view name) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    auto bin = exe.parent_path();
    for (const auto& candidate : {bin / ".." / "share" / "contextgate" / name, bin / ".." / name})
        if (std::filesystem::is_directory(candidate, ec))
            return std::filesystem::canonical(candidate, ec).string();
    return {};
}

config::parsed<context_files> load_context_files(const config::gateway_config& config) {
    using result = config::parsed<context_files>;
    const auto& context = config.context;
    const auto& tools = tools::registry::standard();
    // MCP tools are known once their servers answer: their names are taken as they are.
    for (const auto& [name, policy] : context.approvals)
        if (!tools.find(name) && !name.starts_with(mcp::tool_prefix))
            return result::fail(config.source + ": context.approvals names an unknown tool `" +
                                name + "`");
    context_files files;
    // A configured folder must exist and hold what it is for; without one, the folders shipped
    // with the binary are used, wherever it was started from.
    std::error_code ec;
    auto prompts_dir =
        context.prompts_dir.empty() ? shipped_folder("prompts") : context.prompts_dir;
    if (prompts_dir.empty()) {
        observability::log_warn(
            "no prompts shipped with this binary and none configured "
            "(context.prompts_dir): the context API has no system prompts");
    } else {
        if (!std::filesystem::is_directory(prompts_dir, ec))
            return result::fail(config.source + ": context.prompts_dir: " + prompts_dir +
                                " is not a folder");
        auto prompts = prompts::load_folder(prompts_dir);
        if (!prompts) return result::fail(prompts.error);
        if (prompts.value->empty())
            return result::fail(config.source + ": context.prompts_dir: " + prompts_dir +
                                " holds no prompt (*.md with front matter)");
        files.prompts = std::move(*prompts.value);
    }
    bool configured = !context.workflows_dir.empty();
    auto workflows_dir = configured ? context.workflows_dir : shipped_folder("workflows");
    files.workflows = std::make_unique<workflows::registry>(workflows_dir, tools, !configured);
    if (auto error = files.workflows->reload(); !error.empty()) return result::fail(error);
    return {std::move(files), {}};
}

config::parsed<std::unique_ptr<context_service>> context_service::start(
    const config::gateway_config& config, std::shared_ptr<const generation> serving) {
    using result = config::parsed<std::unique_ptr<context_service>>;
    const auto& context = config.context;
    auto files = load_context_files(config);
    if (!files) return result::fail(files.error);
    std::unique_ptr<context_service> s(new context_service());
    s->workflows_ = std::move(files.value->workflows);

    if (context.store.type == config::store_type::postgres) {
        auto opened = store::pg_store::open(context.store);
        if (!opened) return result::fail(opened.error);
        observability::log_info("state store: PostgreSQL, replica " +
                                (*opened.value)->replica_id() + ", lease timeout " +
                                std::to_string(context.store.lease_timeout.count()) + " ms");
        s->store_ = std::move(*opened.value);
    } else {
        std::error_code fs_ec;
        std::filesystem::create_directories(context.data_dir, fs_ec);
        if (fs_ec)
            return result::fail("cannot create data_dir " + context.data_dir + ": " +
                                fs_ec.message());
        auto locked = store::data_dir_lock::acquire(context.data_dir);
        if (!locked) return result::fail(locked.error);
        s->lock_ = std::move(*locked.value);
        auto opened = store::sqlite_store::open(context.data_dir + "/contextgate.db");
        if (!opened) return result::fail(opened.error);
        s->store_ = std::move(*opened.value);
    }
    s->ledger_ = std::make_unique<admin::usage_ledger>(*s->store_, std::chrono::seconds(5));

    s->mcp_ = std::make_unique<mcp::hub>(config.mcp_servers);
    s->mcp_->start();
    s->tools_ = std::make_unique<tools::registry>(s->mcp_.get());
    const auto& tools = *s->tools_;
    s->roots_ = std::make_unique<tools::workspace_roots>(context.workspaces);
    for (const auto& problem : s->roots_->unusable())
        observability::log_warn("context.workspaces: " + problem + "; chats cannot use it");
    s->prompts_ = std::make_unique<agent::system_prompts>(std::move(files.value->prompts), tools);
    s->model_retries_ = context.model_retries;
    s->model_ = std::make_unique<agent::model_switch>(s->engine_.get_executor());
    s->moderation_ = std::make_unique<engine_moderation>(*s->model_, s->engine_.get_executor());
    s->use(std::move(serving));
    s->journal_ = std::make_unique<agent::run_journal>(*s->store_, context.event_excerpt_bytes);
    // Eight tool threads: a write waits on fsync (the file, then its folder) far longer than it
    // computes, so with two, hundreds of runs' approved writes queued behind one another
    // (bench/agent_capacity: at 500 runs the append's step fell from ~50 to ~35 ms at p50, ~100
    // to ~65 ms at p99 of all steps). CPU-bound tools (a search) still take one thread each.
    constexpr unsigned tool_threads = 8;
    s->runner_ = std::make_unique<agent::tool_runner>(tools, *s->roots_, *s->store_, *s->journal_,
                                                      tool_threads, s->mcp_.get());
    s->gate_ = std::make_unique<agent::approval_gate>(context, tools, *s->journal_, *s->runner_);
    s->loop_ =
        std::make_unique<agent::agent_loop>(context, tools, *s->model_, *s->gate_, *s->journal_);
    s->runs_ = std::make_unique<agent::run_registry>(s->engine_, context, *s->store_, *s->journal_,
                                                     *s->runner_, *s->gate_, *s->loop_,
                                                     *s->prompts_, *s->model_);
    s->workflow_runs_ =
        std::make_unique<workflows::runner>(context, *s->workflows_, tools, *s->runs_, *s->loop_,
                                            *s->gate_, *s->journal_, *s->prompts_, *s->model_);
    auto* runner = s->runner_.get();
    auto* runs = s->runs_.get();
    s->sessions_ = std::make_unique<sessions::edit_sessions>(
        *s->store_,
        [runner](const std::string& path, std::string& error) {
            return runner->workspace_of(path, error);
        },
        [runs](std::string run_id, std::string type, boost::json::object data) {
            return runs->announce(std::move(run_id), std::move(type), std::move(data));
        });
    // Signed-in people are told apart on /context (auth.oidc): then it is open to none but them
    // and the keys' holders.
    bool signs_in = !config.auth.oidc.issuer.empty();
    s->api_ = std::make_unique<context::api>(config.context, signs_in, *s->store_, *s->runs_,
                                             *s->journal_, *s->prompts_, tools, *s->roots_,
                                             *s->workflows_, *s->workflow_runs_, *s->sessions_);
    if (config.mcp.serve) {
        s->mcp_endpoint_ = std::make_unique<context::mcp_endpoint>(
            config.context, config.mcp, *s->store_, *s->runs_, *s->journal_, *s->prompts_,
            *s->roots_, *s->workflows_, *s->workflow_runs_);
        // What every tools/call's chat will use is checked now, not at the first call.
        if (auto error = s->mcp_endpoint_->check(); !error.empty())
            return result::fail(config.source + ": " + error);
    }
    auto& workflow_runs = *s->workflow_runs_;
    s->runs_->start([&workflow_runs](agent::live_run& run) { return workflow_runs.resume(run); });
    return {std::move(s), {}};
}

context_service::~context_service() {
    stop();
}

void context_service::quiesce() {
    if (runs_) runs_->quiesce();
}

void context_service::stop() {
    // The other replicas' signals first: they reach the runs and the journal, which go before
    // the store. Then the runs (they may be waiting on a tool or the store), then the tools and
    // the MCP servers; the store's own threads finish their queue when it is destroyed, after
    // everything that uses it.
    if (store_)
        if (auto* replicas = store_->replicas()) replicas->stop_listening();
    if (runs_) runs_->stop();
    if (model_) model_->release();
    if (runner_) runner_->stop();
    if (mcp_) mcp_->stop();
    if (ledger_) ledger_->stop();
}

namespace {

// The engine's model client over one generation, and the generation it reads (its upstreams,
// routes and prices: a call is priced by the table of the generation it started in).
struct engine_face {
    engine_face(std::shared_ptr<const generation> g, unsigned model_retries,
                boost::asio::any_io_executor engine, upstream::usage_sink* ledger)
        : built_from(std::move(g)),
          client(built_from->config.upstreams, model_retries, *built_from->routing,
                 built_from->prices.get(), built_from->tls_contexts, built_from->aws_credentials,
                 built_from->token_sources, std::move(engine), ledger) {}

    std::shared_ptr<const generation> built_from;
    agent::model_client client;
};

}  // namespace

void context_service::use(std::shared_ptr<const generation> serving) {
    auto face = std::make_shared<engine_face>(std::move(serving), model_retries_,
                                              engine_.get_executor(), ledger_.get());
    const auto& g = *face->built_from;
    model_->use(std::shared_ptr<agent::model_port>(face, &face->client),
                {face, g.guardrails.get(), g.webhooks.get(), moderation_.get()});
}

std::string context_service::reload_workflows() {
    auto error = workflows_->reload();
    if (error.empty())
        observability::log_info("workflows reloaded: " + std::to_string(workflows_->all()->size()) +
                                " loaded");
    else
        observability::log_error("workflows not reloaded, the previous ones stay: " + error);
    return error;
}

}  // namespace gateway::app
