#include "gateway/store/sqlite_database.hpp"

#include "gateway/store/state_store.hpp"

#include <sqlite3.h>

#include <chrono>
#include <iterator>

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
    // 4: what each applied write replaced, so the run's last write can be undone.
    R"sql(
    CREATE TABLE write_backups (
        call_id TEXT PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        path TEXT NOT NULL,
        existed INTEGER NOT NULL,
        content TEXT NOT NULL,
        after_sha256 TEXT NOT NULL,
        undone_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL);
    CREATE INDEX write_backups_by_run ON write_backups(run_id, created_at);
    )sql",
    // 5: review mode: a chat's edit mode, and the agent's edits recorded as edit sessions (at
    // most one open per chat and target) with their ordered edits.
    R"sql(
    ALTER TABLE chats ADD COLUMN edits TEXT NOT NULL DEFAULT 'approve';
    CREATE TABLE edit_sessions (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        base_existed INTEGER NOT NULL,
        base_snapshot TEXT NOT NULL,
        ai_exists INTEGER NOT NULL,
        ai_version TEXT NOT NULL,
        revision INTEGER NOT NULL,
        edit_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        resolved_at INTEGER NOT NULL);
    CREATE UNIQUE INDEX edit_sessions_open ON edit_sessions(chat_id, kind, path)
        WHERE status = 'open';
    CREATE INDEX edit_sessions_by_chat ON edit_sessions(chat_id, created_at);
    CREATE TABLE session_edits (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES edit_sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        tool TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        diff TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at INTEGER NOT NULL);
    CREATE INDEX session_edits_by_session ON session_edits(session_id, seq);
    CREATE INDEX session_edits_by_call ON session_edits(call_id);
    )sql",
    // 6: a chat's title (the console lists and searches chats by it): earlier chats are named
    // after the first line of their first message.
    R"sql(
    ALTER TABLE chats ADD COLUMN title TEXT NOT NULL DEFAULT '';
    UPDATE chats SET title = coalesce(trim(substr(replace(replace(
        (SELECT content FROM messages m WHERE m.chat_id = chats.id AND m.role = 'user'
         ORDER BY m.id LIMIT 1), char(13), ' '), char(10), ' '), 1, 80)), '');
    )sql",
    // 7: virtual keys made with /admin/keys (revoked ones stay, so usage keeps its names) and
    // token usage per day, key, model and upstream.
    R"sql(
    CREATE TABLE virtual_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        models TEXT NOT NULL DEFAULT '[]',
        rpm INTEGER NOT NULL DEFAULT 0,
        tpm INTEGER NOT NULL DEFAULT 0,
        max_parallel INTEGER NOT NULL DEFAULT 0,
        budget_tokens INTEGER NOT NULL DEFAULT 0,
        budget_period TEXT NOT NULL DEFAULT 'month',
        expires_at INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE usage_daily (
        day TEXT NOT NULL,
        key_id TEXT NOT NULL,
        model TEXT NOT NULL,
        upstream TEXT NOT NULL,
        requests INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        PRIMARY KEY (day, key_id, model, upstream)
    );
    CREATE INDEX usage_by_key ON usage_daily(key_id, day);
    )sql",
    // 8: one unfinished run per chat is the database's rule (PostgreSQL replicas need it there;
    // SQLite keeps the same rule so both stores behave alike).
    R"sql(
    CREATE UNIQUE INDEX one_live_run_per_chat ON runs(chat_id)
        WHERE status IN ('running', 'awaiting_approval');
    )sql",
};

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
    throw store_error("SQLite " + std::string(what) + ": " + sqlite3_errmsg(db));
}

}  // namespace

int latest_schema_version() {
    return static_cast<int>(std::size(migrations));
}

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

statement::~statement() {
    if (statement_) sqlite3_reset(statement_);
}

statement& statement::bind(int index, std::string_view text) {
    check_stored_text(text);  // the stores' one text rule (state_store.hpp)
    // SQLITE_TRANSIENT: SQLite copies the bytes.
    if (sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT) != SQLITE_OK)
        fail(db_, "bind");
    return *this;
}

statement& statement::bind(int index, std::int64_t value) {
    if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) fail(db_, "bind");
    return *this;
}

bool statement::step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE) {
        // "UNIQUE constraint failed: runs.chat_id": the columns name the index.
        std::string message = sqlite3_errmsg(db_);
        auto colon = message.rfind(": ");
        throw unique_violation(colon == std::string::npos ? "" : message.substr(colon + 2),
                               "SQLite step: " + message);
    }
    fail(db_, "step");
}

std::string statement::text(int column) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
             : std::string();
}

std::int64_t statement::integer(int column) {
    return sqlite3_column_int64(statement_, column);
}

config::parsed<std::unique_ptr<sqlite_database>> sqlite_database::open(const std::string& path,
                                                                       access how) {
    using result = config::parsed<std::unique_ptr<sqlite_database>>;
    sqlite3* db = nullptr;
    int flags = how == access::read_write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                          : SQLITE_OPEN_READONLY;
    int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return result::fail(path + ": cannot open the database: " + why);
    }
    std::unique_ptr<sqlite_database> database(new sqlite_database(db));
    try {
        sqlite3_busy_timeout(db, 5000);
        if (how == access::read_write) {
            database->execute("PRAGMA journal_mode=WAL");
            // In WAL mode NORMAL loses nothing on a process crash (SIGKILL), only on power loss.
            database->execute("PRAGMA synchronous=NORMAL");
            database->execute("PRAGMA foreign_keys=ON");
            database->migrate();
        } else {
            database->execute("PRAGMA query_only=ON");
        }
    } catch (const store_error& e) {
        return result::fail(path + ": " + e.what());
    }
    return {std::move(database), {}};
}

sqlite_database::~sqlite_database() {
    for (auto& [sql, s] : prepared_) sqlite3_finalize(s);
    sqlite3_close(db_);
}

statement sqlite_database::query(const char* sql) {
    auto& slot = prepared_[sql];
    if (!slot) {
        if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot, nullptr) !=
            SQLITE_OK) {
            prepared_.erase(sql);
            fail(db_, "prepare");
        }
    } else {
        sqlite3_clear_bindings(slot);
    }
    return statement(db_, slot);
}

void sqlite_database::execute(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
        std::string message = error ? error : "unknown error";
        sqlite3_free(error);
        throw store_error("SQLite: " + message);
    }
}

void sqlite_database::begin() {
    execute("BEGIN IMMEDIATE");
}

void sqlite_database::commit() {
    execute("COMMIT");
}

void sqlite_database::rollback() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

int sqlite_database::schema_version() {
    auto s = query("PRAGMA user_version");
    return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

std::int64_t sqlite_database::changes() {
    return sqlite3_changes64(db_);
}

std::int64_t sqlite_database::last_insert_rowid() {
    return sqlite3_last_insert_rowid(db_);
}

void sqlite_database::migrate() {
    int version = schema_version();
    int latest = latest_schema_version();
    if (version > latest)
        throw store_error("the database has schema version " + std::to_string(version) +
                          ", newer than this contextgate (" + std::to_string(latest) + ")");
    for (int v = version; v < latest; ++v) {
        transaction([&] {
            execute(migrations[v]);
            execute(("PRAGMA user_version=" + std::to_string(v + 1)).c_str());
        });
    }
}

}  // namespace gateway::store
