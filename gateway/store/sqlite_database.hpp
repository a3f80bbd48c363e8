#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/sql_driver.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace gateway::store {

// One SQLite connection in WAL mode with foreign keys on: the store's SQLite driver. Each query
// is expanded and prepared once, on first use, and reused. Not thread-safe: one thread owns it.
class sqlite_database final : public sql_connection {
public:
    enum class access { read_write, read_only };

    // Opens (creating it when `how` is read_write) and configures the database at `path`. A
    // read_write open applies the migrations (schema.hpp); the error names the file.
    static config::parsed<std::unique_ptr<sqlite_database>> open(const std::string& path,
                                                                 access how);
    ~sqlite_database() override;
    sqlite_database(const sqlite_database&) = delete;
    sqlite_database& operator=(const sqlite_database&) = delete;

    const sql_dialect& dialect() const override { return sqlite_dialect; }
    sql_rows query(const char* sql, std::initializer_list<sql_param> params = {}) override;
    void execute(const char* sql) override;
    void lock_schema() override {}  // BEGIN IMMEDIATE holds the file
    int schema_version() override;
    void set_schema_version(int version) override;

private:
    explicit sqlite_database(sqlite3* db) : db_(db) {}
    void begin() override;
    void commit() override;
    void rollback() override;
    sqlite3_stmt* prepared(const char* sql);
    [[noreturn]] void fail(std::string_view what);

    sqlite3* db_;
    std::unordered_map<const char*, sqlite3_stmt*> prepared_;
};

}  // namespace gateway::store
