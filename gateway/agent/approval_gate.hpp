#pragma once

#include "gateway/agent/live_run.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/agent/tool_runner.hpp"
#include "gateway/config/config.hpp"
#include "gateway/error.hpp"
#include "gateway/tools/registry.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace gateway::agent {

// Takes a run's pending call (run.state.pending) through approval and execution:
// - the policy: per tool `always`, `never` or `ask` (config), tools approved for the whole run,
//   and by default `ask` for writes only; in the chat's review mode a write is not asked for but
//   recorded in an edit session (see tool_runner);
// - asking: the write's preview is computed first (a write that would fail anyway goes back to
//   the model without bothering the human), approval.required is announced, and the run waits
//   for a decision, a cancel, the approval timeout or the engine's stop — the wait survives a
//   restart, and a decision stored just before a crash is found again;
// - executing a write in two stored steps: first the call is marked `executing` with the
//   target's digests and previous content (kept for undo), then it runs. A run resumed after a
//   crash in between looks at the target: the write happened (its result is recorded), did not
//   happen (it runs), or cannot be told (the human is asked again, with reason "interrupted").
// Engine thread only.
class approval_gate {
public:
    approval_gate(const config::context_config& limits, const tools::registry& tools,
                  run_journal& journal, tool_runner& runner);

    config::approval_policy policy_for(const std::string& tool,
                                       const boost::json::object& parameters) const;

    // The outcome of the run's pending call, or nullopt when the run ended (cancel, approval
    // timeout: run.ended is set) or the engine is stopping (the run stays as stored). Traced as
    // an execute_tool span under the run's, covering the approval wait and the tool's run.
    net::awaitable<std::optional<tools::tool_result>> settle(live_run& run);

    // Records `result` as the pending call's outcome in `b`: the call's status and result, a
    // tool.result event, and a void backup when a marked write failed. The caller commits `b`
    // with the state that follows.
    void record_result(live_run& run, run_journal::batch& b, const tools::tool_result& result);

    // A human's decision on the call `call_id` the run awaits. It is stored before this returns,
    // in one commit with the call's status (approved, rejected) and the run's (running), so that
    // whoever reads the run next finds it decided; the run then goes on. call_not_pending when the
    // run awaits no such call, conflict when it was decided already, invalid_parameters when
    // edited parameters fail the tool's schema.
    net::awaitable<std::optional<refusal>> decide(live_run& run, std::string call_id, decision d);

private:
    net::awaitable<std::optional<tools::tool_result>> settle_call(live_run& run);
    net::awaitable<std::optional<tools::tool_result>> ask_and_wait(live_run& run);
    net::awaitable<tools::tool_result> execute(live_run& run);
    net::awaitable<std::optional<tools::tool_result>> resume_interrupted(live_run& run);

    const config::context_config& limits_;
    const tools::registry& tools_;
    run_journal& journal_;
    tool_runner& runner_;
};

}  // namespace gateway::agent
