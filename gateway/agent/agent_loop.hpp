#pragma once

#include "gateway/agent/approval_gate.hpp"
#include "gateway/agent/live_run.hpp"
#include "gateway/agent/model_port.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/config/config.hpp"
#include "gateway/tools/registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <optional>
#include <string>

namespace gateway::agent {

// One agent segment, per the design's loop contract: ask the model; take its reply apart (a
// final answer, one call, or malformed); re-ask a malformed reply with its specific feedback at
// most `max_retries` times in a row (the failed attempts leave the history once the model
// recovers); settle each call through the approval gate and hand its result back; and apply the
// limits — steps (at the cap the model is asked once for its final answer), wall time (approval
// waits excluded), identical calls in a row, tool errors in a row — until the model answers, a
// call with `terminate` ends it, a limit does, or the run is cancelled. A chat run is one
// segment; each agent step of a workflow is one.
//
// Every step is stored through the journal before it is announced, so a run resumed after a
// restart continues where it stood: its pending call first. The model and the tools are reached
// through the model_port and the approval gate only, so the loop runs in memory in tests.
// Engine thread only.
class agent_loop {
public:
    agent_loop(const config::context_config& limits, const tools::registry& tools,
               model_port& model, approval_gate& gate, run_journal& journal);

    // Runs the segment to its end: run.ended is set (completed, failed, cancelled), or nothing is
    // when the engine is stopping (run.stopping): the run then stays as stored.
    net::awaitable<void> run(live_run& run);

    // One model call under the run's wall-time limit, with upstream retries announced as
    // model.retry. nullopt when the call did not give a reply: the run's ending is set (the
    // wall time ran out, it was cancelled, the upstream failed) unless the engine is stopping.
    // With `on_text` the reply is streamed and its text told as it arrives. A reply's usage and
    // cost are added to the run's totals and announced as model.replied, stored with the run's
    // next commit.
    net::awaitable<std::optional<providers::reply>> ask(live_run& run, providers::request r,
                                                        text_hook on_text = {});

    // The request a chat model is sent next: the system prompt, the conversation and the failed
    // attempts being re-asked. In the JSON protocol every message is said as the protocol says
    // it, with response_format on a json_schema upstream; with native tool calling the messages
    // go as they are (ids, provider_meta) with the registry's tools for the run's role, and no
    // tools allowed once the step cap asks for the final answer. A chat run's older turns are
    // left out first when the request would exceed the upstream's context budget; `trimmed` is
    // then the context.trimmed event to announce.
    struct request {
        providers::request model;
        std::optional<boost::json::object> trimmed;
    };
    request build_request(live_run& run);

private:
    void arm_wall(live_run& run);
    retry_hook retry_events(live_run& run);
    // Tells the watchers a streamed reply's text (message.delta) and its withdrawal
    // (message.reset); `told` follows whether text is out.
    text_hook text_events(live_run& run, bool& told);
    // Ends the run when the model made the same call identical_call_stop times in a row; true
    // then.
    bool repeated_too_often(live_run& run, const std::string& tool,
                            const boost::json::object& parameters);
    // Withdraws streamed text that was told (message.reset), when some was.
    net::awaitable<void> withdraw_text(live_run& run, bool& told);
    // Ends the run when a model call gave no reply; true when it did.
    bool answered(live_run& run, const model_failure* failed);
    // Adds what an answered call was charged to the run's totals and holds its model.replied
    // event back for the run's next commit, which stores the totals with it.
    void account(live_run& run, const settled_call& call);
    net::awaitable<bool> open_native_turn(live_run& run, const std::string& text,
                                          std::vector<providers::tool_call> calls);
    net::awaitable<bool> open_native_call(live_run& run, pending_call p);
    net::awaitable<bool> settle_pending(live_run& run);
    net::awaitable<bool> deliver(live_run& run, const tools::tool_result& result);
    // The guardrails' tool_result stage: `result` checked before the model reads it. The result
    // to hand on instead when a guardrail masked it or withheld it (a GUARDRAIL_BLOCKED failure),
    // told in `b` as a guardrail.applied event; nullopt when none changed it.
    net::awaitable<std::optional<tools::tool_result>> guard_result(live_run& run,
                                                                   const std::string& tool,
                                                                   const tools::tool_result& result,
                                                                   run_journal::batch& b);
    bool trim_history(live_run& run, std::size_t request_bytes,
                      std::optional<boost::json::object>& trimmed);

    const config::context_config& limits_;
    const tools::registry& tools_;
    model_port& model_;
    approval_gate& gate_;
    run_journal& journal_;
};

// What the model reads after a call: the result, or the failure with its code.
std::string result_message(std::string_view tool, const tools::tool_result& result);

}  // namespace gateway::agent
