#pragma once

#include "gateway/agent/model_client.hpp"
#include "gateway/agent/run_state.hpp"
#include "gateway/config/config.hpp"
#include "gateway/prompts/prompt_library.hpp"
#include "gateway/store/store.hpp"
#include "gateway/tools/registry.hpp"
#include "gateway/workflows/registry.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gateway::tools {
class workspace;
class workspace_roots;
}

namespace gateway::agent {


// A human's answer to an approval.required event.
struct decision {
    bool approve = false;
    std::optional<boost::json::object> parameters;  // edited parameters (approve only)
    std::string feedback;                           // told to the model on reject
    bool whole_run = false;                         // scope "run": approve this tool from now on
};

// How a request to the engine went, for the HTTP layer: 0 when it worked, else the status to
// answer (400, 404, 409) and why.
struct refusal {
    unsigned status = 0;
    std::string message;
    explicit operator bool() const { return status != 0; }
};

// Runs the agent loop of every live run, per the design's contract, on its own thread. The HTTP
// workers talk to it through the thread-safe methods below; everything a client was told is in
// the store first, so a run survives a restart: start() resumes every run that was running or
// awaiting approval. Tools run on a small pool so a long search never stalls other runs.
class run_engine {
public:
    run_engine(const config::gateway_config& config, store::store& store,
               const tools::registry& tools, const tools::workspace_roots& roots,
               std::vector<prompts::prompt> prompts,
               const passthrough::model_router& router,
               const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts);
    ~run_engine();
    run_engine(const run_engine&) = delete;
    run_engine& operator=(const run_engine&) = delete;

    // Starts the engine's thread and resumes unfinished runs from the store.
    void start();
    // Stops every loop where it stands (its stored state stays resumable) and joins the thread.
    void stop();

    const std::vector<prompts::prompt>& prompts() const { return prompts_; }
    const prompts::prompt* find_prompt(std::string_view id) const;
    // The system prompt the loop sends for a chat (the base prompt enhanced for its role).
    std::string system_prompt(const store::chat_record& chat) const;
    std::string system_prompt(const store::chat_record& chat, tools::role role) const;

    // Records the user's message and starts a run on it; the run id, or why not (409 while the
    // chat has a live run).
    refusal start_run(const store::chat_record& chat, const std::string& content,
                      std::string& run_id);
    // Starts a workflow run in the chat: with `parameters` (already validated) or, without them,
    // from the user's free-text `input`, which the first model call turns into parameters.
    refusal start_workflow(const store::chat_record& chat,
                           std::shared_ptr<const workflows::workflow> definition,
                           std::optional<boost::json::object> parameters, const std::string& input,
                           std::string& run_id);
    // Where resumed workflow runs find their definitions; set before start().
    void use_workflows(const workflows::registry& workflows) { workflows_ = &workflows; }

    // Resolves the run's pending approval `call_id`. The decision is stored before this returns.
    refusal decide(const std::string& run_id, const std::string& call_id, decision d);
    // Asks a live run to stop; it ends as `cancelled` (wait for it with subscribe()).
    refusal cancel(const std::string& run_id);

    // Calls `wake` (from the engine's thread) after every event of the run; the callee must only
    // post work to its own executor. Returns a handle for unsubscribe().
    std::uint64_t subscribe(const std::string& run_id, std::function<void()> wake);
    void unsubscribe(const std::string& run_id, std::uint64_t handle);

    // For tests and benchmarks: the number of live runs.
    std::size_t live_runs() const;

private:
    struct live_run;
    net::awaitable<void> drive(std::shared_ptr<live_run> run);
    net::awaitable<void> loop(live_run& run);
    net::awaitable<std::optional<model_reply>> ask_model(live_run& run, std::string body);
    net::awaitable<void> run_workflow(live_run& run);
    net::awaitable<bool> extract_parameters(live_run& run);
    void save_call(const std::string& call_id, std::string_view status,
                   const boost::json::object* edited = nullptr,
                   const tools::tool_result* result = nullptr,
                   const std::string* preview = nullptr);
    void record_result(live_run& run, const std::string& call_id, const std::string& tool,
                       const tools::tool_result& result);
    bool deliver_step(live_run& run, const std::string& step_id, const std::string& call_id,
                      const std::string& tool, const tools::tool_result& result);
    net::awaitable<bool> resolve_pending(live_run& run);
    net::awaitable<bool> run_call(live_run& run);
    net::awaitable<tools::tool_result> execute(live_run& run, const std::string& tool,
                                               const boost::json::object& parameters,
                                               tools::mode how);
    std::string request_body(live_run& run);
    bool trim_history(live_run& run, std::size_t request_bytes);
    void emit(live_run& run, std::string type, boost::json::object data);
    net::awaitable<bool> deliver(live_run& run, const tools::tool_result& result);
    void store_conversation(live_run& run);
    void checkpoint(live_run& run, const std::function<void()>& also = {});
    // Marks how the loop ended; the caller returns and drive() records it.
    void end(live_run& run, std::string status, std::string output, std::string error);
    void finish(live_run& run, std::string status, std::string output, std::string error);
    void notify(const std::string& run_id);
    void launch(std::shared_ptr<live_run> run);
    refusal begin_run(const store::chat_record& chat, tools::role role,
                      const std::function<void(live_run&, boost::json::object&)>& prepare,
                      std::string& run_id);
    // The chat's workspace for one run, opened afresh beneath its root (see workspace_roots);
    // a folder that is still the same one keeps its warm workspace (symbol index). Null, with
    // `error`, when the folder may not be used any more.
    std::shared_ptr<tools::workspace> open_workspace(const std::string& path, std::string& error);
    config::approval_policy policy_for(const std::string& tool, const boost::json::object& params);

    const config::gateway_config& config_;
    store::store& store_;
    const tools::registry& tools_;
    std::vector<prompts::prompt> prompts_;
    const workflows::registry* workflows_ = nullptr;

    net::io_context io_;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
    net::thread_pool tool_pool_{2};
    model_client model_;
    std::thread thread_;
    bool stopping_ = false;  // engine thread only

    mutable std::mutex mutex_;  // guards runs_, subscribers_ and each run's `shared` part
    std::map<std::string, std::shared_ptr<live_run>> runs_;
    std::map<std::string, std::map<std::uint64_t, std::function<void()>>> subscribers_;
    std::uint64_t next_subscriber_ = 1;

    const tools::workspace_roots& roots_;
    // One workspace per folder, shared by its chats: the symbol index stays warm between runs.
    struct cached_workspace {
        std::uint64_t device = 0, inode = 0;  // which folder it is
        std::shared_ptr<tools::workspace> files;
    };
    std::mutex workspaces_mutex_;
    std::map<std::string, cached_workspace> workspaces_;
};

// A fresh random identifier with a readable prefix: "chat_…", "run_…", "call_…".
std::string make_id(std::string_view prefix);

}  // namespace gateway::agent
