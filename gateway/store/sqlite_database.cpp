#include "gateway/store/sqlite_database.hpp"

#include "gateway/store/schema.hpp"
#include "gateway/store/state_store.hpp"

#include <sqlite3.h>

namespace gateway::store {

namespace {

// Resets a statement when the query is done with it: a statement left on a row would keep its
// read transaction, and with it an old snapshot, open.
struct reset_on_exit {
    sqlite3_stmt* statement;
    ~reset_on_exit() {
        sqlite3_reset(statement);
        sqlite3_clear_bindings(statement);
    }
};

// octet_length(x): the bytes of a text, as PostgreSQL's (SQLite has it only from 3.43).
void octet_length(sqlite3_context* context, int, sqlite3_value** values) {
    sqlite3_result_int64(context, sqlite3_value_bytes(values[0]));
}

}  // namespace

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
        sqlite3_create_function(db, "octet_length", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                                octet_length, nullptr, nullptr);
        if (how == access::read_write) {
            database->execute("PRAGMA journal_mode=WAL");
            // In WAL mode NORMAL loses nothing on a process crash (SIGKILL), only on power loss.
            database->execute("PRAGMA synchronous=NORMAL");
            database->execute("PRAGMA foreign_keys=ON");
            migrate(*database);
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

void sqlite_database::fail(std::string_view what) {
    throw store_error("SQLite " + std::string(what) + ": " + sqlite3_errmsg(db_));
}

sqlite3_stmt* sqlite_database::prepared(const char* sql) {
    auto& slot = prepared_[sql];
    if (!slot) {
        auto text = expand_sql(sql, dialect());
        if (sqlite3_prepare_v3(db_, text.c_str(), static_cast<int>(text.size()),
                               SQLITE_PREPARE_PERSISTENT, &slot, nullptr) != SQLITE_OK) {
            prepared_.erase(sql);
            fail("prepare");
        }
    }
    return slot;
}

sql_rows sqlite_database::query(const char* sql, std::initializer_list<sql_param> params) {
    sqlite3_stmt* s = prepared(sql);
    reset_on_exit done{s};
    int index = 1;
    for (const auto& p : params) {
        int rc = SQLITE_OK;
        if (const auto* text = p.text())
            // SQLITE_STATIC: the text outlives the statement's use (reset before returning).
            rc = sqlite3_bind_text(s, index, text->data(), static_cast<int>(text->size()),
                                   SQLITE_STATIC);
        else if (const auto* number = p.number())
            rc = sqlite3_bind_int64(s, index, *number);
        else
            rc = sqlite3_bind_null(s, index);
        if (rc != SQLITE_OK) fail("bind");
        ++index;
    }
    int columns = sqlite3_column_count(s);
    sql_rows rows(columns);
    for (;;) {
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) {
            if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE) {
                // "UNIQUE constraint failed: runs.chat_id": the columns name the index.
                std::string message = sqlite3_errmsg(db_);
                auto colon = message.rfind(": ");
                throw unique_violation(colon == std::string::npos ? "" : message.substr(colon + 2),
                                       "SQLite step: " + message);
            }
            fail("step");
        }
        for (int c = 0; c < columns; ++c) {
            if (sqlite3_column_type(s, c) == SQLITE_NULL) {
                rows.add_null();
                continue;
            }
            auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, c));
            rows.add({p, static_cast<std::size_t>(sqlite3_column_bytes(s, c))});
        }
    }
    if (!sqlite3_stmt_readonly(s)) rows.set_affected(sqlite3_changes64(db_));
    return rows;
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
    return static_cast<int>(query("PRAGMA user_version").integer(0, 0));
}

void sqlite_database::set_schema_version(int version) {
    execute(("PRAGMA user_version=" + std::to_string(version)).c_str());
}

}  // namespace gateway::store
