#pragma once

#include "gateway/agent/agent_loop.hpp"
#include "gateway/agent/approval_gate.hpp"
#include "gateway/agent/live_run.hpp"
#include "gateway/agent/replica_link.hpp"
#include "gateway/agent/run_command.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/agent/tool_runner.hpp"
#include "gateway/error.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>

namespace gateway::agent {

// The trace a new run's span joins: the starting request's span, when it is traced.
using parent_trace = std::optional<observability::trace_context>;
inline parent_trace parent_of(const observability::span& s) {
    return s.context() ? parent_trace(*s.context()) : std::nullopt;
}

// A run id, or why no run was started.
using started_run = std::variant<std::string, refusal>;

// The live runs and the engine's thread: the only engine object the HTTP layer calls. It admits
// one live run per chat, stores each new run with its run.started event and launches it, routes
// decisions and cancels to the run they concern, and at start resumes every run that was running
// or awaiting approval. Every run is a coroutine on the engine's own thread and io_context, so
// the runs' state needs no lock; the public methods may be called from any thread and resume
// their caller on its own executor.
//
// With a shared store (replicas), the registry drives the runs whose lease it holds: it renews
// them, claims the runs of replicas that died (resumed as after a restart), stops a run whose
// lease another replica took, forwards decisions, cancels and announcements for runs driven
// elsewhere as requests through the store (and answers the ones for its own runs), and nudges
// its watchers when another replica committed events.
class run_registry {
public:
    // Runs a run to its end: sets run.ended, or leaves it as stored when run.stopping.
    using driver = std::function<net::awaitable<void>(live_run&)>;
    // Picks the driver of a resumed run that is not a chat run (a workflow run).
    using resumer = std::function<driver(live_run&)>;

    // `engine` is the engine's io_context (the model port works on it too); start() runs it on
    // the engine's thread.
    run_registry(net::io_context& engine, const config::context_config& limits,
                 store::state_store& store, run_journal& journal, tool_runner& runner,
                 approval_gate& gate, agent_loop& loop, const system_prompts& prompts,
                 model_port& model);
    ~run_registry();
    run_registry(const run_registry&) = delete;
    run_registry& operator=(const run_registry&) = delete;

    net::any_io_executor executor() { return io_.get_executor(); }

    // Starts the engine's thread and resumes the unfinished runs in the store; `workflows` picks
    // the driver of a resumed workflow run. Blocks until every run is resumed.
    void start(resumer workflows);
    // Takes no more work, from any thread (the server calls it when it starts draining): no new
    // run, no claim of another replica's run, and no more waiting for another replica's answer
    // (those end as replica_unreachable). The live runs go on until stop().
    void quiesce();
    // Stops every run where it stands (its stored state stays resumable) and joins the thread.
    // Call it before the model port and the tool runner go away.
    void stop();

    // Records the user's message in a new run of the chat, with the chat's earlier turns that
    // fit the upstream's context budget, and starts it. run_in_progress while the chat has one.
    // `parent`: the trace of the request that starts it (its invoke_agent span goes under it).
    net::awaitable<started_run> start_chat_run(store::chat_record chat, std::string content,
                                               parent_trace parent = {});

    // Starts a run of the chat driven by `drive`: `prepare` fills in the new run (its state and
    // conversation) and its run.started event before both are stored. For workflow runs.
    using preparer =
        std::function<void(live_run&, boost::json::object& started, run_journal::batch&)>;
    net::awaitable<started_run> start_run(store::chat_record chat, tools::role role,
                                          preparer prepare, driver drive, parent_trace parent = {});

    // The human's decision on the call `call_id` of the run; stored before this returns.
    net::awaitable<std::optional<refusal>> decide(std::string run_id, std::string call_id,
                                                  decision d);
    // Asks a live run to stop; it ends as `cancelled` (watch its events to learn when).
    net::awaitable<std::optional<refusal>> cancel(std::string run_id);

    // Reverts the ended run's newest applied write not yet undone, from the copy kept when it
    // was made, if its target (a workspace file, or the chat's document) is still as the write
    // left it; announced to the run's watchers as write.undone. What was undone: call_id, path,
    // diff. nothing_to_undo when no write is left; conflict when the target changed since.
    net::awaitable<std::variant<boost::json::object, refusal>> undo(std::string run_id);

    // Appends an event to the run's stream, whether it is live or ended (its watchers see it;
    // e.g. session.resolved, when the human reviews the run's edits). Nothing when there is no
    // such run.
    net::awaitable<void> announce(std::string run_id, std::string type, boost::json::object data);

    // The system prompt a run of `chat` sends with `role`.
    std::string system_prompt(const store::chat_record& chat, tools::role role) const;

    // For tests and benchmarks: the number of live runs. Any thread.
    std::size_t live_runs() const;

private:
    // A command for a run, applied where the run is driven (from the replica link).
    net::awaitable<command_answer> apply(std::string run_id, run_command command);
    net::awaitable<std::optional<refusal>> decide_here(std::string run_id, std::string call_id,
                                                       decision d, bool forward);
    net::awaitable<std::optional<refusal>> cancel_here(std::string run_id, bool forward);
    net::awaitable<void> announce_here(std::string run_id, std::string type,
                                       boost::json::object data, bool forward);
    // Engine thread: renews leases, stops runs whose lease was lost, claims orphaned runs.
    net::awaitable<void> keep_leases();
    net::awaitable<started_run> admit(store::chat_record chat, tools::role role, preparer prepare,
                                      driver drive, parent_trace parent);
    net::awaitable<void> drive(std::shared_ptr<live_run> run, driver drive);
    net::awaitable<void> resume();
    // Engine thread: rebuilds a stored unfinished run and launches it.
    net::awaitable<void> adopt(store::run_record record);
    void release(const live_run& run);

    const config::context_config& limits_;
    store::state_store& store_;
    run_journal& journal_;
    tool_runner& runner_;
    approval_gate& gate_;
    agent_loop& loop_;
    const system_prompts& prompts_;
    model_port& model_;

    store::replica_coordination* replicas_;  // null: no other gateway shares the store
    resumer workflows_;

    net::io_context& io_;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
    net::steady_timer lease_timer_;
    std::atomic<bool> stopping_ = false;
    std::optional<replica_link> link_;  // with replicas
    // Engine thread only: what the engine started. The service tasks (leases, commands for
    // other replicas) are cancelled at stop; the runs stop on their own terms (stored where they
    // stand) and the group waits for them.
    io::task_group tasks_;
    io::task_group drives_;
    std::thread thread_;
    // Engine thread only.
    std::map<std::string, std::shared_ptr<live_run>> runs_;  // by run id
    std::map<std::string, std::string> chats_;               // chat id -> its live run's id
    std::atomic<std::size_t> live_ = 0;
};

}  // namespace gateway::agent
