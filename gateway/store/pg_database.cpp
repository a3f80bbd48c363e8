#include "gateway/store/pg_database.hpp"

#include "gateway/store/state_store.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <vector>

namespace gateway::store {

namespace {

// SQLSTATE of a unique index refusing a row.
constexpr std::string_view unique_violation_state = "23505";

std::string connection_error(PGconn* c) {
    std::string text = c ? PQerrorMessage(c) : "out of memory";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

}  // namespace

config::parsed<std::unique_ptr<pg_database>> pg_database::open(const std::string& dsn) {
    using result = config::parsed<std::unique_ptr<pg_database>>;
    PGconn* c = PQconnectdb(dsn.c_str());
    if (!c || PQstatus(c) != CONNECTION_OK) {
        auto why = connection_error(c);
        if (c) PQfinish(c);
        return result::fail("cannot connect to PostgreSQL (context.store.dsn): " + why);
    }
    // Notices (e.g. "relation already exists, skipping") are not the gateway's log lines.
    PQsetNoticeProcessor(
        c, [](void*, const char*) {}, nullptr);
    return {std::unique_ptr<pg_database>(new pg_database(c)), {}};
}

pg_database::~pg_database() {
    PQfinish(conn_);
}

void pg_database::reconnect_if_lost() {
    if (PQstatus(conn_) == CONNECTION_OK) return;
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK)
        throw store_error("PostgreSQL connection lost: " + connection_error(conn_));
}

void pg_database::fail(PGresult* r, std::string_view what) {
    std::string message = "PostgreSQL " + std::string(what) + ": ";
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const char* constraint = r ? PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME) : nullptr;
    message += r ? PQresultErrorMessage(r) : "";
    if (!r || !*PQresultErrorMessage(r)) message += connection_error(conn_);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    bool unique = state && state == unique_violation_state;
    std::string name = constraint ? constraint : "";
    if (r) PQclear(r);
    if (unique) throw unique_violation(name, message);
    throw store_error(message);
}

sql_rows pg_database::query(const char* sql, std::initializer_list<sql_param> params) {
    reconnect_if_lost();
    auto& text = expanded_[sql];
    if (text.empty()) text = expand_sql(sql, dialect());
    // Text parameters reach libpq as C strings (it reads them up to their NUL): each one owned
    // and terminated here, whatever view the caller holds.
    std::vector<std::string> owned;
    owned.reserve(params.size());
    std::vector<const char*> values;
    for (const auto& p : params) {
        if (const auto* t = p.text())
            owned.emplace_back(*t);
        else if (const auto* n = p.number())
            owned.push_back(std::to_string(*n));
        else
            owned.emplace_back();
    }
    for (const auto& p : params)
        values.push_back(p.is_null() ? nullptr : owned[values.size()].c_str());
    PGresult* r = PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) fail(r, "query");
    int columns = PQnfields(r);
    sql_rows rows(columns);
    for (int row = 0, n = PQntuples(r); row < n; ++row)
        for (int column = 0; column < columns; ++column) {
            if (PQgetisnull(r, row, column)) {
                rows.add_null();
                continue;
            }
            rows.add({PQgetvalue(r, row, column),
                      static_cast<std::size_t>(PQgetlength(r, row, column))});
        }
    std::string_view affected = PQcmdTuples(r);
    std::int64_t n = 0;
    std::from_chars(affected.data(), affected.data() + affected.size(), n);
    rows.set_affected(n);
    PQclear(r);
    return rows;
}

void pg_database::execute(const char* sql) {
    reconnect_if_lost();
    PGresult* r = PQexec(conn_, sql);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) fail(r, "statement");
    PQclear(r);
}

void pg_database::rollback() {
    if (PQstatus(conn_) != CONNECTION_OK) return;  // the server rolled it back
    if (PGresult* r = PQexec(conn_, "ROLLBACK")) PQclear(r);
}

void pg_database::lock_schema() {
    query("SELECT pg_advisory_xact_lock(7243051)");
    execute("CREATE TABLE IF NOT EXISTS contextgate_schema (version INTEGER NOT NULL)");
}

int pg_database::schema_version() {
    auto current = query("SELECT version FROM contextgate_schema");
    return current.empty() ? 0 : static_cast<int>(current.integer(0, 0));
}

void pg_database::set_schema_version(int version) {
    query("DELETE FROM contextgate_schema");
    query("INSERT INTO contextgate_schema (version) VALUES ($1)", {version});
}

int pg_database::socket() const {
    return PQsocket(conn_);
}

bool pg_database::consume() {
    return PQconsumeInput(conn_) == 1 && PQstatus(conn_) == CONNECTION_OK;
}

std::optional<std::pair<std::string, std::string>> pg_database::next_notification() {
    PGnotify* n = PQnotifies(conn_);
    if (!n) return std::nullopt;
    std::pair<std::string, std::string> out{n->relname, n->extra};
    PQfreemem(n);
    return out;
}

}  // namespace gateway::store
