#include "gateway/store/schema.hpp"

#include "gateway/store/state_store.hpp"

#include <iterator>
#include <string>

namespace gateway::store {

namespace {

// One step of the schema: entry i takes a database from version i to i + 1, with a text per
// database where their SQL differs (types: SQLite's INTEGER and rowid, PostgreSQL's BIGINT and
// bigserial) and nullptr where a database has nothing to do. A step the same on both gives
// the same text twice. Never edit a shipped entry; append a new one.
struct migration {
    const char* sqlite;
    const char* postgres;
    const char* text(const sql_dialect& d) const {
        return d.which == sql_dialect::kind::sqlite ? sqlite : postgres;
    }
};

// The list both databases migrate by (PostgreSQL's numbering was its own before the lists
// merged: its one shipped step is entry 0, and its databases at version 1 skip the rest).
constexpr migration migrations[] = {
    // 0: SQLite: the first schema. PostgreSQL: the schema at SQLite's version 8 (its entries 1-7
    // are no-ops), with `ord` (a bigserial) where SQLite orders by rowid, a run's lease and the
    // replicas' run requests.
    {R"sql(
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
    )sql"},
    // 2: a run's conversation, appended message by message, so saving the loop's state at every
    // step no longer rewrites the whole conversation.
    {R"sql(
    CREATE TABLE run_messages (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (run_id, seq));
    )sql",
     nullptr},
    // 3: a write's preview diff is kept once, with its call; events carry an excerpt of it.
    {R"sql(
    ALTER TABLE tool_calls ADD COLUMN preview TEXT NOT NULL DEFAULT '';
    )sql",
     nullptr},
    // 4: what each applied write replaced, so the run's last write can be undone.
    {R"sql(
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
     nullptr},
    // 5: review mode: a chat's edit mode, and the agent's edits recorded as edit sessions (at
    // most one open per chat and target) with their ordered edits.
    {R"sql(
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
     nullptr},
    // 6: a chat's title (the console lists and searches chats by it): earlier chats are named
    // after the first line of their first message.
    {R"sql(
    ALTER TABLE chats ADD COLUMN title TEXT NOT NULL DEFAULT '';
    UPDATE chats SET title = coalesce(trim(substr(replace(replace(
        (SELECT content FROM messages m WHERE m.chat_id = chats.id AND m.role = 'user'
         ORDER BY m.id LIMIT 1), char(13), ' '), char(10), ' '), 1, 80)), '');
    )sql",
     nullptr},
    // 7: virtual keys made with /admin/keys (revoked ones stay, so usage keeps its names) and
    // token usage per day, key, model and upstream.
    {R"sql(
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
     nullptr},
    // 8: one unfinished run per chat is the database's rule (PostgreSQL replicas need it there;
    // SQLite keeps the same rule so both stores behave alike).
    {R"sql(
    CREATE UNIQUE INDEX one_live_run_per_chat ON runs(chat_id)
        WHERE status IN ('running', 'awaiting_approval');
    )sql",
     nullptr},
    // 9: a run's lease columns on SQLite too, so the store writes a run with one statement on
    // both (SQLite's owner is always "": one process drives every run).
    {R"sql(
    ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    ALTER TABLE runs ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;
    )sql",
     nullptr},
    // 10: a run's conversation is typed: new messages are stored whole as JSON (format 2); the
    // rows before keep format 1 (a role and its text) and are read as they are.
    {R"sql(
    ALTER TABLE run_messages ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
    )sql",
     R"sql(
    ALTER TABLE run_messages ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
    )sql"},
    // 11: usage in money: the token split pricing charges, the cost in whole nano-dollars (sums
    // stay exact), the requests no price covered or priced on an estimate, and response-cache
    // hits with what they saved. The requests recorded before had no cost recorded: unpriced,
    // never $0.
    {R"sql(
    ALTER TABLE usage_daily ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN usd_nano INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN unpriced_requests INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN estimated_requests INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN cache_hits INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN saved_usd_nano INTEGER NOT NULL DEFAULT 0;
    UPDATE usage_daily SET unpriced_requests = requests;
    )sql",
     R"sql(
    ALTER TABLE usage_daily ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN usd_nano BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN unpriced_requests BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN estimated_requests BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN cache_hits BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE usage_daily ADD COLUMN saved_usd_nano BIGINT NOT NULL DEFAULT 0;
    UPDATE usage_daily SET unpriced_requests = requests;
    )sql"},
    // 12: a virtual key's budget in USD (whole nano-dollars; 0: none), beside its token budget
    // and for the same period.
    {R"sql(
    ALTER TABLE virtual_keys ADD COLUMN budget_usd_nano INTEGER NOT NULL DEFAULT 0;
    )sql",
     R"sql(
    ALTER TABLE virtual_keys ADD COLUMN budget_usd_nano BIGINT NOT NULL DEFAULT 0;
    )sql"},
    // 13: sign-in: the users the identity provider vouched for (one per issuer and subject),
    // their sessions (by the digest of the cookie's id: a copy of the database opens none), and
    // the sign-ins under way (any replica may receive the provider's answer).
    {R"sql(
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        email TEXT NOT NULL,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        team TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        signed_in_at INTEGER NOT NULL,
        UNIQUE (issuer, subject));
    CREATE TABLE sessions (
        id_digest TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL);
    CREATE INDEX sessions_by_user ON sessions(user_id);
    CREATE TABLE login_states (
        state TEXT PRIMARY KEY,
        nonce TEXT NOT NULL,
        verifier TEXT NOT NULL,
        return_to TEXT NOT NULL,
        expires_at INTEGER NOT NULL);
    )sql",
     R"sql(
    CREATE TABLE users (
        id TEXT PRIMARY KEY,
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        email TEXT NOT NULL,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        team TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        signed_in_at BIGINT NOT NULL,
        UNIQUE (issuer, subject));
    CREATE TABLE sessions (
        id_digest TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        seen_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL);
    CREATE INDEX sessions_by_user ON sessions(user_id);
    CREATE TABLE login_states (
        state TEXT PRIMARY KEY,
        nonce TEXT NOT NULL,
        verifier TEXT NOT NULL,
        return_to TEXT NOT NULL,
        expires_at BIGINT NOT NULL);
    )sql"},
    // 14: teams made through /admin/teams (the configuration's are not stored), whose budget
    // and models bound the keys they own; a key's owner (a team or a user, "": the operators);
    // the audit log of every admin change.
    {R"sql(
    CREATE TABLE teams (
        name TEXT PRIMARY KEY,
        budget_usd_nano INTEGER NOT NULL,
        budget_period TEXT NOT NULL,
        models TEXT NOT NULL,
        created_at INTEGER NOT NULL);
    ALTER TABLE virtual_keys ADD COLUMN team TEXT NOT NULL DEFAULT '';
    ALTER TABLE virtual_keys ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        actor_role TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        team TEXT NOT NULL,
        detail TEXT NOT NULL,
        remote TEXT NOT NULL);
    CREATE INDEX audit_log_by_at ON audit_log(at);
    )sql",
     R"sql(
    CREATE TABLE teams (
        name TEXT PRIMARY KEY,
        budget_usd_nano BIGINT NOT NULL,
        budget_period TEXT NOT NULL,
        models TEXT NOT NULL,
        created_at BIGINT NOT NULL);
    ALTER TABLE virtual_keys ADD COLUMN team TEXT NOT NULL DEFAULT '';
    ALTER TABLE virtual_keys ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';
    CREATE TABLE audit_log (
        id BIGSERIAL PRIMARY KEY,
        at BIGINT NOT NULL,
        actor TEXT NOT NULL,
        actor_role TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        team TEXT NOT NULL,
        detail TEXT NOT NULL,
        remote TEXT NOT NULL);
    CREATE INDEX audit_log_by_at ON audit_log(at);
    )sql"},
    // 15: a chat's owner, the signed-in user who made it ("": a key's holder; every chat made
    // before this step), so that people see only their own chats and their team's.
    {R"sql(
    ALTER TABLE chats ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';
    )sql",
     R"sql(
    ALTER TABLE chats ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';
    )sql"},
};

}  // namespace

int latest_schema_version() {
    return static_cast<int>(std::size(migrations));
}

void migrate(sql_connection& db) {
    db.transaction([&] {
        db.lock_schema();
        int version = db.schema_version();
        int latest = latest_schema_version();
        if (version > latest)
            throw store_error("the database has schema version " + std::to_string(version) +
                              ", newer than this contextgate (" + std::to_string(latest) +
                              "): run a newer contextgate");
        if (version == latest) return;
        for (int v = version; v < latest; ++v)
            if (const char* sql = migrations[v].text(db.dialect())) db.execute(sql);
        db.set_schema_version(latest);
    });
}

}  // namespace gateway::store
