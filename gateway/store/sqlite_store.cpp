#include "gateway/store/sqlite_store.hpp"

#include "gateway/store/record_rows.hpp"

#include <algorithm>
#include <limits>

namespace gateway::store {

namespace {

// Every query is a literal: its address keys the connection's statement cache.
#define CHAT_COLUMNS "id, created_at, system_prompt, model, workspace, role, edits, title"
constexpr const char* select_chat = "SELECT " CHAT_COLUMNS " FROM chats WHERE id = ?1";
constexpr const char* select_chats = "SELECT " CHAT_COLUMNS " FROM chats ORDER BY created_at, id";
constexpr const char* insert_chat_sql =
    "INSERT INTO chats (" CHAT_COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr const char* update_chat_edits = "UPDATE chats SET edits = ?2 WHERE id = ?1";
constexpr const char* update_chat_title = "UPDATE chats SET title = ?2 WHERE id = ?1";
constexpr const char* select_chat_exists = "SELECT 1 FROM chats WHERE id = ?1";
#undef CHAT_COLUMNS
constexpr const char* delete_chat_sql = "DELETE FROM chats WHERE id = ?1";

constexpr const char* select_message_page =
    "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
    "WHERE chat_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3";
constexpr const char* select_message_sizes =
    "SELECT id, length(CAST(content AS BLOB)) FROM messages WHERE chat_id = ?1 ORDER BY id DESC";
constexpr const char* select_messages_from =
    "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
    "WHERE chat_id = ?1 AND id >= ?2 ORDER BY id";
constexpr const char* insert_message =
    "INSERT INTO messages (chat_id, run_id, role, content, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr const char* select_run_input =
    "SELECT content FROM messages WHERE run_id = ?1 AND role = 'user' ORDER BY id LIMIT 1";

constexpr const char* select_run =
    "SELECT id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at "
    "FROM runs WHERE id = ?1";
constexpr const char* select_run_status = "SELECT status FROM runs WHERE id = ?1";
constexpr const char* select_runs_of_chat =
    "SELECT id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at "
    "FROM runs WHERE chat_id = ?1 ORDER BY created_at, id";
constexpr const char* select_unfinished_runs =
    "SELECT id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at "
    "FROM runs WHERE status IN ('running', 'awaiting_approval') ORDER BY created_at, id";
// An upsert, not INSERT OR REPLACE: a replace deletes the row first, and the cascade would take
// the run's events and tool calls with it.
constexpr const char* upsert_run =
    "INSERT INTO runs (id, chat_id, status, step, max_steps, output, error, state, created_at, "
    "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT(id) DO UPDATE SET "
    "status = excluded.status, step = excluded.step, max_steps = excluded.max_steps, "
    "output = excluded.output, error = excluded.error, state = excluded.state, "
    "updated_at = excluded.updated_at";

constexpr const char* select_run_messages =
    "SELECT run_id, seq, role, content FROM run_messages WHERE run_id = ?1 ORDER BY seq";
constexpr const char* insert_run_message =
    "INSERT INTO run_messages (run_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)";

constexpr const char* select_events_after =
    "SELECT run_id, seq, type, data, created_at FROM events WHERE run_id = ?1 AND seq > ?2 "
    "ORDER BY seq";
constexpr const char* select_last_event =
    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?1";
constexpr const char* insert_event =
    "INSERT INTO events (run_id, seq, type, data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";

constexpr const char* select_call =
    "SELECT id, run_id, step, tool, parameters, status, result, created_at, preview "
    "FROM tool_calls WHERE id = ?1";
constexpr const char* select_calls_of_run =
    "SELECT id, run_id, step, tool, parameters, status, result, created_at, preview "
    "FROM tool_calls WHERE run_id = ?1 ORDER BY created_at, rowid";
// An upsert: a replace would cascade to the call's approval.
constexpr const char* upsert_call =
    "INSERT INTO tool_calls (id, run_id, step, tool, parameters, status, result, created_at, "
    "preview) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(id) DO UPDATE SET "
    "parameters = excluded.parameters, status = excluded.status, result = excluded.result, "
    "preview = excluded.preview";

constexpr const char* select_approval =
    "SELECT call_id, run_id, decision, parameters, feedback, scope, decided_at FROM approvals "
    "WHERE call_id = ?1";
constexpr const char* upsert_approval =
    "INSERT INTO approvals (call_id, run_id, decision, parameters, feedback, scope, decided_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(call_id) DO UPDATE SET "
    "decision = excluded.decision, parameters = excluded.parameters, "
    "feedback = excluded.feedback, scope = excluded.scope, decided_at = excluded.decided_at";

constexpr const char* select_document =
    "SELECT chat_id, name, content, version, updated_at FROM documents WHERE chat_id = ?1";
constexpr const char* select_document_version = "SELECT version FROM documents WHERE chat_id = ?1";
constexpr const char* upsert_document =
    "INSERT INTO documents (chat_id, name, content, version, updated_at) "
    "VALUES (?1, ?2, ?3, 1, ?4) ON CONFLICT(chat_id) DO UPDATE SET name = ?2, content = ?3, "
    "version = version + 1, updated_at = ?4";

constexpr const char* select_last_backup =
    "SELECT call_id, run_id, path, existed, content, after_sha256, undone_at, created_at "
    "FROM write_backups WHERE run_id = ?1 AND undone_at = 0 ORDER BY created_at DESC, rowid DESC "
    "LIMIT 1";
constexpr const char* upsert_backup =
    "INSERT INTO write_backups (call_id, run_id, path, existed, content, after_sha256, "
    "undone_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(call_id) "
    "DO UPDATE SET undone_at = excluded.undone_at";

#define SESSION_COLUMNS                                                                           \
    "id, chat_id, kind, path, name, status, base_existed, base_snapshot, ai_exists, ai_version, " \
    "revision, edit_count, created_at, updated_at, resolved_at"
constexpr const char* select_sessions_of_chat =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE chat_id = ?1 ORDER BY created_at, rowid";
constexpr const char* select_open_sessions_of_chat =
    "SELECT " SESSION_COLUMNS
    " FROM edit_sessions WHERE chat_id = ?1 AND status = 'open' ORDER BY created_at, rowid";
constexpr const char* select_session =
    "SELECT " SESSION_COLUMNS " FROM edit_sessions WHERE id = ?1";
constexpr const char* select_session_revision = "SELECT revision FROM edit_sessions WHERE id = ?1";
// An upsert: what does not change after creation (chat, kind, path, created_at) is kept.
constexpr const char* upsert_session =
    "INSERT INTO edit_sessions (" SESSION_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
    "ON CONFLICT(id) DO UPDATE SET name = ?5, status = ?6, base_existed = ?7, "
    "base_snapshot = ?8, ai_exists = ?9, ai_version = ?10, revision = ?11, edit_count = ?12, "
    "updated_at = ?14, resolved_at = ?15";
constexpr const char* select_open_session_for =
    "SELECT 1 FROM edit_sessions WHERE chat_id = ?1 AND kind = ?2 AND path = ?3 AND "
    "status = 'open'";
#undef SESSION_COLUMNS
#define EDIT_COLUMNS                                                                  \
    "id, session_id, seq, tool, command, parameters, run_id, call_id, diff, result, " \
    "created_at"
constexpr const char* select_session_edits =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE session_id = ?1 ORDER BY seq";
constexpr const char* select_edit_of_call =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE call_id = ?1 ORDER BY created_at LIMIT 1";
constexpr const char* insert_session_edit =
    "INSERT INTO session_edits (" EDIT_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
#undef EDIT_COLUMNS

// Readers of one row (the column mapping is record_rows.hpp's, shared with PostgreSQL).
edit_session_record read_session(statement& s) {
    return edit_session_from(s);
}

session_edit_record read_session_edit(statement& s) {
    return session_edit_from(s);
}

chat_record read_chat(statement& s) {
    return chat_from(s);
}

message_record read_message(statement& s) {
    return message_from(s);
}

run_record read_run(statement& s) {
    return run_from(s);
}

tool_call_record read_call(statement& s) {
    return tool_call_from(s);
}

template <class T, class Reader>
std::vector<T> all_rows(statement s, Reader reader) {
    std::vector<T> out;
    while (s.step()) out.push_back(reader(s));
    return out;
}

template <class T, class Reader>
std::optional<T> one_row(statement s, Reader reader) {
    if (!s.step()) return std::nullopt;
    return reader(s);
}

void apply(sqlite_database& db, const write_batch& batch) {
    auto now = now_ms();
    for (const auto& c : batch.chats)
        db.query(insert_chat_sql)
            .bind(1, c.id)
            .bind(2, c.created_at ? c.created_at : now)
            .bind(3, c.system_prompt)
            .bind(4, c.model)
            .bind(5, c.workspace)
            .bind(6, c.role)
            .bind(7, c.edits)
            .bind(8, c.title)
            .run();
    for (const auto& r : batch.runs) {
        try {
            db.query(upsert_run)
                .bind(1, r.id)
                .bind(2, r.chat_id)
                .bind(3, r.status)
                .bind(4, static_cast<std::int64_t>(r.step))
                .bind(5, static_cast<std::int64_t>(r.max_steps))
                .bind(6, r.output)
                .bind(7, r.error)
                .bind(8, r.state)
                .bind(9, r.created_at ? r.created_at : now)
                .bind(10, now)
                .run();
        } catch (const unique_violation& e) {
            if (e.constraint != "runs.chat_id") throw;
            throw live_run_exists("chat " + r.chat_id + " already has an unfinished run");
        }
    }
    for (const auto& m : batch.run_messages)
        db.query(insert_run_message)
            .bind(1, m.run_id)
            .bind(2, m.seq)
            .bind(3, m.role)
            .bind(4, m.content)
            .run();
    for (const auto& c : batch.tool_calls)
        db.query(upsert_call)
            .bind(1, c.id)
            .bind(2, c.run_id)
            .bind(3, static_cast<std::int64_t>(c.step))
            .bind(4, c.tool)
            .bind(5, c.parameters)
            .bind(6, c.status)
            .bind(7, c.result)
            .bind(8, c.created_at ? c.created_at : now)
            .bind(9, c.preview)
            .run();
    for (const auto& a : batch.approvals)
        db.query(upsert_approval)
            .bind(1, a.call_id)
            .bind(2, a.run_id)
            .bind(3, a.decision)
            .bind(4, a.parameters)
            .bind(5, a.feedback)
            .bind(6, a.scope)
            .bind(7, a.decided_at ? a.decided_at : now)
            .run();
    for (const auto& m : batch.messages)
        db.query(insert_message)
            .bind(1, m.chat_id)
            .bind(2, m.run_id)
            .bind(3, m.role)
            .bind(4, m.content)
            .bind(5, m.created_at ? m.created_at : now)
            .run();
    for (const auto& b : batch.backups)
        db.query(upsert_backup)
            .bind(1, b.call_id)
            .bind(2, b.run_id)
            .bind(3, b.path)
            .bind(4, std::int64_t(b.existed))
            .bind(5, b.content)
            .bind(6, b.after_sha256)
            .bind(7, b.undone_at)
            .bind(8, b.created_at ? b.created_at : now)
            .run();
    for (const auto& e : batch.events)
        db.query(insert_event)
            .bind(1, e.run_id)
            .bind(2, e.seq)
            .bind(3, e.type)
            .bind(4, e.data)
            .bind(5, e.created_at ? e.created_at : now)
            .run();
}

}  // namespace

config::parsed<std::unique_ptr<sqlite_store>> sqlite_store::open(const std::string& path) {
    using result = config::parsed<std::unique_ptr<sqlite_store>>;
    auto writer = sqlite_database::open(path, sqlite_database::access::read_write);
    if (!writer) return result::fail(writer.error);
    // Opened after the migrations: the reader sees the current schema.
    auto reader = sqlite_database::open(path, sqlite_database::access::read_only);
    if (!reader) return result::fail(reader.error);
    std::unique_ptr<sqlite_store> s(new sqlite_store());
    s->writer_.start(std::move(*writer.value), "store-write");
    s->reader_.start(std::move(*reader.value), "store-read");
    return {std::move(s), {}};
}

sqlite_store::~sqlite_store() {
    writer_.stop();
    reader_.stop();
}

int sqlite_store::schema_version() {
    // Used at start and in tests: a direct read on the writer's connection before it is busy.
    return writer_.database().schema_version();
}

net::awaitable<void> sqlite_store::insert_chat(chat_record chat) {
    auto work = [chat = std::move(chat)](sqlite_database& db) {
        write_batch batch;
        batch.chats.push_back(chat);
        db.transaction([&] { apply(db, batch); });
    };
    co_await write(std::move(work));
}

net::awaitable<std::optional<chat_record>> sqlite_store::chat(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        return one_row<chat_record>(std::move(db.query(select_chat).bind(1, id)), read_chat);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<chat_record>> sqlite_store::chats() {
    auto work = [](sqlite_database& db) {
        return all_rows<chat_record>(db.query(select_chats), read_chat);
    };
    auto all = co_await read(std::move(work));
    co_return all;
}

net::awaitable<bool> sqlite_store::delete_chat(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        db.query(delete_chat_sql).bind(1, id).run();
        return db.changes() > 0;
    };
    auto deleted = co_await write(std::move(work));
    co_return deleted;
}

net::awaitable<message_page> sqlite_store::messages(std::string chat_id, std::int64_t before_id,
                                                    std::size_t limit) {
    auto work = [chat_id = std::move(chat_id), before_id, limit](sqlite_database& db) {
        message_page page;
        auto s = db.query(select_message_page);
        s.bind(1, chat_id)
            .bind(2, before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max())
            .bind(3, static_cast<std::int64_t>(limit) + 1);
        while (s.step()) page.messages.push_back(read_message(s));
        page.older = page.messages.size() > limit;
        if (page.older) page.messages.pop_back();
        std::reverse(page.messages.begin(), page.messages.end());
        return page;
    };
    auto page = co_await read(std::move(work));
    co_return page;
}

net::awaitable<recent_history> sqlite_store::recent_messages(std::string chat_id,
                                                             std::size_t max_bytes) {
    auto work = [chat_id = std::move(chat_id), max_bytes](sqlite_database& db) {
        history_budget budget(max_bytes);
        auto sizes = db.query(select_message_sizes);
        sizes.bind(1, chat_id);
        while (sizes.step())
            budget.add(sizes.integer(0), static_cast<std::size_t>(sizes.integer(1)));
        recent_history history;
        history.left_out = budget.left_out();
        auto s = db.query(select_messages_from);
        s.bind(1, chat_id).bind(2, budget.first_kept());
        while (s.step()) history.messages.push_back(read_message(s));
        return history;
    };
    auto history = co_await read(std::move(work));
    co_return history;
}

net::awaitable<std::optional<run_record>> sqlite_store::run(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        return one_row<run_record>(std::move(db.query(select_run).bind(1, id)), read_run);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<std::string>> sqlite_store::run_status(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        return one_row<std::string>(std::move(db.query(select_run_status).bind(1, id)),
                                    [](statement& s) { return s.text(0); });
    };
    auto status = co_await read(std::move(work));
    co_return status;
}

net::awaitable<std::vector<run_record>> sqlite_store::runs_of_chat(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](sqlite_database& db) {
        return all_rows<run_record>(std::move(db.query(select_runs_of_chat).bind(1, chat_id)),
                                    read_run);
    };
    auto runs = co_await read(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<run_record>> sqlite_store::unfinished_runs() {
    auto work = [](sqlite_database& db) {
        return all_rows<run_record>(db.query(select_unfinished_runs), read_run);
    };
    auto runs = co_await read(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<run_message_record>> sqlite_store::run_messages(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sqlite_database& db) {
        return all_rows<run_message_record>(
            std::move(db.query(select_run_messages).bind(1, run_id)), [](statement& s) {
                return run_message_record{s.text(0), s.integer(1), s.text(2), s.text(3)};
            });
    };
    auto messages = co_await read(std::move(work));
    co_return messages;
}

net::awaitable<std::optional<std::string>> sqlite_store::run_input(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sqlite_database& db) {
        return one_row<std::string>(std::move(db.query(select_run_input).bind(1, run_id)),
                                    [](statement& s) { return s.text(0); });
    };
    auto input = co_await read(std::move(work));
    co_return input;
}

net::awaitable<std::vector<event_record>> sqlite_store::events_after(std::string run_id,
                                                                     std::int64_t after_seq,
                                                                     std::size_t max_events,
                                                                     std::size_t max_bytes) {
    auto work = [run_id = std::move(run_id), after_seq, max_events,
                 max_bytes](sqlite_database& db) {
        auto s = db.query(select_events_after);
        s.bind(1, run_id).bind(2, after_seq);
        std::vector<event_record> out;
        std::size_t bytes = 0;
        while (out.size() < max_events && (out.empty() || bytes < max_bytes) && s.step()) {
            out.push_back({s.text(0), s.integer(1), s.text(2), s.text(3), s.integer(4)});
            bytes += out.back().data.size();
        }
        return out;
    };
    auto events = co_await read(std::move(work));
    co_return events;
}

net::awaitable<std::int64_t> sqlite_store::last_event(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sqlite_database& db) {
        auto s = db.query(select_last_event);
        s.bind(1, run_id);
        return s.step() ? s.integer(0) : std::int64_t{0};
    };
    auto seq = co_await read(std::move(work));
    co_return seq;
}

net::awaitable<std::optional<tool_call_record>> sqlite_store::tool_call(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        return one_row<tool_call_record>(std::move(db.query(select_call).bind(1, id)), read_call);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<tool_call_record>> sqlite_store::tool_calls(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sqlite_database& db) {
        return all_rows<tool_call_record>(std::move(db.query(select_calls_of_run).bind(1, run_id)),
                                          read_call);
    };
    auto calls = co_await read(std::move(work));
    co_return calls;
}

net::awaitable<std::optional<approval_record>> sqlite_store::approval(std::string call_id) {
    auto work = [call_id = std::move(call_id)](sqlite_database& db) {
        return one_row<approval_record>(
            std::move(db.query(select_approval).bind(1, call_id)), [](statement& s) {
                return approval_record{s.text(0), s.text(1), s.text(2),   s.text(3),
                                       s.text(4), s.text(5), s.integer(6)};
            });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<document_record>> sqlite_store::document(std::string chat_id) {
    auto work = [chat_id = std::move(chat_id)](sqlite_database& db) {
        return one_row<document_record>(
            std::move(db.query(select_document).bind(1, chat_id)), [](statement& s) {
                return document_record{s.text(0), s.text(1), s.text(2), s.integer(3), s.integer(4)};
            });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<document_write> sqlite_store::put_document(std::string chat_id, std::string name,
                                                          std::string content,
                                                          std::optional<std::int64_t> base) {
    auto work = [chat_id = std::move(chat_id), name = std::move(name), content = std::move(content),
                 base](sqlite_database& db) {
        document_write result;
        db.transaction([&] {
            auto current = db.query(select_document_version);
            current.bind(1, chat_id);
            std::int64_t version = current.step() ? current.integer(0) : 0;
            if (base && *base != version) {
                result = {version, true};
                return;
            }
            db.query(upsert_document)
                .bind(1, chat_id)
                .bind(2, name)
                .bind(3, content)
                .bind(4, now_ms())
                .run();
            result = {version + 1, false};
        });
        return result;
    };
    auto written = co_await write(std::move(work));
    co_return written;
}

net::awaitable<bool> sqlite_store::update_chat(std::string chat_id, chat_changes changes) {
    auto work = [chat_id = std::move(chat_id), changes = std::move(changes)](sqlite_database& db) {
        if (!db.query(select_chat_exists).bind(1, chat_id).step()) return false;
        if (changes.edits)
            db.query(update_chat_edits).bind(1, chat_id).bind(2, *changes.edits).run();
        if (changes.title)
            db.query(update_chat_title).bind(1, chat_id).bind(2, *changes.title).run();
        return true;
    };
    auto changed = co_await write(std::move(work));
    co_return changed;
}

net::awaitable<std::vector<edit_session_record>> sqlite_store::edit_sessions(std::string chat_id,
                                                                             bool open_only) {
    auto work = [chat_id = std::move(chat_id), open_only](sqlite_database& db) {
        return all_rows<edit_session_record>(
            std::move(db.query(open_only ? select_open_sessions_of_chat : select_sessions_of_chat)
                          .bind(1, chat_id)),
            read_session);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<edit_session_record>> sqlite_store::edit_session(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        return one_row<edit_session_record>(std::move(db.query(select_session).bind(1, id)),
                                            read_session);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::vector<session_edit_record>> sqlite_store::session_edits(
    std::string session_id) {
    auto work = [session_id = std::move(session_id)](sqlite_database& db) {
        return all_rows<session_edit_record>(
            std::move(db.query(select_session_edits).bind(1, session_id)), read_session_edit);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<std::optional<session_edit_record>> sqlite_store::session_edit_of_call(
    std::string call_id) {
    auto work = [call_id = std::move(call_id)](sqlite_database& db) {
        return one_row<session_edit_record>(
            std::move(db.query(select_edit_of_call).bind(1, call_id)), read_session_edit);
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<bool> sqlite_store::save_edit_session(edit_session_record session,
                                                     std::int64_t expected_revision,
                                                     std::optional<session_edit_record> edit) {
    auto work = [session = std::move(session), expected_revision,
                 edit = std::move(edit)](sqlite_database& db) mutable {
        bool saved = false;
        db.transaction([&] {
            auto now = now_ms();
            auto current = db.query(select_session_revision);
            current.bind(1, session.id);
            bool exists = current.step();
            if (expected_revision == 0) {
                if (exists) return;
                auto open = db.query(select_open_session_for);
                open.bind(1, session.chat_id).bind(2, session.kind).bind(3, session.path);
                if (open.step()) return;
            } else if (!exists || current.integer(0) != expected_revision) {
                return;
            }
            session.revision = expected_revision + 1;
            session.updated_at = now;
            if (expected_revision == 0) session.created_at = now;
            db.query(upsert_session)
                .bind(1, session.id)
                .bind(2, session.chat_id)
                .bind(3, session.kind)
                .bind(4, session.path)
                .bind(5, session.name)
                .bind(6, session.status)
                .bind(7, std::int64_t{session.base_existed})
                .bind(8, session.base_snapshot)
                .bind(9, std::int64_t{session.ai_exists})
                .bind(10, session.ai_version)
                .bind(11, session.revision)
                .bind(12, session.edit_count)
                .bind(13, session.created_at)
                .bind(14, session.updated_at)
                .bind(15, session.resolved_at)
                .run();
            if (edit)
                db.query(insert_session_edit)
                    .bind(1, edit->id)
                    .bind(2, session.id)
                    .bind(3, edit->order)
                    .bind(4, edit->tool)
                    .bind(5, edit->command)
                    .bind(6, edit->parameters)
                    .bind(7, edit->run_id)
                    .bind(8, edit->call_id)
                    .bind(9, edit->diff)
                    .bind(10, edit->result)
                    .bind(11, edit->created_at ? edit->created_at : now)
                    .run();
            saved = true;
        });
        return saved;
    };
    auto saved = co_await write(std::move(work));
    co_return saved;
}

net::awaitable<std::optional<backup_record>> sqlite_store::last_backup(std::string run_id) {
    auto work = [run_id = std::move(run_id)](sqlite_database& db) {
        return one_row<backup_record>(
            std::move(db.query(select_last_backup).bind(1, run_id)), [](statement& s) {
                return backup_record{s.text(0), s.text(1), s.text(2),    s.integer(3) != 0,
                                     s.text(4), s.text(5), s.integer(6), s.integer(7)};
            });
    };
    auto found = co_await read(std::move(work));
    co_return found;
}

net::awaitable<void> sqlite_store::commit(write_batch batch) {
    if (batch.empty()) co_return;
    auto work = [batch = std::move(batch)](sqlite_database& db) {
        db.transaction([&] { apply(db, batch); });
    };
    co_await write(std::move(work));
}

}  // namespace gateway::store
