#pragma once

#include "gateway/agent/agent_loop.hpp"
#include "gateway/agent/approval_gate.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/agent/run_registry.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/workflows/registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>

namespace gateway::workflows {

namespace net = boost::asio;

// Runs workflows as runs: the same events, approvals, cancel, persistence and restart as a chat
// run. The steps go in order, each recorded in the run's state (the next step, the phase of the
// current one, the outputs so far) so that a restart resumes at the step it stood on:
// - a tool step renders its parameters and takes the agent's path through the approval gate;
// - a prompt step makes one model call with the chat's base prompt;
// - an agent step runs an agent segment of its own (the step's instruction, role and limit);
// - `when:` false skips a step.
// A run started from free text first turns it into parameters with one model call (constrained
// to the parameter schema when the upstream supports json_schema). Engine thread, except start.
class runner {
public:
    runner(const config::context_config& limits, const registry& workflows,
           const tools::registry& tools, agent::run_registry& runs, agent::agent_loop& loop,
           agent::approval_gate& gate, agent::run_journal& journal,
           const agent::system_prompts& prompts, agent::model_port& model);

    // Starts the workflow in the chat, with `parameters` already validated or, without them,
    // from the user's free-text `input`. Any thread.
    net::awaitable<agent::started_run> start(store::chat_record chat,
                                             std::shared_ptr<const workflow> definition,
                                             std::optional<boost::json::object> parameters,
                                             std::string input, agent::parent_trace parent = {});

    // The driver of a workflow run resumed after a restart (its definition looked up again by
    // id; a workflow removed meanwhile fails the run with a message for the human).
    agent::run_registry::driver resume(agent::live_run& run);

private:
    net::awaitable<void> drive(agent::live_run& run, std::shared_ptr<const workflow> definition);
    net::awaitable<bool> extract_parameters(agent::live_run& run, const workflow& definition);
    net::awaitable<bool> deliver_step(agent::live_run& run, const tools::tool_result& result);
    // Starts the current step (phase next): skip it, or prepare its phase. False when it failed.
    net::awaitable<bool> begin_step(agent::live_run& run, const workflow& definition);

    const config::context_config& limits_;
    const registry& workflows_;
    const tools::registry& tools_;
    agent::run_registry& runs_;
    agent::agent_loop& loop_;
    agent::approval_gate& gate_;
    agent::run_journal& journal_;
    const agent::system_prompts& prompts_;
    agent::model_port& model_;
};

}  // namespace gateway::workflows
