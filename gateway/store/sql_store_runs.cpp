// sql_store's runs: rows, conversations, events, tool calls, approvals, backups, and commit().
#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

#include "gateway/observability/metrics.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <map>

namespace gateway::store {

namespace {

// Queries as sql_store.cpp says: literals, written once for both databases.
constexpr const char* insert_chat_sql =
    "INSERT INTO chats (" CHAT_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
constexpr const char* insert_message =
    "INSERT INTO messages (chat_id, run_id, role, content, created_at) "
    "VALUES ($1, $2, $3, $4, $5)";
constexpr const char* select_run_input =
    "SELECT content FROM messages WHERE run_id = $1 AND role = 'user' ORDER BY id LIMIT 1";
constexpr const char* select_run = "SELECT " RUN_COLUMNS " FROM runs WHERE id = $1";
constexpr const char* select_run_status = "SELECT status FROM runs WHERE id = $1";
constexpr const char* select_runs_of_chat =
    "SELECT " RUN_COLUMNS " FROM runs WHERE chat_id = $1 ORDER BY created_at, id";
constexpr const char* select_unfinished_runs =
    "SELECT " RUN_COLUMNS " FROM runs WHERE " UNFINISHED_RUN " ORDER BY created_at, id";
// An upsert, not a replace (a replace deletes the row first, and the cascade would take the
// run's events and tool calls with it), fenced by the lease: a row another replica has claimed
// is not written (nothing is returned, and the commit fails with lease_lost).
constexpr const char* upsert_run =
    "INSERT INTO runs (" RUN_COLUMNS
    ", owner, lease_expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
    "ON CONFLICT (id) DO UPDATE SET status = excluded.status, step = excluded.step, "
    "max_steps = excluded.max_steps, output = excluded.output, error = excluded.error, "
    "state = excluded.state, updated_at = excluded.updated_at, "
    "lease_expires = excluded.lease_expires WHERE runs.owner = excluded.owner RETURNING 1";

constexpr const char* select_run_messages =
    "SELECT run_id, seq, role, content, format FROM run_messages WHERE run_id = $1 ORDER BY seq";
constexpr const char* insert_run_message =
    "INSERT INTO run_messages (run_id, seq, role, content, format) VALUES ($1, $2, $3, $4, $5)";

constexpr const char* select_events_after =
    "SELECT run_id, seq, type, data, created_at FROM events WHERE run_id = $1 AND seq > $2 "
    "ORDER BY seq LIMIT $3";
constexpr const char* select_last_event =
    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = $1";
constexpr const char* insert_event =
    "INSERT INTO events (run_id, seq, type, data, created_at) VALUES ($1, $2, $3, $4, $5)";

constexpr const char* select_call = "SELECT " CALL_COLUMNS " FROM tool_calls WHERE id = $1";
constexpr const char* select_calls_of_run =
    "SELECT " CALL_COLUMNS " FROM tool_calls WHERE run_id = $1 ORDER BY created_at, {ord}";
// An upsert: a replace would cascade to the call's approval.
constexpr const char* upsert_call =
    "INSERT INTO tool_calls (" CALL_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO UPDATE SET "
    "parameters = excluded.parameters, status = excluded.status, result = excluded.result, "
    "preview = excluded.preview";

constexpr const char* select_approval =
    "SELECT call_id, run_id, decision, parameters, feedback, scope, decided_at FROM approvals "
    "WHERE call_id = $1";
constexpr const char* upsert_approval =
    "INSERT INTO approvals (call_id, run_id, decision, parameters, feedback, scope, decided_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (call_id) DO UPDATE SET "
    "decision = excluded.decision, parameters = excluded.parameters, "
    "feedback = excluded.feedback, scope = excluded.scope, decided_at = excluded.decided_at";

constexpr const char* select_last_backup =
    "SELECT call_id, run_id, path, existed, content, after_sha256, undone_at, created_at "
    "FROM write_backups WHERE run_id = $1 AND undone_at = 0 "
    "ORDER BY created_at DESC, {ord} DESC LIMIT 1";
constexpr const char* upsert_backup =
    "INSERT INTO write_backups (call_id, run_id, path, existed, content, after_sha256, "
    "undone_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (call_id) "
    "DO UPDATE SET undone_at = excluded.undone_at";

// Writes everything in `batch` inside the caller's transaction; the newest event of each run is
// added to `newest` for announce().
void apply(sql_connection& db, const write_batch& batch, const std::string& owner,
           std::int64_t lease_expires, std::map<std::string, std::int64_t>& newest) {
    auto now = now_ms();
    for (const auto& c : batch.chats)
        db.query(insert_chat_sql,
                 {c.id, c.created_at ? c.created_at : now, c.system_prompt, c.model, c.workspace,
                  c.role, std::string(edit_mode_name(c.edits)), c.title, c.user});
    for (const auto& r : batch.runs) {
        try {
            auto written = db.query(upsert_run,
                                    {r.id, r.chat_id, status_name(r.status), std::int64_t{r.step},
                                     std::int64_t{r.max_steps}, r.output, r.error, r.state,
                                     r.created_at ? r.created_at : now, now, owner, lease_expires});
            if (written.empty())
                throw lease_lost("run " + r.id + " is driven by another replica now");
        } catch (const unique_violation&) {
            // The id is the upsert's own conflict: the one other unique index on runs is one
            // unfinished run per chat.
            throw live_run_exists("chat " + r.chat_id + " already has an unfinished run");
        }
    }
    for (const auto& m : batch.run_messages)
        db.query(insert_run_message, {m.run_id, m.seq, m.role, m.content, m.format});
    for (const auto& c : batch.tool_calls)
        db.query(upsert_call,
                 {c.id, c.run_id, std::int64_t{c.step}, c.tool, c.parameters, status_name(c.status),
                  c.result, c.created_at ? c.created_at : now, c.preview});
    for (const auto& a : batch.approvals)
        db.query(upsert_approval, {a.call_id, a.run_id, a.decision, a.parameters, a.feedback,
                                   a.scope, a.decided_at ? a.decided_at : now});
    for (const auto& m : batch.messages)
        db.query(insert_message,
                 {m.chat_id, m.run_id, m.role, m.content, m.created_at ? m.created_at : now});
    for (const auto& b : batch.backups)
        db.query(upsert_backup, {b.call_id, b.run_id, b.path, std::int64_t{b.existed}, b.content,
                                 b.after_sha256, b.undone_at, b.created_at ? b.created_at : now});
    for (const auto& e : batch.events) {
        db.query(insert_event,
                 {e.run_id, e.seq, e.type, e.data, e.created_at ? e.created_at : now});
        auto& seq = newest[e.run_id];
        seq = std::max(seq, e.seq);
    }
}

// Announces (where the database announces) the newest sequence number of each run written, in
// one statement for the whole transaction: "<run id> <seq> <owner>" lines.
void announce(sql_connection& db, const std::map<std::string, std::int64_t>& newest,
              const std::string& owner) {
    const char* statement = db.dialect().announce_events;
    if (!statement || newest.empty()) return;
    std::string lines;
    for (const auto& [run_id, seq] : newest) {
        if (!lines.empty()) lines += '\n';
        lines += run_id + ' ' + std::to_string(seq) + ' ' + owner;
    }
    db.query(statement, {lines});
}

}  // namespace

net::awaitable<std::optional<run_record>> sql_store::run(std::string id) {
    return read_one(select_run, run_from, std::move(id));
}

net::awaitable<std::optional<gateway::run_status>> sql_store::run_status(std::string id) {
    return read_one(select_run_status, run_status_from, std::move(id));
}

net::awaitable<std::vector<run_record>> sql_store::runs_of_chat(std::string chat_id) {
    return read_all(select_runs_of_chat, run_from, std::move(chat_id));
}

net::awaitable<std::vector<run_record>> sql_store::unfinished_runs() {
    return read_all(select_unfinished_runs, run_from);
}

net::awaitable<std::vector<run_message_record>> sql_store::run_messages(std::string run_id) {
    return read_all(select_run_messages, run_message_from, std::move(run_id));
}

net::awaitable<std::optional<std::string>> sql_store::run_input(std::string run_id) {
    return read_one(select_run_input, first_text, std::move(run_id));
}

net::awaitable<std::vector<event_record>> sql_store::events_after(std::string run_id,
                                                                  std::int64_t after_seq,
                                                                  std::size_t max_events,
                                                                  std::size_t max_bytes) {
    auto work = [run_id = std::move(run_id), after_seq, max_events, max_bytes](sql_connection& db) {
        auto rows = db.query(select_events_after,
                             {run_id, after_seq, static_cast<std::int64_t>(max_events)});
        std::vector<event_record> out;
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < rows.size() && (out.empty() || bytes < max_bytes); ++i) {
            auto r = rows[i];
            out.push_back({r.text(0), r.integer(1), r.text(2), r.text(3), r.integer(4)});
            bytes += out.back().data.size();
        }
        return out;
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::int64_t> sql_store::last_event(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        return db.query(select_last_event, {run_id}).integer(0, 0);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<tool_call_record>> sql_store::tool_call(std::string id) {
    return read_one(select_call, tool_call_from, std::move(id));
}

net::awaitable<std::vector<tool_call_record>> sql_store::tool_calls(std::string run_id) {
    return read_all(select_calls_of_run, tool_call_from, std::move(run_id));
}

net::awaitable<std::optional<approval_record>> sql_store::approval(std::string call_id) {
    return read_one(select_approval, approval_from, std::move(call_id));
}

net::awaitable<std::optional<backup_record>> sql_store::last_backup(std::string run_id) {
    return read_one(select_last_backup, backup_from, std::move(run_id));
}

net::awaitable<void> sql_store::commit(write_batch batch) {
    if (batch.empty()) co_return;
    // Named, not a temporary of the co_await (GCC 12).
    auto initiation = [this](auto handler, write_batch batch) {
        // Resumed on its own executor, which is kept busy until then.
        auto home = net::make_work_guard(net::get_associated_executor(handler));
        auto resume = std::make_shared<decltype(handler)>(std::move(handler));
        queue_commit({std::move(batch), [resume, home](std::exception_ptr failure) {
                          net::post(home.get_executor(), [resume, home, failure]() mutable {
                              std::move (*resume)(failure);
                          });
                      }});
    };
    co_await net::async_initiate<const net::use_awaitable_t<>&, void(std::exception_ptr)>(
        std::move(initiation), net::use_awaitable, std::move(batch));
}

void sql_store::queue_commit(queued_commit commit) {
    std::lock_guard lock(groups_mutex_);
    if (!groups_.empty() && groups_.back().open) {
        groups_.back().commits.push_back(std::move(commit));
        return;
    }
    groups_.emplace_back().commits.push_back(std::move(commit));
    writer_.post([this](sql_connection& db) { write_commit_group(db); });
}

void sql_store::close_commit_group() {
    std::lock_guard lock(groups_mutex_);
    if (!groups_.empty()) groups_.back().open = false;
}

void sql_store::write_commit_group(sql_connection& db) {
    std::vector<queued_commit> group;
    {
        std::lock_guard lock(groups_mutex_);
        group = std::move(groups_.front().commits);
        groups_.pop_front();
    }
    auto& m = observability::metrics();
    // Batches [from, to) of the group in one transaction.
    auto commit_batches = [&](std::size_t from, std::size_t to) {
        auto lease = lease_end();
        std::map<std::string, std::int64_t> newest;
        std::size_t events = 0;
        db.transaction([&] {
            for (std::size_t i = from; i < to; ++i) {
                apply(db, group[i].batch, owner_, lease, newest);
                events += group[i].batch.events.size();
            }
            announce(db, newest, owner_);
        });
        m.store_transactions.with().inc();
        m.store_events.with().inc(static_cast<double>(events));
    };
    std::vector<std::exception_ptr> failed(group.size());
    try {
        commit_batches(0, group.size());
    } catch (...) {
        if (group.size() == 1) failed[0] = std::current_exception();
        // Failures are rare (a lease lost, a unique index, the connection): a group of several
        // is written again one batch per transaction, so the one that failed fails alone. The
        // group's transaction was rolled back, so writing a batch again is safe (were the
        // connection lost during COMMIT itself, a batch already there is refused by its keys
        // and fails, as it would have alone).
        for (std::size_t i = 0; group.size() > 1 && i < group.size(); ++i) {
            try {
                commit_batches(i, i + 1);
            } catch (...) {
                failed[i] = std::current_exception();
            }
        }
    }
    for (std::size_t i = 0; i < group.size(); ++i) group[i].done(failed[i]);
}

}  // namespace gateway::store
