#pragma once

#include "gateway/config/config.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

struct sqlite3;
struct sqlite3_stmt;

namespace gateway::store {

class sqlite_database;

// A prepared statement of a sqlite_database, handed out unbound and reset when it goes out of
// scope: a statement left on a row would keep its read transaction, and with it an old snapshot,
// open. Binds and reads by 1-based parameter and 0-based column. Failures throw store_error.
// Move-only.
class statement {
public:
    statement(statement&& other) noexcept
        : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}
    statement& operator=(statement&&) = delete;
    statement(const statement&) = delete;
    ~statement();

    statement& bind(int index, std::string_view text);
    statement& bind(int index, std::int64_t value);
    // true while there is a row to read; false when done.
    bool step();
    std::string text(int column);
    std::int64_t integer(int column);
    // Runs a statement that returns no rows.
    void run() {
        while (step()) {
        }
    }

private:
    friend class sqlite_database;
    statement(sqlite3* db, sqlite3_stmt* s) : db_(db), statement_(s) {}
    sqlite3* db_;
    sqlite3_stmt* statement_;
};

// One SQLite connection in WAL mode with foreign keys on and a cache of prepared statements:
// each SQL text is prepared once, on first use, and reused. Not thread-safe: one thread owns it.
class sqlite_database {
public:
    enum class access { read_write, read_only };

    // Opens (creating it when `how` is read_write) and configures the database at `path`. A
    // read_write open applies the migrations; the error names the file.
    static config::parsed<std::unique_ptr<sqlite_database>> open(const std::string& path,
                                                                 access how);
    ~sqlite_database();
    sqlite_database(const sqlite_database&) = delete;
    sqlite_database& operator=(const sqlite_database&) = delete;

    // The cached statement for `sql`, which must be a string with static storage (a literal):
    // its address is the cache key.
    statement query(const char* sql);
    // Runs SQL that takes no parameters and returns no rows (schema, pragmas).
    void execute(const char* sql);

    // Runs `work` in a transaction (BEGIN IMMEDIATE … COMMIT); rolls back and rethrows when it
    // throws.
    template <class Work>
    void transaction(Work&& work) {
        begin();
        try {
            work();
        } catch (...) {
            rollback();
            throw;
        }
        commit();
    }

    int schema_version();
    std::int64_t changes();
    std::int64_t last_insert_rowid();

private:
    explicit sqlite_database(sqlite3* db) : db_(db) {}
    void begin();
    void commit();
    void rollback();
    void migrate();

    sqlite3* db_;
    std::unordered_map<const char*, sqlite3_stmt*> prepared_;
};

// The schema version this build migrates to.
int latest_schema_version();

}  // namespace gateway::store
