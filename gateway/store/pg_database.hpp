#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/sql_driver.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

struct pg_conn;
struct pg_result;

namespace gateway::store {

// One PostgreSQL connection (libpq, blocking): the store's PostgreSQL driver, owned by one
// thread. Failures throw store_error; a lost connection is re-established on the next call (the
// failed call is not retried: it may have committed).
class pg_database final : public sql_connection {
public:
    static config::parsed<std::unique_ptr<pg_database>> open(const std::string& dsn);
    ~pg_database() override;
    pg_database(const pg_database&) = delete;
    pg_database& operator=(const pg_database&) = delete;

    const sql_dialect& dialect() const override { return postgres_dialect; }
    sql_rows query(const char* sql, std::initializer_list<sql_param> params = {}) override;
    void execute(const char* sql) override;
    // Creates the version's table and takes a transaction-wide advisory lock.
    void lock_schema() override;
    int schema_version() override;
    void set_schema_version(int version) override;

    // For a listening connection: its socket, and the notifications that arrived (after
    // consume()). consume() is false when the connection is lost.
    int socket() const;
    bool consume();
    // The next notification's channel and payload, if one is waiting.
    std::optional<std::pair<std::string, std::string>> next_notification();

private:
    explicit pg_database(pg_conn* c) : conn_(c) {}
    void begin() override { execute("BEGIN"); }
    void commit() override { execute("COMMIT"); }
    void rollback() override;
    void reconnect_if_lost();
    [[noreturn]] void fail(pg_result* r, std::string_view what);
    pg_conn* conn_;
    // Each query expanded for PostgreSQL once, keyed by its literal's address.
    std::unordered_map<const char*, std::string> expanded_;
};

}  // namespace gateway::store
