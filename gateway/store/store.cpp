#include "gateway/store/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace gateway::store {

namespace {

// Versioned migrations: entry i takes the schema from version i to i + 1. Never edit a shipped
// entry; append a new one.
constexpr const char* migrations[] = {
    R"sql(
    CREATE TABLE chats (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        system_prompt TEXT NOT NULL,
        model TEXT NOT NULL,
        workspace TEXT NOT NULL,
        role TEXT NOT NULL);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL);
    CREATE INDEX messages_by_chat ON messages(chat_id, id);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        step INTEGER NOT NULL,
        max_steps INTEGER NOT NULL,
        output TEXT NOT NULL,
        error TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL);
    CREATE INDEX runs_by_chat ON runs(chat_id, created_at);
    CREATE INDEX runs_by_status ON runs(status);
    CREATE TABLE events (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
    CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        tool TEXT NOT NULL,
        parameters TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at INTEGER NOT NULL);
    CREATE INDEX tool_calls_by_run ON tool_calls(run_id, created_at);
    CREATE TABLE approvals (
        call_id TEXT PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        decision TEXT NOT NULL,
        parameters TEXT NOT NULL,
        feedback TEXT NOT NULL,
        scope TEXT NOT NULL,
        decided_at INTEGER NOT NULL);
    CREATE TABLE documents (
        chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        content TEXT NOT NULL,
        version INTEGER NOT NULL,
        updated_at INTEGER NOT NULL);
    )sql",
    // 2: a run's conversation, appended message by message, so saving the loop's state at every
    // step no longer rewrites the whole conversation.
    R"sql(
    CREATE TABLE run_messages (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (run_id, seq));
    )sql",
    // 3: a write's preview diff is kept once, with its call; events carry an excerpt of it.
    R"sql(
    ALTER TABLE tool_calls ADD COLUMN preview TEXT NOT NULL DEFAULT '';
    )sql",
};

}  // namespace

namespace {

class statement {
public:
    statement(sqlite3* db, const char* sql) : db_(db) {
        if (sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr) != SQLITE_OK)
            throw store_error(std::string("SQLite prepare failed: ") + sqlite3_errmsg(db));
    }
    ~statement() { sqlite3_finalize(statement_); }
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;

    statement& bind(int index, std::string_view text) {
        sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT);
        return *this;
    }
    statement& bind(int index, std::int64_t value) {
        sqlite3_bind_int64(statement_, index, value);
        return *this;
    }
    // true while there is a row to read; false when done.
    bool step() {
        int rc = sqlite3_step(statement_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw store_error(std::string("SQLite step failed: ") + sqlite3_errmsg(db_));
    }
    std::string text(int column) {
        auto* p = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
        return p ? std::string(p,
                               static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                 : std::string();
    }
    std::int64_t integer(int column) { return sqlite3_column_int64(statement_, column); }

private:
    sqlite3* db_;
    sqlite3_stmt* statement_ = nullptr;
};

// Row readers, in the column order of the matching *_columns lists.
chat_record read_chat(statement& s) {
    return {s.text(0), s.integer(1), s.text(2), s.text(3), s.text(4), s.text(5)};
}

tool_call_record read_tool_call(statement& s) {
    return {s.text(0), s.text(1),    static_cast<int>(s.integer(2)), s.text(3), s.text(4),
            s.text(5), s.text(6),    s.integer(7),                   s.text(8)};
}

run_record read_run(statement& s) {
    return {s.text(0),
            s.text(1),
            s.text(2),
            static_cast<int>(s.integer(3)),
            static_cast<int>(s.integer(4)),
            s.text(5),
            s.text(6),
            s.text(7),
            s.integer(8),
            s.integer(9)};
}

}  // namespace

std::int64_t store::now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

config::parsed<std::unique_ptr<store>> store::open(const std::string& path) {
    using result = config::parsed<std::unique_ptr<store>>;
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return result::fail(path + ": cannot open the database: " + why);
    }
    std::unique_ptr<store> s(new store(db));
    try {
        sqlite3_busy_timeout(db, 5000);
        s->execute("PRAGMA journal_mode=WAL");
        s->execute("PRAGMA synchronous=NORMAL");
        s->execute("PRAGMA foreign_keys=ON");
        int version = s->schema_version();
        constexpr int latest = static_cast<int>(std::size(migrations));
        if (version > latest)
            return result::fail(path + ": the database has schema version " +
                                std::to_string(version) + ", newer than this contextgate (" +
                                std::to_string(latest) + ")");
        for (int v = version; v < latest; ++v) {
            s->atomically([&] {
                s->execute(migrations[v]);
                s->execute(("PRAGMA user_version=" + std::to_string(v + 1)).c_str());
            });
        }
    } catch (const store_error& e) {
        return result::fail(path + ": " + e.what());
    }
    return {std::move(s), {}};
}

store::~store() {
    sqlite3_close(db_);
}

void store::execute(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
        std::string message = error ? error : "unknown error";
        sqlite3_free(error);
        throw store_error("SQLite: " + message);
    }
}

int store::schema_version() {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, "PRAGMA user_version");
    return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

void store::atomically(const std::function<void()>& work) {
    std::lock_guard lock(mutex_);
    if (!sqlite3_get_autocommit(db_)) {  // already inside a transaction: join it
        work();
        return;
    }
    execute("BEGIN IMMEDIATE");
    try {
        work();
        execute("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void store::insert_chat(const chat_record& c) {
    std::lock_guard lock(mutex_);
    statement(db_,
              "INSERT INTO chats (id, created_at, system_prompt, model, workspace, role) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .bind(1, c.id)
        .bind(2, c.created_at)
        .bind(3, c.system_prompt)
        .bind(4, c.model)
        .bind(5, c.workspace)
        .bind(6, c.role)
        .step();
}

namespace {

constexpr const char* chat_columns = "id, created_at, system_prompt, model, workspace, role";

}  // namespace

std::optional<chat_record> store::chat(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto s = statement(
        db_, (std::string("SELECT ") + chat_columns + " FROM chats WHERE id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_chat(s);
}

std::vector<chat_record> store::chats() {
    std::lock_guard lock(mutex_);
    auto s = statement(
        db_,
        (std::string("SELECT ") + chat_columns + " FROM chats ORDER BY created_at, id").c_str());
    std::vector<chat_record> out;
    while (s.step()) out.push_back(read_chat(s));
    return out;
}

bool store::delete_chat(const std::string& id) {
    std::lock_guard lock(mutex_);
    statement(db_, "DELETE FROM chats WHERE id = ?1").bind(1, id).step();
    return sqlite3_changes(db_) > 0;
}

std::int64_t store::add_message(const message_record& m) {
    std::lock_guard lock(mutex_);
    statement(db_,
              "INSERT INTO messages (chat_id, run_id, role, content, created_at) "
              "VALUES (?1, ?2, ?3, ?4, ?5)")
        .bind(1, m.chat_id)
        .bind(2, m.run_id)
        .bind(3, m.role)
        .bind(4, m.content)
        .bind(5, m.created_at ? m.created_at : now_ms())
        .step();
    return sqlite3_last_insert_rowid(db_);
}

std::vector<message_record> store::messages(const std::string& chat_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
                       "WHERE chat_id = ?1 ORDER BY id");
    s.bind(1, chat_id);
    std::vector<message_record> out;
    while (s.step())
        out.push_back({s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5)});
    return out;
}

std::vector<message_record> store::message_page(const std::string& chat_id,
                                                std::int64_t before_id, std::size_t limit,
                                                bool& older) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
                       "WHERE chat_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3");
    s.bind(1, chat_id)
        .bind(2, before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max())
        .bind(3, static_cast<std::int64_t>(limit) + 1);
    std::vector<message_record> out;
    while (s.step())
        out.push_back({s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5)});
    older = out.size() > limit;
    if (older) out.pop_back();
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<message_record> store::recent_messages(const std::string& chat_id,
                                                   std::size_t max_bytes, std::size_t& left_out) {
    std::lock_guard lock(mutex_);
    // Sizes first, so the contents that do not fit are never read.
    auto sizes = statement(db_,
                           "SELECT id, length(CAST(content AS BLOB)) FROM messages "
                           "WHERE chat_id = ?1 ORDER BY id DESC");
    sizes.bind(1, chat_id);
    std::int64_t first_kept = std::numeric_limits<std::int64_t>::max();
    std::size_t total = 0;
    left_out = 0;
    bool full = false;
    while (sizes.step()) {
        auto size = static_cast<std::size_t>(sizes.integer(1));
        if (!full && total + size <= max_bytes) {
            total += size;
            first_kept = sizes.integer(0);
        } else {
            full = true;
            ++left_out;
        }
    }
    auto s = statement(db_,
                       "SELECT id, chat_id, run_id, role, content, created_at FROM messages "
                       "WHERE chat_id = ?1 AND id >= ?2 ORDER BY id");
    s.bind(1, chat_id).bind(2, first_kept);
    std::vector<message_record> out;
    while (s.step())
        out.push_back({s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5)});
    return out;
}

std::optional<std::string> store::run_input(const std::string& run_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT content FROM messages WHERE run_id = ?1 AND role = 'user' "
                       "ORDER BY id LIMIT 1");
    s.bind(1, run_id);
    if (!s.step()) return std::nullopt;
    return s.text(0);
}

namespace {

constexpr const char* run_columns =
    "id, chat_id, status, step, max_steps, output, error, state, created_at, updated_at";

}  // namespace

void store::save_run(const run_record& r) {
    std::lock_guard lock(mutex_);
    statement(db_,
              // An upsert, not INSERT OR REPLACE: a replace deletes the row first, and the
              // cascade would take the run's events and tool calls with it.
              "INSERT INTO runs (id, chat_id, status, step, max_steps, output, error, state, "
              "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
              "ON CONFLICT(id) DO UPDATE SET status = excluded.status, step = excluded.step, "
              "max_steps = excluded.max_steps, output = excluded.output, error = excluded.error, "
              "state = excluded.state, updated_at = excluded.updated_at")
        .bind(1, r.id)
        .bind(2, r.chat_id)
        .bind(3, r.status)
        .bind(4, static_cast<std::int64_t>(r.step))
        .bind(5, static_cast<std::int64_t>(r.max_steps))
        .bind(6, r.output)
        .bind(7, r.error)
        .bind(8, r.state)
        .bind(9, r.created_at ? r.created_at : now_ms())
        .bind(10, now_ms())
        .step();
}

std::optional<run_record> store::run(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto s =
        statement(db_, (std::string("SELECT ") + run_columns + " FROM runs WHERE id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_run(s);
}

std::optional<std::string> store::run_status(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, "SELECT status FROM runs WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return s.text(0);
}

void store::append_run_message(const std::string& run_id, std::int64_t seq,
                               const std::string& role, const std::string& content) {
    std::lock_guard lock(mutex_);
    statement(db_, "INSERT INTO run_messages (run_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)")
        .bind(1, run_id)
        .bind(2, seq)
        .bind(3, role)
        .bind(4, content)
        .step();
}

std::vector<std::pair<std::string, std::string>> store::run_messages(const std::string& run_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, "SELECT role, content FROM run_messages WHERE run_id = ?1 ORDER BY seq");
    s.bind(1, run_id);
    std::vector<std::pair<std::string, std::string>> out;
    while (s.step()) out.emplace_back(s.text(0), s.text(1));
    return out;
}

std::vector<run_record> store::runs_of_chat(const std::string& chat_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, (std::string("SELECT ") + run_columns +
                             " FROM runs WHERE chat_id = ?1 ORDER BY created_at, id")
                                .c_str());
    s.bind(1, chat_id);
    std::vector<run_record> out;
    while (s.step()) out.push_back(read_run(s));
    return out;
}

std::vector<run_record> store::runs_with_status(const std::string& status) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, (std::string("SELECT ") + run_columns +
                             " FROM runs WHERE status = ?1 ORDER BY created_at, id")
                                .c_str());
    s.bind(1, status);
    std::vector<run_record> out;
    while (s.step()) out.push_back(read_run(s));
    return out;
}

std::int64_t store::append_event(const std::string& run_id, const std::string& type,
                                 const std::string& data) {
    std::lock_guard lock(mutex_);
    std::int64_t seq = 0;
    atomically([&] {
        auto next =
            statement(db_, "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run_id = ?1");
        next.bind(1, run_id);
        next.step();
        seq = next.integer(0);
        statement(db_,
                  "INSERT INTO events (run_id, seq, type, data, created_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(1, run_id)
            .bind(2, seq)
            .bind(3, type)
            .bind(4, data)
            .bind(5, now_ms())
            .step();
    });
    return seq;
}

std::vector<event_record> store::events_after(const std::string& run_id, std::int64_t after_seq,
                                              std::size_t max_events, std::size_t max_bytes) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT run_id, seq, type, data, created_at FROM events "
                       "WHERE run_id = ?1 AND seq > ?2 ORDER BY seq");
    s.bind(1, run_id).bind(2, after_seq);
    std::vector<event_record> out;
    std::size_t bytes = 0;
    while (out.size() < max_events && (out.empty() || bytes < max_bytes) && s.step()) {
        out.push_back({s.text(0), s.integer(1), s.text(2), s.text(3), s.integer(4)});
        bytes += out.back().data.size();
    }
    return out;
}

void store::save_tool_call(const tool_call_record& c) {
    std::lock_guard lock(mutex_);
    statement(db_,
              // An upsert: a replace would cascade to the call's approval.
              "INSERT INTO tool_calls (id, run_id, step, tool, parameters, status, result, "
              "created_at, preview) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(id) "
              "DO UPDATE SET parameters = excluded.parameters, status = excluded.status, "
              "result = excluded.result, preview = excluded.preview")
        .bind(1, c.id)
        .bind(2, c.run_id)
        .bind(3, static_cast<std::int64_t>(c.step))
        .bind(4, c.tool)
        .bind(5, c.parameters)
        .bind(6, c.status)
        .bind(7, c.result)
        .bind(8, c.created_at ? c.created_at : now_ms())
        .bind(9, c.preview)
        .step();
}

namespace {

constexpr const char* call_columns =
    "id, run_id, step, tool, parameters, status, result, created_at, preview";

}  // namespace

std::optional<tool_call_record> store::tool_call(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto s = statement(
        db_, (std::string("SELECT ") + call_columns + " FROM tool_calls WHERE id = ?1").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_tool_call(s);
}

std::vector<tool_call_record> store::tool_calls(const std::string& run_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_, (std::string("SELECT ") + call_columns +
                             " FROM tool_calls WHERE run_id = ?1 ORDER BY created_at, rowid")
                                .c_str());
    s.bind(1, run_id);
    std::vector<tool_call_record> out;
    while (s.step()) out.push_back(read_tool_call(s));
    return out;
}

void store::save_approval(const approval_record& a) {
    std::lock_guard lock(mutex_);
    statement(db_,
              "INSERT OR REPLACE INTO approvals (call_id, run_id, decision, parameters, feedback, "
              "scope, decided_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .bind(1, a.call_id)
        .bind(2, a.run_id)
        .bind(3, a.decision)
        .bind(4, a.parameters)
        .bind(5, a.feedback)
        .bind(6, a.scope)
        .bind(7, a.decided_at ? a.decided_at : now_ms())
        .step();
}

std::optional<approval_record> store::approval(const std::string& call_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT call_id, run_id, decision, parameters, feedback, scope, decided_at "
                       "FROM approvals WHERE call_id = ?1");
    s.bind(1, call_id);
    if (!s.step()) return std::nullopt;
    return approval_record{s.text(0), s.text(1), s.text(2),   s.text(3),
                           s.text(4), s.text(5), s.integer(6)};
}

std::int64_t store::put_document(const std::string& chat_id, const std::string& name,
                                 const std::string& content) {
    std::lock_guard lock(mutex_);
    std::int64_t version = 0;
    atomically([&] {
        statement(db_,
                  "INSERT INTO documents (chat_id, name, content, version, updated_at) "
                  "VALUES (?1, ?2, ?3, 1, ?4) ON CONFLICT(chat_id) DO UPDATE SET name = ?2, "
                  "content = ?3, version = version + 1, updated_at = ?4")
            .bind(1, chat_id)
            .bind(2, name)
            .bind(3, content)
            .bind(4, now_ms())
            .step();
        auto s = statement(db_, "SELECT version FROM documents WHERE chat_id = ?1");
        s.bind(1, chat_id);
        s.step();
        version = s.integer(0);
    });
    return version;
}

std::optional<document_record> store::document(const std::string& chat_id) {
    std::lock_guard lock(mutex_);
    auto s = statement(db_,
                       "SELECT chat_id, name, content, version, updated_at FROM documents "
                       "WHERE chat_id = ?1");
    s.bind(1, chat_id);
    if (!s.step()) return std::nullopt;
    return document_record{s.text(0), s.text(1), s.text(2), s.integer(3), s.integer(4)};
}

}  // namespace gateway::store
