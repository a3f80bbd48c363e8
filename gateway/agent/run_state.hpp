#pragma once

#include "gateway/agent/conversation.hpp"
#include "gateway/agent/model_usage.hpp"
#include "gateway/record_status.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A run's state, typed: what the engine needs to resume a run where it stood, stored as JSON in
// the run's record (runs.state) with a `version`. Conversions are written by hand beside each
// struct and never throw: a stored state that cannot be read is an error value. Version 1 (the
// unversioned JSON of the first release) uses the same keys and reads as version 2 with defaults.
namespace gateway::agent {

namespace json = boost::json;

// A run's status (run_status, is_final) is gateway/record_status.hpp's, shared with the store.

// run.completed, run.failed and run.cancelled: the last event of a run.
bool is_final_event(std::string_view type);

// What a write was about to do, saved before it ran, so that a run resumed after a crash can
// tell from the target whether the write happened (see tool_runner::judge_interrupted).
struct write_intent {
    std::string path;           // the workspace file written, "" for the chat's document
    bool existed = false;       // the target existed before the write
    std::string before_sha256;  // hex digests of the target's content before and after
    std::string after_sha256;   // "" after: the write deletes the target
};

// A call of the model (or a workflow's tool step) on its way through approval and execution.
struct pending_call {
    std::string call_id;
    std::string tool;
    json::object parameters;
    bool terminate = false;
    bool asked = false;             // approval.required was announced
    std::int64_t requested_at = 0;  // Unix ms, when it was asked
    std::string workflow_step;      // the workflow step it is, "" for an agent's call
    std::string reason;             // why it is asked: "" or "interrupted" (asked again)
    // A document edit: the document version its preview was made on (what the human approved).
    std::optional<std::int64_t> document_version;
    std::optional<write_intent> executing;  // set while the write runs
    std::string native_id;  // a native call: the provider's id, which its result must name
};

enum class workflow_phase { next, extract, tool, prompt, agent };
std::string_view phase_name(workflow_phase p);

struct step_output {
    std::string output;
    json::object data;
    bool skipped = false;
};

// Where a workflow run stands: the next step, the phase of the current one, the outputs so far.
struct workflow_progress {
    std::string id;
    json::object parameters;
    std::size_t next = 0;
    workflow_phase phase = workflow_phase::next;
    std::map<std::string, step_output> outputs;
    std::string input;  // free text the parameters are read from (phase extract)
    std::string text;   // a prompt step's rendered text (phase prompt)
    std::string role;   // an agent step's role (phase agent)
};

struct run_state {
    // 4: `failed` holds typed messages (3 and before: {"role", "content"}, still read).
    static constexpr int current_version = 4;
    int version = current_version;

    // The agent segment (a chat run is one; each agent step of a workflow starts one).
    conversation failed;            // malformed replies and their feedback since a good one
    int retries = 0;                // malformed replies in a row
    std::string last_call;          // the previous call's signature
    int identical = 0;              // how often it came in a row
    int tool_errors = 0;            // failing tool calls in a row
    bool final_request = false;     // the step cap was reached; the final answer asked for
    std::size_t segment_start = 0;  // where the segment starts in the conversation
    std::optional<int> turns;       // a workflow segment's own turns and their limit
    std::optional<int> turn_limit;

    // A chat run's history (the chat's earlier turns before this run's message).
    std::optional<std::size_t> turn_start;  // where the current turn starts
    std::size_t left_out = 0;               // earlier messages not loaded (context budget)
    std::size_t first_sent = 0;             // the first history message still sent
    std::size_t trim_reported = 0;          // left-out messages context.trimmed announced

    std::vector<std::string> approved_tools;  // approved with scope "run"
    std::int64_t active_ms = 0;               // wall time, excluding waits for approval
    std::optional<pending_call> pending;
    std::vector<pending_call> queue;  // the other calls of a native turn, run after `pending`
    std::optional<workflow_progress> workflow;
    // What the run's answered model calls used and cost, summed as each is settled.
    model_usage usage;
};

void tag_invoke(const json::value_from_tag&, json::value& v, const write_intent& w);
boost::system::result<write_intent> tag_invoke(const json::try_value_to_tag<write_intent>&,
                                               const json::value& v);
void tag_invoke(const json::value_from_tag&, json::value& v, const pending_call& p);
boost::system::result<pending_call> tag_invoke(const json::try_value_to_tag<pending_call>&,
                                               const json::value& v);
void tag_invoke(const json::value_from_tag&, json::value& v, const step_output& s);
boost::system::result<step_output> tag_invoke(const json::try_value_to_tag<step_output>&,
                                              const json::value& v);
void tag_invoke(const json::value_from_tag&, json::value& v, const workflow_progress& w);
boost::system::result<workflow_progress> tag_invoke(
    const json::try_value_to_tag<workflow_progress>&, const json::value& v);
void tag_invoke(const json::value_from_tag&, json::value& v, const run_state& s);
boost::system::result<run_state> tag_invoke(const json::try_value_to_tag<run_state>&,
                                            const json::value& v);

// The stored form, and back. An empty text is a fresh state (version 1 runs had none at start);
// a state of a later version than this build knows is refused.
std::string serialize_state(const run_state& s);
boost::system::result<run_state> parse_state(std::string_view text);
// Only the usage of a stored state, for the views that show it without the rest: zero when the
// state is empty, cannot be read, or has none.
model_usage usage_of(std::string_view text);

}  // namespace gateway::agent
