#include "gateway/agent/run_journal.hpp"

#include "gateway/agent/status_phrase.hpp"
#include "gateway/clock.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/run_events.hpp"

#include "gateway/agent/excerpt.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

namespace gateway::agent {

namespace json = boost::json;

namespace {

// The agent's metrics, read off the events every run already records: one place sees every
// step, re-ask, tool call, approval and ending, whichever part of the engine made it.
void count(std::string_view type, const json::object& event) {
    auto& m = observability::metrics();
    if (type == event::model_requested) {
        // A turn of the agent loop (what max_steps limits), in chat runs and workflows' agent
        // steps alike; a re-ask of the same turn (attempt 2, 3…) is not another step.
        const auto* attempt = event.if_contains("attempt");
        if (attempt && attempt->is_int64() && attempt->as_int64() == 1) m.agent_steps.with().inc();
    } else if (type == event::model_retry) {
        if (auto reason = string_of(event, "reason"); !reason.empty())
            m.agent_reasks.with({reason}).inc();
    } else if (type == event::tool_result) {
        const auto* ok = event.if_contains("ok");
        bool good = ok && ok->is_bool() && ok->get_bool();
        m.tool_calls.with({string_of(event, "tool"), good ? "ok" : "error"}).inc();
    } else if (type == event::approval_required || type == event::approval_resolved) {
        // Waits are timed in this process; one that spans a restart is not observed.
        static std::mutex mutex;
        static std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> asked;
        std::lock_guard lock(mutex);
        auto call = string_of(event, "call_id");
        if (type == event::approval_required) {
            asked[std::string(call)] = std::chrono::steady_clock::now();
            return;
        }
        if (auto it = asked.find(call); it != asked.end()) {
            m.approval_wait.with().observe(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second)
                    .count());
            asked.erase(it);
        }
        if (string_of(event, "decision") == "reject")
            m.tool_calls.with({string_of(event, "tool"), "rejected"}).inc();
    } else if (event::ends_run(type)) {
        m.runs_finished.with({type.substr(4)}).inc();
    }
}

}  // namespace

run_journal::run_journal(store::state_store& store, std::size_t excerpt_bytes)
    : store_(store), excerpt_bytes_(excerpt_bytes) {}

void run_journal::batch::event(std::string_view type, json::object data) {
    json::value extra(std::move(data));
    auto cut = cut_long_strings(extra, journal_.excerpt_bytes_);
    // The fields every event has come first, so a frame reads well in a terminal too.
    json::object event{{"type", type},
                       {"run_id", run_.record.id},
                       {"step", run_.record.step},
                       {"max_steps", run_.record.max_steps}};
    for (auto& [key, value] : extra.as_object()) event[key] = std::move(value);
    if (!cut.empty()) {
        json::array pointers;
        for (auto& p : cut) pointers.emplace_back(p);
        event["truncated"] = std::move(pointers);
        if (auto* call = event.if_contains("call_id"); call && call->is_string())
            event["full"] =
                "/context/runs/" + run_.record.id + "/calls/" + std::string(call->as_string());
        else if (type == event::document_updated)
            event["full"] = "/context/chats/" + run_.chat.id + "/document";
        else
            event["full"] = "/context/runs/" + run_.record.id;
    }
    // Numbered now: batches of one run commit in the order they were made (one writer thread,
    // one engine thread), so numbers are never taken twice, even by a batch made while another
    // is on its way.
    count(type, event);
    auto seq = ++run_.last_event;
    writes_.events.push_back(
        {run_.record.id, seq, std::string(type), json::serialize(event), now_ms()});
}

void run_journal::batch::call() {
    if (run_.call) writes_.tool_calls.push_back(*run_.call);
}

void run_journal::batch::call_opened() {
    call();
    const auto& p = *run_.state.pending;
    event(event::tool_call, {{"call_id", p.call_id},
                             {"tool", p.tool},
                             {"parameters", p.parameters},
                             {"terminate", p.terminate},
                             {"status", status_phrase(p.tool, p.parameters)}});
}

void run_journal::batch::approval(store::approval_record approval) {
    writes_.approvals.push_back(std::move(approval));
}

void run_journal::batch::run_status() {
    // run_.record.state is what the last commit with the state stored (take() sets it), so the
    // upsert writes it back unchanged.
    run_.record.updated_at = now_ms();
    writes_.runs.push_back(run_.record);
}

void run_journal::batch::chat_message(providers::role who, std::string content) {
    writes_.messages.push_back({0, run_.chat.id, run_.record.id,
                                std::string(providers::role_name(who)), std::move(content),
                                now_ms()});
}

void run_journal::batch::backup(store::backup_record backup) {
    writes_.backups.push_back(std::move(backup));
}

net::awaitable<void> run_journal::checkpoint(live_run& run, batch b) {
    co_await commit(run, std::move(b), true);
}

net::awaitable<void> run_journal::record(live_run& run, batch b) {
    co_await commit(run, std::move(b), false);
}

namespace {

template <class T>
void append(std::vector<T>& to, std::vector<T>& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// `later` after `earlier`, in the order a transaction applies them.
void append(store::write_batch& earlier, store::write_batch& later) {
    append(earlier.chats, later.chats);
    append(earlier.runs, later.runs);
    append(earlier.run_messages, later.run_messages);
    append(earlier.tool_calls, later.tool_calls);
    append(earlier.approvals, later.approvals);
    append(earlier.messages, later.messages);
    append(earlier.backups, later.backups);
    append(earlier.events, later.events);
}

}  // namespace

void run_journal::defer(live_run& run, batch b) {
    append(run.deferred, b.writes_);
    run.deferred_state = true;
}

net::awaitable<void> run_journal::flush(live_run& run) {
    if (!run.deferred_state) co_return;
    co_await commit(run, begin(run), false);
}

store::write_batch run_journal::take(live_run& run, batch b, bool with_state) {
    if (run.deferred_state) {
        append(run.deferred, b.writes_);
        b.writes_ = std::exchange(run.deferred, {});
        with_state = with_state || std::exchange(run.deferred_state, false);
    }
    auto& writes = b.writes_;
    if (with_state) {
        run.bank_time();
        run.record.state = serialize_state(run.state);
        run.record.updated_at = now_ms();
        writes.runs.push_back(run.record);
        // Taken now, like event numbers: a later batch never writes a message twice.
        for (; run.stored_messages < run.conversation.size(); ++run.stored_messages)
            writes.run_messages.push_back(
                message_row(run.record.id, static_cast<std::int64_t>(run.stored_messages),
                            run.conversation[run.stored_messages]));
    }
    return std::move(writes);
}

std::shared_ptr<commit_in_flight> run_journal::enqueue(live_run& run, batch b, bool with_state,
                                                       std::function<void()> released) {
    auto writes = take(run, std::move(b), with_state);
    // Watchers are handed the events themselves, so those that are caught up need not read them
    // back from the store.
    auto events = std::make_shared<const std::vector<store::event_record>>(writes.events);
    auto executor = run.wake.get_executor();
    auto& on_way = run.on_way;
    // Landed ones leave; the last stays, so that the next is queued behind it and a failure
    // carries over to it.
    while (on_way.size() > 1 && on_way.front()->finished) on_way.pop_front();
    auto previous = on_way.empty() ? nullptr : on_way.back();
    auto flight = std::make_shared<commit_in_flight>(executor);
    on_way.push_back(flight);
    // Holds no reference to the run: it may have left its driver by the time this completes.
    net::co_spawn(executor,
                  store_then_notify(std::move(previous), run.record.id, std::move(writes),
                                    std::move(events), std::move(released)),
                  [flight](std::exception_ptr error) {
                      flight->error = error;
                      flight->finished = true;
                      flight->done.cancel();
                  });
    return flight;
}

net::awaitable<void> run_journal::commit(live_run& run, batch b, bool with_state,
                                         std::function<void()> released) {
    auto flight = enqueue(run, std::move(b), with_state, std::move(released));
    co_await land(run, flight);
}

net::awaitable<void> run_journal::send(live_run& run, batch b, bool with_state) {
    enqueue(run, std::move(b), with_state, nullptr);
    // Queued first, then (with too many on their way) waited for: a batch is in the queue as
    // soon as it is handed over, so no commit of the run numbered after it can land before it.
    if (run.on_way.size() > max_commits_on_way) co_await wait_for(*run.on_way.front());
}

net::awaitable<void> run_journal::store_then_notify(std::shared_ptr<commit_in_flight> previous,
                                                    std::string run_id, store::write_batch writes,
                                                    committed events,
                                                    std::function<void()> released) {
    if (previous) {
        co_await wait_for(*previous);
        // A commit after a failed one is not made: the run learns of the first failure.
        if (previous->error) std::rethrow_exception(previous->error);
    }
    co_await store_.commit(std::move(writes));
    if (released) released();
    notify(run_id, events);
}

net::awaitable<void> run_journal::wait_for(commit_in_flight& flight) {
    while (!flight.finished)
        [[maybe_unused]] auto [ec] = co_await flight.done.async_wait(as_tuple(net::use_awaitable));
}

net::awaitable<void> run_journal::land(live_run& run, std::shared_ptr<commit_in_flight> flight) {
    co_await wait_for(*flight);
    if (flight->error) std::rethrow_exception(flight->error);
    // Stored, and so is everything queued before it.
    while (!run.on_way.empty() && run.on_way.front()->finished) run.on_way.pop_front();
}

net::awaitable<void> run_journal::landed(const live_run& run) {
    if (run.on_way.empty()) co_return;
    auto last = run.on_way.back();  // kept: the run may leave its driver meanwhile
    co_await wait_for(*last);
}

net::awaitable<void> run_journal::settle(live_run& run) {
    // The last one lands after all the others (each is queued behind the one before).
    if (!run.on_way.empty()) co_await land(run, run.on_way.back());
}

net::awaitable<void> run_journal::forget_failure(live_run& run) {
    if (run.on_way.empty()) co_return;
    auto last = run.on_way.back();
    co_await wait_for(*last);
    if (run.on_way.back() == last) run.on_way.clear();
}

net::awaitable<void> run_journal::finish(live_run& run, const std::function<void()>& released) {
    const auto& ending = *run.ended;
    run.record.status = ending.status;
    run.record.output = ending.output;
    run.record.error = ending.error;
    run.state.pending.reset();
    auto b = begin(run);
    // A call left pending (cancelled, expired) is stored as it ended.
    b.call();
    run.call.reset();
    switch (ending.status) {
        case run_status::completed:
            b.chat_message(providers::role::assistant, ending.output);
            b.event(event::message, {{"role", "assistant"}, {"content", ending.output}});
            b.event(event::run_completed, {{"output", ending.output}});
            break;
        case run_status::failed:
            b.event(event::run_failed, {{"error", ending.error}});
            break;
        default:
            b.event(event::run_cancelled, {});
    }
    co_await commit(run, std::move(b), true, released);
    observability::log_info("run " + run.record.id + ": " +
                            std::string(status_name(ending.status)) +
                            (ending.error.empty() ? "" : ": " + ending.error));
}

std::uint64_t run_journal::subscribe(const std::string& run_id,
                                     std::function<void(committed)> wake) {
    std::lock_guard lock(mutex_);
    auto handle = next_subscriber_++;
    subscribers_[run_id][handle] = std::move(wake);
    return handle;
}

void run_journal::unsubscribe(const std::string& run_id, std::uint64_t handle) {
    std::lock_guard lock(mutex_);
    auto it = subscribers_.find(run_id);
    if (it == subscribers_.end()) return;
    it->second.erase(handle);
    if (it->second.empty()) subscribers_.erase(it);
}

void run_journal::nudge(const std::string& run_id) {
    static const committed none = std::make_shared<const std::vector<store::event_record>>();
    std::vector<std::function<void(committed)>> wakers;
    {
        std::lock_guard lock(mutex_);
        for (auto& [id, subscribers] : subscribers_)
            if (run_id.empty() || id == run_id)
                for (auto& [handle, wake] : subscribers) wakers.push_back(wake);
    }
    for (auto& wake : wakers) wake(none);
}

void run_journal::notify(const std::string& run_id, const committed& events) {
    if (events->empty()) return;
    std::vector<std::function<void(committed)>> wakers;
    {
        std::lock_guard lock(mutex_);
        if (auto it = subscribers_.find(run_id); it != subscribers_.end())
            for (auto& [handle, wake] : it->second) wakers.push_back(wake);
    }
    for (auto& wake : wakers) wake(events);
}

}  // namespace gateway::agent
