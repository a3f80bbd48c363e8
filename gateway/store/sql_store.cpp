#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace gateway::store {

namespace {

// Every query is a literal (its address keys each connection's statement cache), written once
// for both databases: `$1` parameters, {ord} and {lock} as sql_driver.hpp's dialect table says.
#define CHAT_COLUMNS "id, created_at, system_prompt, model, workspace, role, edits, title"
constexpr const char* select_chat = "SELECT " CHAT_COLUMNS " FROM chats WHERE id = $1";
constexpr const char* select_chats = "SELECT " CHAT_COLUMNS " FROM chats ORDER BY created_at, id";
constexpr const char* insert_chat_sql =
    "INSERT INTO chats (" CHAT_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
#undef CHAT_COLUMNS
constexpr const char* update_chat_sql =
    "UPDATE chats SET edits = COALESCE($2, edits), title = COALESCE($3, title) WHERE id = $1";
constexpr const char* delete_chat_sql = "DELETE FROM chats WHERE id = $1";

#define MESSAGE_COLUMNS "id, chat_id, run_id, role, content, created_at"
constexpr const char* select_message_page =
    "SELECT " MESSAGE_COLUMNS " FROM messages WHERE chat_id = $1 AND id < $2 "
    "ORDER BY id DESC LIMIT $3";
constexpr const char* select_message_sizes =
    "SELECT id, octet_length(content) FROM messages WHERE chat_id = $1 ORDER BY id DESC";
constexpr const char* select_messages_from =
    "SELECT " MESSAGE_COLUMNS " FROM messages WHERE chat_id = $1 AND id >= $2 ORDER BY id";
#undef MESSAGE_COLUMNS
constexpr const char* insert_message =
    "INSERT INTO messages (chat_id, run_id, role, content, created_at) "
    "VALUES ($1, $2, $3, $4, $5)";
constexpr const char* select_run_input =
    "SELECT content FROM messages WHERE run_id = $1 AND role = 'user' ORDER BY id LIMIT 1";

#define RUN_COLUMNS \
    "id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at"
constexpr const char* select_run = "SELECT " RUN_COLUMNS " FROM runs WHERE id = $1";
constexpr const char* select_run_status = "SELECT status FROM runs WHERE id = $1";
constexpr const char* select_runs_of_chat =
    "SELECT " RUN_COLUMNS " FROM runs WHERE chat_id = $1 ORDER BY created_at, id";
constexpr const char* select_unfinished_runs =
    "SELECT " RUN_COLUMNS
    " FROM runs WHERE status IN ('running', 'awaiting_approval') ORDER BY created_at, id";
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
#undef RUN_COLUMNS

constexpr const char* select_run_messages =
    "SELECT run_id, seq, role, content FROM run_messages WHERE run_id = $1 ORDER BY seq";
constexpr const char* insert_run_message =
    "INSERT INTO run_messages (run_id, seq, role, content) VALUES ($1, $2, $3, $4)";

constexpr const char* select_events_after =
    "SELECT run_id, seq, type, data, created_at FROM events WHERE run_id = $1 AND seq > $2 "
    "ORDER BY seq LIMIT $3";
constexpr const char* select_last_event =
    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = $1";
constexpr const char* insert_event =
    "INSERT INTO events (run_id, seq, type, data, created_at) VALUES ($1, $2, $3, $4, $5)";

#define CALL_COLUMNS "id, run_id, step, tool, parameters, status, result, created_at, preview"
constexpr const char* select_call = "SELECT " CALL_COLUMNS " FROM tool_calls WHERE id = $1";
constexpr const char* select_calls_of_run =
    "SELECT " CALL_COLUMNS " FROM tool_calls WHERE run_id = $1 ORDER BY created_at, {ord}";
// An upsert: a replace would cascade to the call's approval.
constexpr const char* upsert_call =
    "INSERT INTO tool_calls (" CALL_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO UPDATE SET "
    "parameters = excluded.parameters, status = excluded.status, result = excluded.result, "
    "preview = excluded.preview";
#undef CALL_COLUMNS

constexpr const char* select_approval =
    "SELECT call_id, run_id, decision, parameters, feedback, scope, decided_at FROM approvals "
    "WHERE call_id = $1";
constexpr const char* upsert_approval =
    "INSERT INTO approvals (call_id, run_id, decision, parameters, feedback, scope, decided_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (call_id) DO UPDATE SET "
    "decision = excluded.decision, parameters = excluded.parameters, "
    "feedback = excluded.feedback, scope = excluded.scope, decided_at = excluded.decided_at";

constexpr const char* select_document =
    "SELECT chat_id, name, content, version, updated_at FROM documents WHERE chat_id = $1";
constexpr const char* select_document_version =
    "SELECT version FROM documents WHERE chat_id = $1{lock}";
constexpr const char* upsert_document =
    "INSERT INTO documents (chat_id, name, content, version, updated_at) "
    "VALUES ($1, $2, $3, 1, $4) ON CONFLICT (chat_id) DO UPDATE SET name = $2, content = $3, "
    "version = documents.version + 1, updated_at = $4 RETURNING version";

constexpr const char* select_last_backup =
    "SELECT call_id, run_id, path, existed, content, after_sha256, undone_at, created_at "
    "FROM write_backups WHERE run_id = $1 AND undone_at = 0 "
    "ORDER BY created_at DESC, {ord} DESC LIMIT 1";
constexpr const char* upsert_backup =
    "INSERT INTO write_backups (call_id, run_id, path, existed, content, after_sha256, "
    "undone_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (call_id) "
    "DO UPDATE SET undone_at = excluded.undone_at";

#define SESSION_COLUMNS                                                                           \
    "id, chat_id, kind, path, name, status, base_existed, base_snapshot, ai_exists, ai_version, " \
    "revision, edit_count, created_at, updated_at, resolved_at"
constexpr const char* select_sessions_of_chat =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE chat_id = $1 ORDER BY created_at, {ord}";
constexpr const char* select_open_sessions_of_chat =
    "SELECT " SESSION_COLUMNS
    " FROM edit_sessions WHERE chat_id = $1 AND status = 'open' ORDER BY created_at, {ord}";
constexpr const char* select_session =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE id = $1";
constexpr const char* select_session_revision =
    "SELECT revision FROM edit_sessions WHERE id = $1{lock}";
// An upsert: what does not change after creation (chat, kind, path, created_at) is kept.
constexpr const char* upsert_session =
    "INSERT INTO edit_sessions (" SESSION_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) "
    "ON CONFLICT (id) DO UPDATE SET name = $5, status = $6, base_existed = $7, "
    "base_snapshot = $8, ai_exists = $9, ai_version = $10, revision = $11, edit_count = $12, "
    "updated_at = $14, resolved_at = $15";
#undef SESSION_COLUMNS
#define EDIT_COLUMNS                                                                  \
    "id, session_id, seq, tool, command, parameters, run_id, call_id, diff, result, " \
    "created_at"
constexpr const char* select_session_edits =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE session_id = $1 ORDER BY seq";
constexpr const char* select_edit_of_call =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE call_id = $1 ORDER BY created_at LIMIT 1";
constexpr const char* insert_session_edit =
    "INSERT INTO session_edits (" EDIT_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
#undef EDIT_COLUMNS

#define KEY_COLUMNS                                                                    \
    "id, name, digest, models, rpm, tpm, max_parallel, budget_tokens, budget_period, " \
    "expires_at, created_at, revoked_at"
constexpr const char* upsert_key =
    "INSERT INTO virtual_keys (" KEY_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0) ON CONFLICT (id) DO UPDATE SET "
    "name = excluded.name, models = excluded.models, rpm = excluded.rpm, tpm = excluded.tpm, "
    "max_parallel = excluded.max_parallel, budget_tokens = excluded.budget_tokens, "
    "budget_period = excluded.budget_period, expires_at = excluded.expires_at";
constexpr const char* select_keys =
    "SELECT " KEY_COLUMNS " FROM virtual_keys ORDER BY created_at, id";
#undef KEY_COLUMNS
constexpr const char* revoke_key_sql =
    "UPDATE virtual_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0";
constexpr const char* add_usage_sql =
    "INSERT INTO usage_daily (day, key_id, model, upstream, requests, input_tokens, "
    "output_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT (day, key_id, model, upstream) DO UPDATE SET "
    "requests = usage_daily.requests + excluded.requests, "
    "input_tokens = usage_daily.input_tokens + excluded.input_tokens, "
    "output_tokens = usage_daily.output_tokens + excluded.output_tokens";
// The casts tell PostgreSQL the parameters' types (it cannot infer them from `$1 = ''`).
constexpr const char* select_usage =
    "SELECT CASE WHEN CAST($5 AS BIGINT) <> 0 THEN day ELSE '' END AS d, key_id, model, "
    "SUM(requests), SUM(input_tokens), SUM(output_tokens) FROM usage_daily "
    "WHERE (CAST($1 AS TEXT) = '' OR key_id = CAST($1 AS TEXT)) "
    "AND (CAST($2 AS TEXT) = '' OR model = CAST($2 AS TEXT)) "
    "AND day >= CAST($3 AS TEXT) AND day <= CAST($4 AS TEXT) "
    "GROUP BY d, key_id, model ORDER BY d, key_id, model";

// Rows as records (the column orders are the *_COLUMNS lists above; record_rows.hpp maps them).
template <class Reader>
auto all_rows(const sql_rows& rows, Reader reader) {
    std::vector<decltype(reader(rows[0]))> out;
    out.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(reader(rows[i]));
    return out;
}

template <class Reader>
auto one_row(const sql_rows& rows, Reader reader) -> std::optional<decltype(reader(rows[0]))> {
    if (rows.empty()) return std::nullopt;
    return reader(rows[0]);
}

std::string first_text(const sql_row& r) {
    return r.text(0);
}

// record_rows.hpp's readers take the row by reference.
chat_record read_chat(sql_row r) {
    return chat_from(r);
}
message_record read_message(sql_row r) {
    return message_from(r);
}
run_record read_run(sql_row r) {
    return run_from(r);
}
tool_call_record read_call(sql_row r) {
    return tool_call_from(r);
}
edit_session_record read_session(sql_row r) {
    return edit_session_from(r);
}
session_edit_record read_session_edit(sql_row r) {
    return session_edit_from(r);
}

// Writes everything in `batch` inside the caller's transaction.
void apply(sql_connection& db, const write_batch& batch, const std::string& owner,
           std::int64_t lease_expires) {
    auto now = now_ms();
    for (const auto& c : batch.chats)
        db.query(insert_chat_sql, {c.id, c.created_at ? c.created_at : now, c.system_prompt,
                                   c.model, c.workspace, c.role, c.edits, c.title});
    for (const auto& r : batch.runs) {
        try {
            auto written =
                db.query(upsert_run, {r.id, r.chat_id, r.status, std::int64_t{r.step},
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
        db.query(insert_run_message, {m.run_id, m.seq, m.role, m.content});
    for (const auto& c : batch.tool_calls)
        db.query(upsert_call, {c.id, c.run_id, std::int64_t{c.step}, c.tool, c.parameters,
                               c.status, c.result, c.created_at ? c.created_at : now, c.preview});
    for (const auto& a : batch.approvals)
        db.query(upsert_approval, {a.call_id, a.run_id, a.decision, a.parameters, a.feedback,
                                   a.scope, a.decided_at ? a.decided_at : now});
    for (const auto& m : batch.messages)
        db.query(insert_message,
                 {m.chat_id, m.run_id, m.role, m.content, m.created_at ? m.created_at : now});
    for (const auto& b : batch.backups)
        db.query(upsert_backup, {b.call_id, b.run_id, b.path, std::int64_t{b.existed}, b.content,
                                 b.after_sha256, b.undone_at, b.created_at ? b.created_at : now});
    // The newest sequence number per run, announced (where the database announces) on commit.
    std::map<std::string, std::int64_t> newest;
    for (const auto& e : batch.events) {
        db.query(insert_event, {e.run_id, e.seq, e.type, e.data, e.created_at ? e.created_at : now});
        auto& seq = newest[e.run_id];
        seq = std::max(seq, e.seq);
    }
    if (const char* announce = db.dialect().announce_events)
        for (const auto& [run_id, seq] : newest)
            db.query(announce, {run_id + ' ' + std::to_string(seq) + ' ' + owner});
}

}  // namespace

sql_store::sql_store(std::unique_ptr<sql_connection> writer, std::unique_ptr<sql_connection> reader,
                     std::string owner, config::duration lease)
    : owner_(std::move(owner)), lease_(lease) {
    writer_.start(std::move(writer), "store-write");
    reader_.start(std::move(reader), "store-read");
}

sql_store::~sql_store() {
    writer_.stop();
    reader_.stop();
}

int sql_store::schema_version() {
    // Used at start and in tests: a direct read on the writer's connection before it is busy.
    return writer_.database().schema_version();
}

std::int64_t sql_store::lease_end() const {
    // Renewed every quarter of the timeout (see run_registry), a lease outlives three missed
    // renewals; a dead replica's runs are claimed within the timeout.
    return now_ms() + lease_.count() * 3 / 4;
}

net::awaitable<void> sql_store::insert_chat(chat_record chat) {
    write_batch batch;
    batch.chats.push_back(std::move(chat));
    co_await commit(std::move(batch));
}

net::awaitable<std::optional<chat_record>> sql_store::chat(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return one_row(db.query(select_chat, {id}), read_chat);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<chat_record>> sql_store::chats() {
    auto work = [](sql_connection& db) { return all_rows(db.query(select_chats), read_chat); };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<bool> sql_store::delete_chat(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return db.query(delete_chat_sql, {id}).affected() > 0;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

net::awaitable<message_page> sql_store::messages(std::string chat_id, std::int64_t before_id,
                                                 std::size_t limit) {
    auto work = [chat_id = std::move(chat_id), before_id, limit](sql_connection& db) {
        message_page page;
        auto before = before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max();
        page.messages = all_rows(
            db.query(select_message_page, {chat_id, before, static_cast<std::int64_t>(limit) + 1}),
            read_message);
        page.older = page.messages.size() > limit;
        if (page.older) page.messages.pop_back();
        std::reverse(page.messages.begin(), page.messages.end());
        return page;
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<recent_history> sql_store::recent_messages(std::string chat_id,
                                                          std::size_t max_bytes) {
    auto work = [chat_id = std::move(chat_id), max_bytes](sql_connection& db) {
        history_budget budget(max_bytes);
        auto sizes = db.query(select_message_sizes, {chat_id});
        for (std::size_t i = 0; i < sizes.size(); ++i)
            budget.add(sizes.integer(i, 0), static_cast<std::size_t>(sizes.integer(i, 1)));
        recent_history history;
        history.left_out = budget.left_out();
        history.messages =
            all_rows(db.query(select_messages_from, {chat_id, budget.first_kept()}), read_message);
        return history;
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<bool> sql_store::update_chat(std::string chat_id, chat_changes changes) {
    auto work = [chat_id = std::move(chat_id), changes = std::move(changes)](sql_connection& db) {
        return db.query(update_chat_sql, {chat_id, changes.edits, changes.title}).affected() > 0;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

net::awaitable<std::optional<document_record>> sql_store::document(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](sql_connection& db) {
        return one_row(db.query(select_document, {chat_id}), [](const sql_row& r) {
            return document_record{r.text(0), r.text(1), r.text(2), r.integer(3), r.integer(4)};
        });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<document_write> sql_store::put_document(std::string chat_id, std::string name,
                                                       std::string content,
                                                       std::optional<std::int64_t> base) {
    auto work = [chat_id = std::move(chat_id), name = std::move(name), content = std::move(content),
                 base](sql_connection& db) {
        document_write result;
        db.transaction([&] {
            auto current = db.query(select_document_version, {chat_id});
            std::int64_t version = current.empty() ? 0 : current.integer(0, 0);
            if (base && *base != version) {
                result = {version, true};
                return;
            }
            auto written = db.query(upsert_document, {chat_id, name, content, now_ms()});
            result = {written.integer(0, 0), false};
        });
        return result;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

net::awaitable<std::optional<run_record>> sql_store::run(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return one_row(db.query(select_run, {id}), read_run);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<std::string>> sql_store::run_status(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return one_row(db.query(select_run_status, {id}), first_text);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<run_record>> sql_store::runs_of_chat(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](sql_connection& db) {
        return all_rows(db.query(select_runs_of_chat, {chat_id}), read_run);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<run_record>> sql_store::unfinished_runs() {
    auto work = [](sql_connection& db) {
        return all_rows(db.query(select_unfinished_runs), read_run);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<run_message_record>> sql_store::run_messages(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        return all_rows(db.query(select_run_messages, {run_id}), [](const sql_row& r) {
            return run_message_record{r.text(0), r.integer(1), r.text(2), r.text(3)};
        });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<std::string>> sql_store::run_input(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        return one_row(db.query(select_run_input, {run_id}), first_text);
    };
    auto result = co_await read(std::move(work));
    co_return result;
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
    auto work = [id = std::move(id)](sql_connection& db) {
        return one_row(db.query(select_call, {id}), read_call);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<tool_call_record>> sql_store::tool_calls(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        return all_rows(db.query(select_calls_of_run, {run_id}), read_call);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<approval_record>> sql_store::approval(std::string call_id) {
    auto work = [call_id = std::move(call_id)](sql_connection& db) {
        return one_row(db.query(select_approval, {call_id}), [](const sql_row& r) {
            return approval_record{r.text(0), r.text(1), r.text(2),   r.text(3),
                                   r.text(4), r.text(5), r.integer(6)};
        });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<backup_record>> sql_store::last_backup(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        return one_row(db.query(select_last_backup, {run_id}), [](const sql_row& r) {
            return backup_record{r.text(0), r.text(1), r.text(2),    r.integer(3) != 0,
                                 r.text(4), r.text(5), r.integer(6), r.integer(7)};
        });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<void> sql_store::commit(write_batch batch) {
    if (batch.empty()) co_return;
    auto work = [batch = std::move(batch), owner = owner_, lease = lease_end()](sql_connection& db) {
        db.transaction([&] { apply(db, batch, owner, lease); });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<edit_session_record>> sql_store::edit_sessions(std::string chat_id,
                                                                          bool open_only) {
    auto work = [chat_id = std::move(chat_id), open_only](sql_connection& db) {
        auto sql = open_only ? select_open_sessions_of_chat : select_sessions_of_chat;
        return all_rows(db.query(sql, {chat_id}), read_session);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<edit_session_record>> sql_store::edit_session(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return one_row(db.query(select_session, {id}), read_session);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::vector<session_edit_record>> sql_store::session_edits(std::string session_id) {
    auto work = [session_id = std::move(session_id)](sql_connection& db) {
        return all_rows(db.query(select_session_edits, {session_id}), read_session_edit);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<std::optional<session_edit_record>> sql_store::session_edit_of_call(
    std::string call_id) {
    auto work = [call_id = std::move(call_id)](sql_connection& db) {
        return one_row(db.query(select_edit_of_call, {call_id}), read_session_edit);
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<bool> sql_store::save_edit_session(edit_session_record session,
                                                  std::int64_t expected_revision,
                                                  std::optional<session_edit_record> edit) {
    auto work = [session = std::move(session), expected_revision,
                 edit = std::move(edit)](sql_connection& db) mutable {
        bool saved = false;
        try {
            db.transaction([&] {
                auto now = now_ms();
                auto current = db.query(select_session_revision, {session.id});
                bool exists = !current.empty();
                if (expected_revision == 0 ? exists
                                           : !exists || current.integer(0, 0) != expected_revision)
                    return;
                session.revision = expected_revision + 1;
                session.updated_at = now;
                if (expected_revision == 0) session.created_at = now;
                const auto& s = session;
                db.query(upsert_session, {s.id, s.chat_id, s.kind, s.path, s.name, s.status,
                                          s.base_existed, s.base_snapshot, s.ai_exists,
                                          s.ai_version, s.revision, s.edit_count, s.created_at,
                                          s.updated_at, s.resolved_at});
                if (edit)
                    db.query(insert_session_edit,
                             {edit->id, s.id, edit->order, edit->tool, edit->command,
                              edit->parameters, edit->run_id, edit->call_id, edit->diff,
                              edit->result, edit->created_at ? edit->created_at : now});
                saved = true;
            });
        } catch (const unique_violation&) {
            // Another open session for the same target (made meanwhile, by any replica): the
            // upsert's own conflict is the id, and the one other unique index is open sessions.
            saved = false;
        }
        return saved;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

net::awaitable<void> sql_store::save_key(key_record key) {
    auto work = [key = std::move(key)](sql_connection& db) {
        const auto& k = key;
        db.query(upsert_key,
                 {k.id, k.name, k.digest, k.models, k.rpm, k.tpm, k.max_parallel, k.budget_tokens,
                  k.budget_period, k.expires_at, k.created_at ? k.created_at : now_ms()});
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<key_record>> sql_store::keys() {
    auto work = [](sql_connection& db) {
        return all_rows(db.query(select_keys), [](sql_row r) { return key_from(r); });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

net::awaitable<bool> sql_store::revoke_key(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        return db.query(revoke_key_sql, {id, now_ms()}).affected() > 0;
    };
    auto result = co_await write(std::move(work));
    co_return result;
}

net::awaitable<void> sql_store::add_usage(std::vector<usage_row> rows) {
    auto work = [rows = std::move(rows)](sql_connection& db) {
        db.transaction([&] {
            for (const auto& r : rows)
                db.query(add_usage_sql, {r.day, r.key_id, r.model, r.upstream, r.requests,
                                         r.input_tokens, r.output_tokens});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<usage_row>> sql_store::usage(usage_query query) {
    auto work = [query = std::move(query)](sql_connection& db) {
        return all_rows(db.query(select_usage, {query.key_id, query.model, query.from_day,
                                                query.to_day, query.by_day}),
                        [](sql_row r) { return usage_from(r); });
    };
    auto result = co_await read(std::move(work));
    co_return result;
}

}  // namespace gateway::store
