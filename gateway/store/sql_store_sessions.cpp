// sql_store's edit sessions and their edits.
#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

namespace gateway::store {

namespace {

// Queries as sql_store.cpp says: literals, written once for both databases.
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
constexpr const char* select_session_edits =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE session_id = $1 ORDER BY seq";
constexpr const char* select_edit_of_call =
    "SELECT " EDIT_COLUMNS " FROM session_edits WHERE call_id = $1 ORDER BY created_at LIMIT 1";
constexpr const char* insert_session_edit =
    "INSERT INTO session_edits (" EDIT_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

}  // namespace

net::awaitable<std::vector<edit_session_record>> sql_store::edit_sessions(std::string chat_id,
                                                                          bool open_only) {
    return read_all(open_only ? select_open_sessions_of_chat : select_sessions_of_chat,
                    edit_session_from, std::move(chat_id));
}

net::awaitable<std::optional<edit_session_record>> sql_store::edit_session(std::string id) {
    return read_one(select_session, edit_session_from, std::move(id));
}

net::awaitable<std::vector<session_edit_record>> sql_store::session_edits(std::string session_id) {
    return read_all(select_session_edits, session_edit_from, std::move(session_id));
}

net::awaitable<std::optional<session_edit_record>> sql_store::session_edit_of_call(
    std::string call_id) {
    return read_one(select_edit_of_call, session_edit_from, std::move(call_id));
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
                db.query(upsert_session,
                         {s.id, s.chat_id, s.kind, s.path, s.name, status_name(s.status),
                          s.base_existed, s.base_snapshot, s.ai_exists, s.ai_version, s.revision,
                          s.edit_count, s.created_at, s.updated_at, s.resolved_at});
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

}  // namespace gateway::store
