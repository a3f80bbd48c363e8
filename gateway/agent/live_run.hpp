#pragma once

#include "gateway/agent/model_client.hpp"
#include "gateway/agent/run_state.hpp"
#include "gateway/config/config.hpp"
#include "gateway/observability/trace.hpp"
#include "gateway/store/records.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gateway::tools {
class workspace;
}

namespace gateway::agent {

namespace net = boost::asio;

struct commit_in_flight;  // run_journal.hpp

// A human's answer to an approval.required event.
struct decision {
    bool approve = false;
    std::optional<boost::json::object> parameters;  // edited parameters (approve only)
    std::string feedback;                           // told to the model on reject
    bool whole_run = false;                         // scope "run": approve this tool from now on
};

// How a run ended; set by the part that ended it, recorded by the registry.
struct run_ending {
    run_status status = run_status::completed;
    std::string output;
    std::string error;
};

// One live run. It lives on the engine's thread and every part of the engine reads and writes it
// there only: no lock. `record` is the stored row (the status, step and output as the API shows
// them); `state` is what a restart resumes from; `conversation` follows the system prompt and
// only grows, so it is stored message by message.
struct live_run {
    explicit live_run(const net::any_io_executor& executor) : wake(executor), wall(executor) {}

    store::chat_record chat;
    tools::role role = tools::role::editor;
    store::run_record record;
    run_state state;
    agent::conversation conversation;
    std::size_t stored_messages = 0;  // how much of `conversation` went to the store
    std::int64_t last_event = 0;      // the sequence number of its last event (taken, maybe not
                                      // yet committed: see run_journal::batch::event)
    std::string system_prompt;

    // Writes held back to go out with the run's next commit (run_journal::defer), and whether
    // any are: that commit then carries the run's state too.
    store::write_batch deferred;
    bool deferred_state = false;
    // The run's commits on their way to the store (run_journal::send), oldest first; the last
    // stays until one after it is made, or until settled, and keeps a failure.
    std::deque<std::shared_ptr<commit_in_flight>> on_way;

    // The stored record of the pending call, kept in step with it.
    std::optional<store::tool_call_record> call;

    std::shared_ptr<tools::workspace> files;  // the chat's workspace, opened for this run
    net::steady_timer wake;                   // approval waits; cancelled to wake the run
    net::steady_timer wall;                   // the wall-time limit while the model is asked
    call_canceller canceller;
    // The run's invoke_agent span (not recording unless traced): its model calls and tool calls
    // are its children. A run resumed after a restart starts a trace of its own.
    observability::span trace;
    // How long the human took to decide on the call just settled (-1: it was not asked).
    std::int64_t approval_waited_ms = -1;
    bool wall_hit = false;
    bool cancel_requested = false;
    bool stopping = false;  // the engine stops: leave the run as stored, resumable
    // Its row is in the store: from then on a lease renewal that does not return it means
    // another replica took it (a renewal sent while the row was being inserted cannot).
    bool stored = false;
    std::optional<decision> decided;  // the human's decision on the call awaiting approval
    std::optional<run_ending> ended;
    std::chrono::steady_clock::time_point segment_started = std::chrono::steady_clock::now();

    // Wall time spent, excluding time awaiting approval.
    config::duration spent() const {
        return config::duration(state.active_ms) +
               std::chrono::duration_cast<config::duration>(std::chrono::steady_clock::now() -
                                                            segment_started);
    }
    // Banks the time spent so far (before a pause or a checkpoint).
    void bank_time() {
        state.active_ms = spent().count();
        segment_started = std::chrono::steady_clock::now();
    }
    void end(run_status status, std::string output, std::string error) {
        ended = run_ending{status, std::move(output), std::move(error)};
    }
    // Makes `p` the pending call: its stored record starts as pending at this step.
    void open_call(pending_call p) {
        call = store::tool_call_record{p.call_id,
                                       record.id,
                                       record.step,
                                       p.tool,
                                       boost::json::serialize(p.parameters),
                                       tool_call_status::pending,
                                       "",
                                       now_ms()};
        state.pending = std::move(p);
    }
    bool awaiting(const std::string& call_id) const {
        return state.pending && state.pending->asked && state.pending->call_id == call_id &&
               record.status == run_status::awaiting_approval;
    }
};

// "300 s": a limit as the human reads it.
inline std::string duration_text(config::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

}  // namespace gateway::agent
