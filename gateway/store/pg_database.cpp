#include "gateway/store/pg_database.hpp"

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

pg_rows::~pg_rows() {
    if (result_) PQclear(result_);
}

int pg_rows::size() const {
    return PQntuples(result_);
}

std::string pg_rows::text(int row, int column) const {
    return {PQgetvalue(result_, row, column),
            static_cast<std::size_t>(PQgetlength(result_, row, column))};
}

std::int64_t pg_rows::integer(int row, int column) const {
    const char* v = PQgetvalue(result_, row, column);
    auto length = static_cast<std::size_t>(PQgetlength(result_, row, column));
    std::int64_t out = 0;
    std::from_chars(v, v + length, out);
    return out;
}

bool pg_rows::is_null(int row, int column) const {
    return PQgetisnull(result_, row, column) != 0;
}

std::int64_t pg_rows::affected() const {
    std::string_view n = PQcmdTuples(result_);
    std::int64_t out = 0;
    std::from_chars(n.data(), n.data() + n.size(), out);
    return out;
}

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

pg_rows pg_database::query(const char* sql, std::initializer_list<pg_param> params) {
    reconnect_if_lost();
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats(params.size(), 0);
    for (const auto& p : params) {
        // libpq reads a text parameter up to its first NUL: refused, never cut (state_store.hpp).
        if (p.data()) check_stored_text({p.data(), static_cast<std::size_t>(p.size())});
        values.push_back(p.data());
        lengths.push_back(p.size());
    }
    PGresult* r = PQexecParams(conn_, sql, static_cast<int>(params.size()), nullptr, values.data(),
                               lengths.data(), formats.data(), 0);
    auto status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) fail(r, "query");
    return pg_rows(r);
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
