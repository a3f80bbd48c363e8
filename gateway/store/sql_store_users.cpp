// sql_store's users, their sessions and the sign-ins under way.
#include "gateway/store/sql_store.hpp"

#include "gateway/ids.hpp"
#include "gateway/store/record_rows.hpp"

namespace gateway::store {

namespace {

#define USER_COLUMNS "id, issuer, subject, email, name, role, team, created_at, signed_in_at"
user_record user_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.text(2),    r.text(3),   r.text(4),
            r.text(5), r.text(6), r.integer(7), r.integer(8)};
}

#define SESSION_USER_COLUMNS                                                                  \
    "s.id_digest, s.user_id, s.csrf, s.created_at, s.seen_at, s.expires_at, u.id, u.issuer, " \
    "u.subject, u.email, u.name, u.role, u.team, u.created_at, u.signed_in_at"
signed_in_user session_user_from(const sql_row& r) {
    return {{r.text(0), r.text(1), r.text(2), r.integer(3), r.integer(4), r.integer(5)},
            {r.text(6), r.text(7), r.text(8), r.text(9), r.text(10), r.text(11), r.text(12),
             r.integer(13), r.integer(14)}};
}

#define LOGIN_COLUMNS "state, nonce, verifier, return_to, expires_at"
pending_login login_from(const sql_row& r) {
    return {r.text(0), r.text(1), r.text(2), r.text(3), r.integer(4)};
}

// A session's last use is written at most this often: a request's lookup is a read, not a
// write, and the idle lifetime (hours) does not need a finer clock.
constexpr std::int64_t seen_resolution_ms = 60'000;

// Queries as sql_store.cpp says: literals, written once for both databases.
constexpr const char* select_user_by_subject =
    "SELECT " USER_COLUMNS " FROM users WHERE issuer = $1 AND subject = $2";
constexpr const char* insert_user =
    "INSERT INTO users (" USER_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)";
// A NULL role or team keeps the stored one.
constexpr const char* refresh_user =
    "UPDATE users SET email = $2, name = $3, role = coalesce($4, role), "
    "team = coalesce($5, team), signed_in_at = $6 WHERE id = $1";
constexpr const char* select_user = "SELECT " USER_COLUMNS " FROM users WHERE id = $1";
constexpr const char* select_users = "SELECT " USER_COLUMNS " FROM users ORDER BY created_at, id";
constexpr const char* update_user_sql =
    "UPDATE users SET role = coalesce($2, role), team = coalesce($3, team) WHERE id = $1";
constexpr const char* drop_ended_sessions = "DELETE FROM sessions WHERE expires_at <= $1";
constexpr const char* insert_session =
    "INSERT INTO sessions (id_digest, user_id, csrf, created_at, seen_at, expires_at) "
    "VALUES ($1, $2, $3, $4, $4, $5)";
constexpr const char* select_session_user =
    "SELECT " SESSION_USER_COLUMNS
    " FROM sessions s JOIN users u ON u.id = s.user_id "
    "WHERE s.id_digest = $1 AND s.expires_at > CAST($2 AS BIGINT) "
    "AND s.seen_at > CAST($2 AS BIGINT) - CAST($3 AS BIGINT)";
constexpr const char* mark_session_seen =
    "UPDATE sessions SET seen_at = $2 WHERE id_digest = $1 AND seen_at < $2";
constexpr const char* delete_session = "DELETE FROM sessions WHERE id_digest = $1";
constexpr const char* drop_expired_logins = "DELETE FROM login_states WHERE expires_at <= $1";
constexpr const char* insert_login =
    "INSERT INTO login_states (" LOGIN_COLUMNS ") VALUES ($1, $2, $3, $4, $5)";
constexpr const char* take_login_sql =
    "DELETE FROM login_states WHERE state = $1 RETURNING " LOGIN_COLUMNS;

}  // namespace

net::awaitable<user_record> sql_store::sign_in_user(user_sign_in who) {
    auto work = [who = std::move(who)](sql_connection& db) {
        user_record user;
        db.transaction([&] {
            auto now = now_ms();
            auto known =
                one_row(db.query(select_user_by_subject, {who.issuer, who.subject}), user_from);
            if (!known) {
                user = {new_id("user"),
                        who.issuer,
                        who.subject,
                        who.email,
                        who.name,
                        who.role.value_or(who.default_role),
                        who.team.value_or(""),
                        now,
                        now};
                db.query(insert_user, {user.id, user.issuer, user.subject, user.email, user.name,
                                       user.role, user.team, now});
                return;
            }
            db.query(refresh_user, {known->id, who.email, who.name, who.role, who.team, now});
            user = *one_row(db.query(select_user, {known->id}), user_from);
        });
        return user;
    };
    auto user = co_await write(std::move(work));
    co_return user;
}

net::awaitable<std::optional<user_record>> sql_store::user(std::string id) {
    return read_one(select_user, user_from, std::move(id));
}

net::awaitable<std::vector<user_record>> sql_store::users() {
    return read_all(select_users, user_from);
}

net::awaitable<bool> sql_store::update_user(std::string id, std::optional<std::string> role,
                                            std::optional<std::string> team) {
    return write_changes(update_user_sql, std::move(id), std::move(role), std::move(team));
}

net::awaitable<void> sql_store::start_user_session(user_session_record session) {
    auto work = [s = std::move(session)](sql_connection& db) {
        db.transaction([&] {
            db.query(drop_ended_sessions, {s.created_at});
            db.query(insert_session, {s.id_digest, s.user_id, s.csrf, s.created_at, s.expires_at});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::optional<signed_in_user>> sql_store::user_session(std::string id_digest,
                                                                      std::int64_t now,
                                                                      std::int64_t idle_ms) {
    auto found = co_await read_one(select_session_user, session_user_from, id_digest, now, idle_ms);
    if (found && found->session.seen_at + seen_resolution_ms <= now) {
        co_await write_changes(mark_session_seen, std::move(id_digest), now);
        found->session.seen_at = now;
    }
    co_return found;
}

net::awaitable<bool> sql_store::end_user_session(std::string id_digest) {
    return write_changes(delete_session, std::move(id_digest));
}

net::awaitable<void> sql_store::save_login(pending_login login) {
    auto work = [l = std::move(login)](sql_connection& db) {
        db.transaction([&] {
            db.query(drop_expired_logins, {now_ms()});
            db.query(insert_login, {l.state, l.nonce, l.verifier, l.return_to, l.expires_at});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::optional<pending_login>> sql_store::take_login(std::string state,
                                                                   std::int64_t now) {
    auto work = [state = std::move(state)](sql_connection& db) {
        return one_row(db.query(take_login_sql, {state}), login_from);
    };
    auto taken = co_await write(std::move(work));
    if (taken && taken->expires_at <= now) taken.reset();
    co_return taken;
}

}  // namespace gateway::store
