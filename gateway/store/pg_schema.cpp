#include "gateway/store/pg_schema.hpp"

#include <iterator>
#include <string>

namespace gateway::store {

namespace {

// Versioned migrations, as the SQLite store's: entry i takes the schema from version i to i + 1.
// Never edit a shipped entry; append a new one. The schema is the SQLite one at its version 8,
// with `ord` (a bigserial) where SQLite orders by rowid, and a run's lease.
constexpr const char* migrations[] = {
    R"sql(
    CREATE TABLE chats (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        system_prompt TEXT NOT NULL,
        model TEXT NOT NULL,
        workspace TEXT NOT NULL,
        role TEXT NOT NULL,
        edits TEXT NOT NULL DEFAULT 'approve',
        title TEXT NOT NULL DEFAULT '');
    CREATE TABLE messages (
        id BIGSERIAL PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at BIGINT NOT NULL);
    CREATE INDEX messages_by_chat ON messages(chat_id, id);
    CREATE INDEX messages_by_run ON messages(run_id, id);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        step INTEGER NOT NULL,
        max_steps INTEGER NOT NULL,
        output TEXT NOT NULL,
        error TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        owner TEXT NOT NULL DEFAULT '',
        lease_expires BIGINT NOT NULL DEFAULT 0);
    CREATE INDEX runs_by_chat ON runs(chat_id, created_at);
    CREATE INDEX runs_unfinished ON runs(lease_expires)
        WHERE status IN ('running', 'awaiting_approval');
    CREATE UNIQUE INDEX one_live_run_per_chat ON runs(chat_id)
        WHERE status IN ('running', 'awaiting_approval');
    CREATE TABLE events (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (run_id, seq));
    CREATE TABLE run_messages (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (run_id, seq));
    CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        ord BIGSERIAL,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        step INTEGER NOT NULL,
        tool TEXT NOT NULL,
        parameters TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        preview TEXT NOT NULL DEFAULT '');
    CREATE INDEX tool_calls_by_run ON tool_calls(run_id, created_at, ord);
    CREATE TABLE approvals (
        call_id TEXT PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL,
        decision TEXT NOT NULL,
        parameters TEXT NOT NULL,
        feedback TEXT NOT NULL,
        scope TEXT NOT NULL,
        decided_at BIGINT NOT NULL);
    CREATE TABLE documents (
        chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        content TEXT NOT NULL,
        version BIGINT NOT NULL,
        updated_at BIGINT NOT NULL);
    CREATE TABLE write_backups (
        call_id TEXT PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
        ord BIGSERIAL,
        run_id TEXT NOT NULL,
        path TEXT NOT NULL,
        existed INTEGER NOT NULL,
        content TEXT NOT NULL,
        after_sha256 TEXT NOT NULL,
        undone_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL);
    CREATE INDEX write_backups_by_run ON write_backups(run_id, created_at);
    CREATE TABLE edit_sessions (
        id TEXT PRIMARY KEY,
        ord BIGSERIAL,
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        base_existed INTEGER NOT NULL,
        base_snapshot TEXT NOT NULL,
        ai_exists INTEGER NOT NULL,
        ai_version TEXT NOT NULL,
        revision BIGINT NOT NULL,
        edit_count BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        resolved_at BIGINT NOT NULL);
    CREATE UNIQUE INDEX edit_sessions_open ON edit_sessions(chat_id, kind, path)
        WHERE status = 'open';
    CREATE INDEX edit_sessions_by_chat ON edit_sessions(chat_id, created_at);
    CREATE TABLE session_edits (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES edit_sessions(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        tool TEXT NOT NULL,
        command TEXT NOT NULL,
        parameters TEXT NOT NULL,
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        diff TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at BIGINT NOT NULL);
    CREATE INDEX session_edits_by_session ON session_edits(session_id, seq);
    CREATE INDEX session_edits_by_call ON session_edits(call_id);
    CREATE TABLE virtual_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        models TEXT NOT NULL DEFAULT '[]',
        rpm BIGINT NOT NULL DEFAULT 0,
        tpm BIGINT NOT NULL DEFAULT 0,
        max_parallel BIGINT NOT NULL DEFAULT 0,
        budget_tokens BIGINT NOT NULL DEFAULT 0,
        budget_period TEXT NOT NULL DEFAULT 'month',
        expires_at BIGINT NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT NOT NULL DEFAULT 0);
    CREATE TABLE usage_daily (
        day TEXT NOT NULL,
        key_id TEXT NOT NULL,
        model TEXT NOT NULL,
        upstream TEXT NOT NULL,
        requests BIGINT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        PRIMARY KEY (day, key_id, model, upstream));
    CREATE INDEX usage_by_key ON usage_daily(key_id, day);
    CREATE TABLE run_requests (
        id BIGSERIAL PRIMARY KEY,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        answer TEXT,
        created_at BIGINT NOT NULL);
    CREATE INDEX run_requests_open ON run_requests(run_id, id) WHERE answer IS NULL;
    )sql",
};

}  // namespace

int latest_pg_schema_version() {
    return static_cast<int>(std::size(migrations));
}

void migrate_pg(pg_database& db) {
    db.transaction([&] {
        db.query("SELECT pg_advisory_xact_lock(7243051)");
        db.execute("CREATE TABLE IF NOT EXISTS contextgate_schema (version INTEGER NOT NULL)");
        auto current = db.query("SELECT version FROM contextgate_schema");
        int version = current.empty() ? 0 : static_cast<int>(current.integer(0, 0));
        if (current.empty()) db.execute("INSERT INTO contextgate_schema (version) VALUES (0)");
        int latest = latest_pg_schema_version();
        if (version > latest)
            throw store_error("the database has schema version " + std::to_string(version) +
                              ", newer than this gateway's " + std::to_string(latest) +
                              ": run a newer contextgate");
        for (int v = version; v < latest; ++v) db.execute(migrations[v]);
        db.query("UPDATE contextgate_schema SET version = $1", {std::int64_t{latest}});
    });
}

}  // namespace gateway::store
