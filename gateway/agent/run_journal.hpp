#pragma once

#include "gateway/agent/live_run.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::agent {

// A commit the run did not wait for (run_journal::send): `done` is cancelled when it has been
// stored and its watchers woken, or has failed. Engine thread only.
struct commit_in_flight {
    explicit commit_in_flight(const net::any_io_executor& executor) : done(executor) {
        done.expires_at(net::steady_timer::time_point::max());
    }
    net::steady_timer done;
    bool finished = false;
    std::exception_ptr error;
};

// "Commit, then notify" in one place. Everything a client is told about a run — its events, the
// state a restart resumes from, its calls, approvals and final answer — is written to the store
// one commit at a time, each one transaction, and only then are the run's watchers woken, so a
// watcher that reads the store after a wake-up always finds what woke it.
//
// Events carry the fields every event has (type, run_id, step, max_steps) and excerpts of long
// texts: a string over `excerpt_bytes` is cut, and the event lists the cut pointers in
// `truncated` and the resource that keeps them whole in `full`.
//
// Thread safety: subscribe/unsubscribe from any thread; batches and commits on the engine thread,
// which owns the runs.
class run_journal {
public:
    run_journal(store::state_store& store, std::size_t excerpt_bytes);

    // What one commit writes for one run.
    class batch {
    public:
        // An event, numbered after the run's last one.
        void event(std::string_view type, boost::json::object data);
        // The run's pending call record (live_run::call), as it stands now.
        void call();
        // A call just opened (live_run::open_call): its record and its tool.call event.
        void call_opened();
        void approval(store::approval_record approval);
        // The run's record (its status) as it stands now, with the state last stored: for a
        // change of status the run's state does not take up yet (a decision taken while the run
        // waits for it). The state itself goes only with checkpoint().
        void run_status();
        // A message of the chat (the user's, or the final answer).
        void chat_message(providers::role who, std::string content);
        void backup(store::backup_record backup);
        bool has_events() const { return !writes_.events.empty(); }

    private:
        friend class run_journal;
        batch(run_journal& journal, live_run& run) : journal_(journal), run_(run) {}
        run_journal& journal_;
        live_run& run_;
        store::write_batch writes_;
    };

    batch begin(live_run& run) { return batch(*this, run); }

    // Commits `b` with the run's record, its state and the conversation messages not yet stored,
    // then wakes the run's watchers.
    net::awaitable<void> checkpoint(live_run& run, batch b);
    // Commits `b` alone (events that change no state), then wakes the watchers.
    net::awaitable<void> record(live_run& run, batch b);
    // Starts committing `b` (with the run's state when `with_state`) and returns without waiting
    // for the store: the run asks the model, or runs its tool, while the writer thread stores
    // it, and the watchers are woken once it is stored. For writes that nothing the run does
    // next depends on: the model request a restart would make again, a call a restart would
    // read from the state before it. With more than `max_commits_on_way` on their way it waits
    // for the oldest, so a slow store slows the run instead of piling up its writes.
    //
    // Every commit of a run, sent or awaited, is queued behind the one before it the moment it
    // is handed over (nothing waits in between), so commits land and wake watchers in the
    // order their events were numbered. One queued behind a failed commit is not made and fails
    // too: a failure stays with the run, thrown by every later awaited commit and settle(),
    // until forget_failure().
    net::awaitable<void> send(live_run& run, batch b, bool with_state);
    // Enough to ride out a WAL checkpoint or a busy writer thread without the run waiting.
    static constexpr std::size_t max_commits_on_way = 8;
    // Waits for the commits send() started that are still on their way; throws if one failed.
    net::awaitable<void> settle(live_run& run);
    // Waits for the commits on their way and forgets a failure among them: after the run's
    // driver has handled it, the run's end can still be recorded.
    net::awaitable<void> forget_failure(live_run& run);
    // Holds a checkpoint back: `b` goes out with the run's next commit, in one transaction and
    // before that commit's own writes. A step's result is deferred so that it is stored with the
    // next model request instead of alone, one store round trip less per step. Whatever ends or
    // stops the run commits (finish) or flushes it.
    void defer(live_run& run, batch b);
    // Commits what defer() held back, if anything, then wakes the watchers.
    net::awaitable<void> flush(live_run& run);
    // Stores how the run ended (run.ended): its final state, the final answer as a chat message,
    // and the final events. `released` is called after the commit and before the watchers are
    // woken: a client that hears of the end finds the chat free for its next message.
    net::awaitable<void> finish(live_run& run, const std::function<void()>& released);
    // Waits for the last commit on the run's way to land, failed or not. A watcher that reads
    // the store may see the run's end before `released` has run: the next message waits here
    // for the end it heard of instead of being refused.
    static net::awaitable<void> landed(const live_run& run);

    // The events of one commit, in order, shared by every subscriber of the run.
    using committed = std::shared_ptr<const std::vector<store::event_record>>;
    // Calls `wake` after every commit with events of the run, with those events (already in the
    // store); `wake` must only post work to its own executor. Returns a handle for
    // unsubscribe(). Any thread.
    std::uint64_t subscribe(const std::string& run_id, std::function<void(committed)> wake);
    void unsubscribe(const std::string& run_id, std::uint64_t handle);
    // Wakes the run's subscribers with no events: another replica committed some, and they are
    // to be read from the store. Every run's, when `run_id` is empty (notifications were lost).
    void nudge(const std::string& run_id);

    store::state_store& store() { return store_; }

private:
    // Queues the batch behind the run's commits on their way and awaits it; `released`, if
    // any, is called once it is stored and before the watchers are woken.
    net::awaitable<void> commit(live_run& run, batch b, bool with_state,
                                std::function<void()> released = nullptr);
    // Hands the batch to the store behind the run's last commit on its way; returns at once.
    std::shared_ptr<commit_in_flight> enqueue(live_run& run, batch b, bool with_state,
                                              std::function<void()> released);
    // What a commit of `b` writes, with what defer() held back, the run's state when
    // `with_state` and the conversation messages not yet stored; taken now.
    store::write_batch take(live_run& run, batch b, bool with_state);
    net::awaitable<void> store_then_notify(std::shared_ptr<commit_in_flight> previous,
                                           std::string run_id, store::write_batch writes,
                                           committed events, std::function<void()> released);
    static net::awaitable<void> wait_for(commit_in_flight& flight);
    // Waits for `flight` and throws its failure; once it is stored, so is everything before it,
    // and the landed commits leave the run's queue.
    static net::awaitable<void> land(live_run& run, std::shared_ptr<commit_in_flight> flight);
    void notify(const std::string& run_id, const committed& events);

    store::state_store& store_;
    std::size_t excerpt_bytes_;
    mutable std::mutex mutex_;  // guards subscribers_
    std::map<std::string, std::map<std::uint64_t, std::function<void(committed)>>> subscribers_;
    std::uint64_t next_subscriber_ = 1;
};

}  // namespace gateway::agent
