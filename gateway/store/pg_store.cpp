#include "gateway/store/pg_store.hpp"

#include "gateway/store/pg_schema.hpp"
#include "gateway/store/record_rows.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace gateway::store {

namespace {

#define CHAT_COLUMNS "id, created_at, system_prompt, model, workspace, role, edits, title"
constexpr const char* select_chat = "SELECT " CHAT_COLUMNS " FROM chats WHERE id = $1";
constexpr const char* select_chats = "SELECT " CHAT_COLUMNS " FROM chats ORDER BY created_at, id";
constexpr const char* insert_chat_sql =
    "INSERT INTO chats (" CHAT_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
#undef CHAT_COLUMNS
constexpr const char* update_chat_sql =
    "UPDATE chats SET edits = COALESCE($2, edits), title = COALESCE($3, title) WHERE id = $1";
constexpr const char* delete_chat_sql = "DELETE FROM chats WHERE id = $1";

constexpr const char* select_message_page =
    "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
    "WHERE chat_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3";
constexpr const char* select_message_sizes =
    "SELECT id, octet_length(content) FROM messages WHERE chat_id = $1 ORDER BY id DESC";
constexpr const char* select_messages_from =
    "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
    "WHERE chat_id = $1 AND id >= $2 ORDER BY id";
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
// Fenced by the lease: a row another replica has claimed is not written (nothing is returned,
// and the commit fails with lease_lost).
constexpr const char* upsert_run =
    "INSERT INTO runs (" RUN_COLUMNS
    ", owner, lease_expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
    "ON CONFLICT (id) DO UPDATE SET status = excluded.status, step = excluded.step, "
    "max_steps = excluded.max_steps, output = excluded.output, error = excluded.error, "
    "state = excluded.state, updated_at = excluded.updated_at, "
    "lease_expires = excluded.lease_expires WHERE runs.owner = excluded.owner RETURNING 1";
// A claim takes each expired lease once: a second claimer waits for the first one's row lock,
// then finds the lease renewed and skips the row.
constexpr const char* claim_runs_sql =
    "UPDATE runs SET owner = $1, lease_expires = $2 WHERE status IN ('running', "
    "'awaiting_approval') AND lease_expires < $3 RETURNING " RUN_COLUMNS;
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
constexpr const char* notify_events = "SELECT pg_notify('contextgate_events', $1)";

#define CALL_COLUMNS "id, run_id, step, tool, parameters, status, result, created_at, preview"
constexpr const char* select_call = "SELECT " CALL_COLUMNS " FROM tool_calls WHERE id = $1";
constexpr const char* select_calls_of_run =
    "SELECT " CALL_COLUMNS " FROM tool_calls WHERE run_id = $1 ORDER BY created_at, ord";
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
    "SELECT version FROM documents WHERE chat_id = $1 FOR UPDATE";
constexpr const char* upsert_document =
    "INSERT INTO documents (chat_id, name, content, version, updated_at) "
    "VALUES ($1, $2, $3, 1, $4) ON CONFLICT (chat_id) DO UPDATE SET name = $2, content = $3, "
    "version = documents.version + 1, updated_at = $4 RETURNING version";

constexpr const char* select_last_backup =
    "SELECT call_id, run_id, path, existed, content, after_sha256, undone_at, created_at "
    "FROM write_backups WHERE run_id = $1 AND undone_at = 0 ORDER BY created_at DESC, ord DESC "
    "LIMIT 1";
constexpr const char* upsert_backup =
    "INSERT INTO write_backups (call_id, run_id, path, existed, content, after_sha256, "
    "undone_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (call_id) "
    "DO UPDATE SET undone_at = excluded.undone_at";

#define SESSION_COLUMNS                                                                           \
    "id, chat_id, kind, path, name, status, base_existed, base_snapshot, ai_exists, ai_version, " \
    "revision, edit_count, created_at, updated_at, resolved_at"
constexpr const char* select_sessions_of_chat =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE chat_id = $1 ORDER BY created_at, ord";
constexpr const char* select_open_sessions_of_chat =
    "SELECT " SESSION_COLUMNS
    " FROM edit_sessions WHERE chat_id = $1 AND status = 'open' ORDER BY created_at, ord";
constexpr const char* select_session =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE id = $1";
constexpr const char* select_session_revision =
    "SELECT revision FROM edit_sessions WHERE id = $1 FOR UPDATE";
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

// Readers of one row of a result (the column mapping is record_rows.hpp's, shared with SQLite).
chat_record read_chat(const pg_rows& r, int i) {
    pg_row row(r, i);
    return chat_from(row);
}

message_record read_message(const pg_rows& r, int i) {
    pg_row row(r, i);
    return message_from(row);
}

tool_call_record read_call(const pg_rows& r, int i) {
    pg_row row(r, i);
    return tool_call_from(row);
}

edit_session_record read_session(const pg_rows& r, int i) {
    pg_row row(r, i);
    return edit_session_from(row);
}

session_edit_record read_session_edit(const pg_rows& r, int i) {
    pg_row row(r, i);
    return session_edit_from(row);
}

run_record read_run(const pg_rows& r, int i) {
    pg_row row(r, i);
    return run_from(row);
}

template <class Reader>
auto all_rows(const pg_rows& rows, Reader reader) {
    std::vector<decltype(reader(rows, 0))> out;
    for (int i = 0; i < rows.size(); ++i) out.push_back(reader(rows, i));
    return out;
}

template <class Reader>
auto one_row(const pg_rows& rows, Reader reader) -> std::optional<decltype(reader(rows, 0))> {
    if (rows.empty()) return std::nullopt;
    return reader(rows, 0);
}

// The column as a string (a single-column result).
std::string first_text(const pg_rows& r, int i) {
    return r.text(i, 0);
}

}  // namespace

int pg_store::schema_version() {
    auto r = writer_.database().query("SELECT version FROM contextgate_schema");
    return r.empty() ? 0 : static_cast<int>(r.integer(0, 0));
}

std::int64_t pg_store::lease_end() const {
    // Renewed every quarter of the timeout (see run_registry), a lease outlives three missed
    // renewals; a dead replica's runs are claimed within the timeout.
    return now_ms() + lease_.count() * 3 / 4;
}

net::awaitable<void> pg_store::insert_chat(chat_record chat) {
    write_batch batch;
    batch.chats.push_back(std::move(chat));
    co_await commit(std::move(batch));
}

net::awaitable<std::optional<chat_record>> pg_store::chat(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return one_row(db.query(select_chat, {id}), read_chat);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<chat_record>> pg_store::chats() {
    auto work = [](pg_database& db) { return all_rows(db.query(select_chats), read_chat); };
    auto all = co_await read(std::move(work));
    co_return all;
}

net::awaitable<bool> pg_store::delete_chat(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return db.query(delete_chat_sql, {id}).affected() > 0;
    };
    auto deleted = co_await write(std::move(work));
    co_return deleted;
}

net::awaitable<message_page> pg_store::messages(std::string chat_id, std::int64_t before_id,
                                                std::size_t limit) {
    auto work = [chat_id = std::move(chat_id), before_id, limit](pg_database& db) {
        message_page page;
        auto before = before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max();
        auto rows =
            db.query(select_message_page, {chat_id, before, static_cast<std::int64_t>(limit) + 1});
        page.messages = all_rows(rows, read_message);
        page.older = page.messages.size() > limit;
        if (page.older) page.messages.pop_back();
        std::reverse(page.messages.begin(), page.messages.end());
        return page;
    };
    auto page = co_await read(std::move(work));
    co_return page;
}

net::awaitable<recent_history> pg_store::recent_messages(std::string chat_id,
                                                         std::size_t max_bytes) {
    auto work = [chat_id = std::move(chat_id), max_bytes](pg_database& db) {
        history_budget budget(max_bytes);
        auto sizes = db.query(select_message_sizes, {chat_id});
        for (int i = 0; i < sizes.size(); ++i)
            budget.add(sizes.integer(i, 0), static_cast<std::size_t>(sizes.integer(i, 1)));
        recent_history history;
        history.left_out = budget.left_out();
        history.messages =
            all_rows(db.query(select_messages_from, {chat_id, budget.first_kept()}), read_message);
        return history;
    };
    auto history = co_await read(std::move(work));
    co_return history;
}

net::awaitable<std::optional<run_record>> pg_store::run(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return one_row(db.query(select_run, {id}), read_run);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<std::string>> pg_store::run_status(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return one_row(db.query(select_run_status, {id}), first_text);
    };
    auto status = co_await read(std::move(work));
    co_return status;
}

net::awaitable<std::vector<run_record>> pg_store::runs_of_chat(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](pg_database& db) {
        return all_rows(db.query(select_runs_of_chat, {chat_id}), read_run);
    };
    auto runs = co_await read(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<run_record>> pg_store::unfinished_runs() {
    auto work = [](pg_database& db) {
        return all_rows(db.query(select_unfinished_runs), read_run);
    };
    auto runs = co_await read(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<run_record>> pg_store::claim_runs() {
    auto work = [replica = replica_, lease = lease_end()](pg_database& db) {
        auto runs = all_rows(db.query(claim_runs_sql, {replica, lease, now_ms()}), read_run);
        std::sort(runs.begin(), runs.end(), [](const run_record& a, const run_record& b) {
            return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
        });
        return runs;
    };
    auto runs = co_await write(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<run_message_record>> pg_store::run_messages(std::string run_id) {
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        return all_rows(db.query(select_run_messages, {run_id}), [](const pg_rows& r, int i) {
            return run_message_record{r.text(i, 0), r.integer(i, 1), r.text(i, 2), r.text(i, 3)};
        });
    };
    auto messages = co_await read(std::move(work));
    co_return messages;
}

net::awaitable<std::optional<std::string>> pg_store::run_input(std::string run_id) {
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        return one_row(db.query(select_run_input, {run_id}), first_text);
    };
    auto input = co_await read(std::move(work));
    co_return input;
}

net::awaitable<std::vector<event_record>> pg_store::events_after(std::string run_id,
                                                                 std::int64_t after_seq,
                                                                 std::size_t max_events,
                                                                 std::size_t max_bytes) {
    auto work = [run_id = std::move(run_id), after_seq, max_events, max_bytes](pg_database& db) {
        auto rows = db.query(select_events_after,
                             {run_id, after_seq, static_cast<std::int64_t>(max_events)});
        std::vector<event_record> out;
        std::size_t bytes = 0;
        for (int i = 0; i < rows.size() && (out.empty() || bytes < max_bytes); ++i) {
            out.push_back({rows.text(i, 0), rows.integer(i, 1), rows.text(i, 2), rows.text(i, 3),
                           rows.integer(i, 4)});
            bytes += out.back().data.size();
        }
        return out;
    };
    auto events = co_await read(std::move(work));
    co_return events;
}

net::awaitable<std::int64_t> pg_store::last_event(std::string run_id) {
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        return db.query(select_last_event, {run_id}).integer(0, 0);
    };
    auto seq = co_await read(std::move(work));
    co_return seq;
}

net::awaitable<std::optional<tool_call_record>> pg_store::tool_call(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return one_row(db.query(select_call, {id}), read_call);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<tool_call_record>> pg_store::tool_calls(std::string run_id) {
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        return all_rows(db.query(select_calls_of_run, {run_id}), read_call);
    };
    auto calls = co_await read(std::move(work));
    co_return calls;
}

net::awaitable<std::optional<approval_record>> pg_store::approval(std::string call_id) {
    auto work = [call_id = std::move(call_id)](pg_database& db) {
        return one_row(db.query(select_approval, {call_id}), [](const pg_rows& r, int i) {
            return approval_record{r.text(i, 0), r.text(i, 1), r.text(i, 2),   r.text(i, 3),
                                   r.text(i, 4), r.text(i, 5), r.integer(i, 6)};
        });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<document_record>> pg_store::document(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](pg_database& db) {
        return one_row(db.query(select_document, {chat_id}), [](const pg_rows& r, int i) {
            return document_record{r.text(i, 0), r.text(i, 1), r.text(i, 2), r.integer(i, 3),
                                   r.integer(i, 4)};
        });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<document_write> pg_store::put_document(std::string chat_id, std::string name,
                                                      std::string content,
                                                      std::optional<std::int64_t> base) {
    auto work = [chat_id = std::move(chat_id), name = std::move(name), content = std::move(content),
                 base](pg_database& db) {
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
    auto written = co_await write(std::move(work));
    co_return written;
}

net::awaitable<bool> pg_store::update_chat(std::string chat_id, chat_changes changes) {
    auto work = [chat_id = std::move(chat_id), changes = std::move(changes)](pg_database& db) {
        auto edits = changes.edits ? pg_param(*changes.edits) : pg_param(std::nullopt);
        auto title = changes.title ? pg_param(*changes.title) : pg_param(std::nullopt);
        return db.query(update_chat_sql, {chat_id, edits, title}).affected() > 0;
    };
    auto changed = co_await write(std::move(work));
    co_return changed;
}

net::awaitable<std::vector<edit_session_record>> pg_store::edit_sessions(std::string chat_id,
                                                                         bool open_only) {
    auto work = [chat_id = std::move(chat_id), open_only](pg_database& db) {
        auto sql = open_only ? select_open_sessions_of_chat : select_sessions_of_chat;
        return all_rows(db.query(sql, {chat_id}), read_session);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<edit_session_record>> pg_store::edit_session(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return one_row(db.query(select_session, {id}), read_session);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<session_edit_record>> pg_store::session_edits(std::string session_id) {
    auto work = [session_id = std::move(session_id)](pg_database& db) {
        return all_rows(db.query(select_session_edits, {session_id}), read_session_edit);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<session_edit_record>> pg_store::session_edit_of_call(
    std::string call_id) {
    auto work = [call_id = std::move(call_id)](pg_database& db) {
        return one_row(db.query(select_edit_of_call, {call_id}), read_session_edit);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<bool> pg_store::save_edit_session(edit_session_record session,
                                                 std::int64_t expected_revision,
                                                 std::optional<session_edit_record> edit) {
    auto work = [session = std::move(session), expected_revision,
                 edit = std::move(edit)](pg_database& db) mutable {
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
                                          std::int64_t{s.base_existed}, s.base_snapshot,
                                          std::int64_t{s.ai_exists}, s.ai_version, s.revision,
                                          s.edit_count, s.created_at, s.updated_at, s.resolved_at});
                if (edit)
                    db.query(insert_session_edit,
                             {edit->id, s.id, edit->order, edit->tool, edit->command,
                              edit->parameters, edit->run_id, edit->call_id, edit->diff,
                              edit->result, edit->created_at ? edit->created_at : now});
                saved = true;
            });
        } catch (const unique_violation& e) {
            // Another open session for the same target (made meanwhile, by any replica).
            if (e.constraint != "edit_sessions_open") throw;
            saved = false;
        }
        return saved;
    };
    auto saved = co_await write(std::move(work));
    co_return saved;
}

net::awaitable<std::optional<backup_record>> pg_store::last_backup(std::string run_id) {
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        return one_row(db.query(select_last_backup, {run_id}), [](const pg_rows& r, int i) {
            return backup_record{r.text(i, 0), r.text(i, 1), r.text(i, 2),    r.integer(i, 3) != 0,
                                 r.text(i, 4), r.text(i, 5), r.integer(i, 6), r.integer(i, 7)};
        });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<void> pg_store::commit(write_batch batch) {
    if (batch.empty()) co_return;
    auto work = [batch = std::move(batch), replica = replica_,
                 lease = lease_end()](pg_database& db) {
        auto now = now_ms();
        db.transaction([&] {
            for (const auto& c : batch.chats)
                db.query(insert_chat_sql, {c.id, c.created_at ? c.created_at : now, c.system_prompt,
                                           c.model, c.workspace, c.role, c.edits, c.title});
            for (const auto& r : batch.runs) {
                try {
                    auto written = db.query(
                        upsert_run, {r.id, r.chat_id, r.status, std::int64_t{r.step},
                                     std::int64_t{r.max_steps}, r.output, r.error, r.state,
                                     r.created_at ? r.created_at : now, now, replica, lease});
                    if (written.empty())
                        throw lease_lost("run " + r.id + " is driven by another replica now");
                } catch (const unique_violation& e) {
                    if (e.constraint != "one_live_run_per_chat") throw;
                    throw live_run_exists("chat " + r.chat_id + " already has an unfinished run");
                }
            }
            for (const auto& m : batch.run_messages)
                db.query(insert_run_message, {m.run_id, m.seq, m.role, m.content});
            for (const auto& c : batch.tool_calls)
                db.query(upsert_call,
                         {c.id, c.run_id, std::int64_t{c.step}, c.tool, c.parameters, c.status,
                          c.result, c.created_at ? c.created_at : now, c.preview});
            for (const auto& a : batch.approvals)
                db.query(upsert_approval, {a.call_id, a.run_id, a.decision, a.parameters,
                                           a.feedback, a.scope, a.decided_at ? a.decided_at : now});
            for (const auto& m : batch.messages)
                db.query(insert_message, {m.chat_id, m.run_id, m.role, m.content,
                                          m.created_at ? m.created_at : now});
            for (const auto& b : batch.backups)
                db.query(upsert_backup,
                         {b.call_id, b.run_id, b.path, std::int64_t{b.existed}, b.content,
                          b.after_sha256, b.undone_at, b.created_at ? b.created_at : now});
            // The newest sequence number per run, announced when the transaction commits.
            std::map<std::string, std::int64_t> newest;
            for (const auto& e : batch.events) {
                db.query(insert_event,
                         {e.run_id, e.seq, e.type, e.data, e.created_at ? e.created_at : now});
                auto& seq = newest[e.run_id];
                seq = std::max(seq, e.seq);
            }
            for (const auto& [run_id, seq] : newest)
                db.query(notify_events, {run_id + ' ' + std::to_string(seq) + ' ' + replica});
        });
    };
    co_await write(std::move(work));
}

}  // namespace gateway::store
