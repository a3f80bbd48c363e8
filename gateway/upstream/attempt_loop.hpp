#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

// The one attempt loop (docs/routing.md) of every path that calls a model: the /v1 face's
// forwarded and translated requests and the agent's model calls. The loop owns what both faces
// must decide alike — which target comes next (attempt_plan), the wait before the same target
// again, the targets that cannot take the request, the move to on_context_window, and what each
// attempt's end tells the health board. A face owns what an attempt is: bytes forwarded (or
// translated) to a client, or a reply decoded for a run, and when its answer is committed.
namespace gateway::upstream {

namespace net = boost::asio;

// How one attempt ended, as the face that made it tells the loop.
struct attempt_outcome {
    enum class end {
        committed,  // the answer is the client's (a success, the request's own error, or what
                    // the last attempt got): no other attempt follows
        held,       // a failure held back, nothing of it seen by the client: `judged` says which
        skipped,    // the target cannot take this request (its dialect, its key): not tried
        stopped,    // the client went away, the run was cancelled, or the gateway stops
    };
    end how = end::stopped;
    verdict judged = verdict::failed;             // committed or held: the answer, judged
    std::optional<config::duration> retry_after;  // what the answer asked for
    clock::duration first_byte{};                 // a success: request sent -> its head
    // A failure: what failed, for the Health page ("cannot connect to …", "answered 503").
    std::string error;
};

// What the loop tells an attempt besides its target.
struct attempt_terms {
    bool last = false;      // no other attempt may follow: nothing can be held back for one
    bool may_move = false;  // a context-window refusal would move to on_context_window: hold it
};

// What a face does for the loop. Used from one coroutine at a time.
class attempt_face {
public:
    virtual ~attempt_face() = default;
    // Whether the request ended meanwhile (the client left, the run was cancelled).
    virtual bool stopped() const = 0;
    // Before `target` is tried again (nothing else is left), after the attempt before failed:
    // waits `wait` (the plan's backoff; may be 0). False: the request ended meanwhile.
    virtual net::awaitable<bool> again(const config::route_target& target,
                                       config::duration wait) = 0;
    // Before another `target` is tried after one that failed (at once, no wait).
    virtual net::awaitable<void> fall_back(const config::route_target& target) = 0;
    // One attempt at `target`.
    virtual net::awaitable<attempt_outcome> attempt(const config::route_target& target,
                                                    const attempt_terms& terms) = 0;
};

// How the loop ended: an attempt committed, the request stopped, or no attempt held
// (max_attempts, the deadline, or no target left that can take it).
enum class attempts_end { committed, stopped, exhausted };

// Runs `plan`'s attempts through `face` until one commits, the request stops, or none is left;
// each attempt's end is told to the plan (and so to the health board) as its verdict says.
net::awaitable<attempts_end> run_attempts(attempt_plan& plan, attempt_face& face);

}  // namespace gateway::upstream
