// sql_store's teams and audit log.
#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <limits>

namespace gateway::store {

namespace {

namespace json = boost::json;

#define TEAM_COLUMNS "name, budget_usd_nano, budget_period, models, created_at"
team_record team_from(const sql_row& r) {
    team_record record;
    auto& t = record.team;
    t.name = r.text(0);
    t.budget_usd_nano = static_cast<std::uint64_t>(std::max<std::int64_t>(r.integer(1), 0));
    auto period = config::budget_period_of(r.text(2));
    if (!period)
        throw store_error("the stored team " + t.name + " has the budget period `" + r.text(2) +
                          "`, not day, week or month");
    t.budget_period = *period;
    boost::system::error_code ec;
    auto models = json::parse(r.text(3), ec);
    if (ec || !models.is_array())
        throw store_error("the stored team " + t.name +
                          " has models that are not a JSON list of strings");
    t.models.clear();
    for (const auto& m : models.get_array()) {
        if (!m.is_string())
            throw store_error("the stored team " + t.name +
                              " has models that are not a JSON list of strings");
        t.models.emplace_back(m.get_string());
    }
    record.created_at = r.integer(4);
    return record;
}

#define AUDIT_COLUMNS "id, at, actor, actor_role, action, target, team, detail, remote"
audit_record audit_from(const sql_row& r) {
    return {r.integer(0), r.integer(1), r.text(2), r.text(3), r.text(4),
            r.text(5),    r.text(6),    r.text(7), r.text(8)};
}

// Queries as sql_store.cpp says: literals, written once for both databases.
constexpr const char* upsert_team =
    "INSERT INTO teams (" TEAM_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO "
    "UPDATE SET budget_usd_nano = excluded.budget_usd_nano, budget_period = "
    "excluded.budget_period, models = excluded.models";
constexpr const char* select_teams = "SELECT " TEAM_COLUMNS " FROM teams ORDER BY name";
constexpr const char* delete_team_sql = "DELETE FROM teams WHERE name = $1";
constexpr const char* insert_audit =
    "INSERT INTO audit_log (at, actor, actor_role, action, target, team, detail, remote) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
// The casts tell PostgreSQL the parameters' types (it cannot infer them from `$1 = ''`).
constexpr const char* select_audit =
    "SELECT " AUDIT_COLUMNS
    " FROM audit_log WHERE (CAST($1 AS TEXT) = '' OR actor = CAST($1 AS TEXT)) "
    "AND (CAST($2 AS TEXT) = '' OR action = CAST($2 AS TEXT)) "
    "AND (CAST($3 AS TEXT) = '' OR target = CAST($3 AS TEXT)) "
    "AND (CAST($4 AS TEXT) = '' OR team = CAST($4 AS TEXT)) "
    "AND at >= CAST($5 AS BIGINT) AND at <= CAST($6 AS BIGINT) "
    "ORDER BY id DESC LIMIT CAST($7 AS BIGINT)";

}  // namespace

net::awaitable<void> sql_store::save_team(team_record team) {
    json::array models;
    for (const auto& m : team.team.models) models.emplace_back(m);
    auto work = [team = std::move(team), models = json::serialize(models)](sql_connection& db) {
        const auto& t = team.team;
        db.transaction([&] {
            db.query(upsert_team, {t.name, static_cast<std::int64_t>(t.budget_usd_nano),
                                   config::budget_period_name(t.budget_period), models,
                                   team.created_at ? team.created_at : now_ms()});
            // The other replicas read the keys and teams again on commit, as for a key.
            if (const char* announce = db.dialect().announce_keys) db.query(announce, {t.name});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<team_record>> sql_store::teams() {
    return read_all(select_teams, team_from);
}

net::awaitable<bool> sql_store::delete_team(std::string name) {
    auto work = [name = std::move(name)](sql_connection& db) {
        bool deleted = false;
        db.transaction([&] {
            deleted = db.query(delete_team_sql, {name}).affected() > 0;
            if (const char* announce = db.dialect().announce_keys; announce && deleted)
                db.query(announce, {name});
        });
        return deleted;
    };
    auto deleted = co_await write(std::move(work));
    co_return deleted;
}

net::awaitable<void> sql_store::append_audit(audit_record r) {
    auto work = [r = std::move(r)](sql_connection& db) {
        db.query(insert_audit, {r.at ? r.at : now_ms(), r.actor, r.actor_role, r.action, r.target,
                                r.team, r.detail, r.remote});
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<audit_record>> sql_store::audit(audit_query q) {
    auto to = q.to ? q.to : std::numeric_limits<std::int64_t>::max();
    return read_all(select_audit, audit_from, std::move(q.actor), std::move(q.action),
                    std::move(q.target), std::move(q.team), q.from, to, q.limit);
}

}  // namespace gateway::store
