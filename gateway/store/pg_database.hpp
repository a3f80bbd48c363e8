#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/state_store.hpp"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

struct pg_conn;
struct pg_result;

namespace gateway::store {

// One parameter of a query, in libpq's text format: a string, a number or NULL.
class pg_param {
public:
    pg_param(std::string_view text) : text_(text) {}  // NOLINT: implicit on purpose
    pg_param(const std::string& text) : text_(text) {}
    pg_param(const char* text) : text_(text) {}
    pg_param(std::int64_t value) : number_(std::to_string(value)) {}
    pg_param(int value) : number_(std::to_string(value)) {}
    pg_param(bool value) : text_(value ? "true" : "false") {}
    pg_param(std::nullopt_t) : null_(true) {}
    const char* data() const { return null_ ? nullptr : number_ ? number_->c_str() : text_.data(); }
    int size() const { return static_cast<int>(number_ ? number_->size() : text_.size()); }

private:
    std::string_view text_;
    std::optional<std::string> number_;
    bool null_ = false;
};

// The rows a query returned. Reads by 0-based row and column; NULL reads as "" and 0.
class pg_rows {
public:
    explicit pg_rows(pg_result* r) : result_(r) {}
    pg_rows(pg_rows&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
    pg_rows& operator=(pg_rows&&) = delete;
    pg_rows(const pg_rows&) = delete;
    ~pg_rows();

    int size() const;
    bool empty() const { return size() == 0; }
    std::string text(int row, int column) const;
    std::int64_t integer(int row, int column) const;
    bool is_null(int row, int column) const;
    // Rows an INSERT, UPDATE or DELETE touched.
    std::int64_t affected() const;

private:
    pg_result* result_;
};

// Row `row` of a result, read by column (what record_rows.hpp's readers take).
class pg_row {
public:
    pg_row(const pg_rows& rows, int row) : rows_(rows), row_(row) {}
    std::string text(int column) const { return rows_.text(row_, column); }
    std::int64_t integer(int column) const { return rows_.integer(row_, column); }

private:
    const pg_rows& rows_;
    int row_;
};

// One PostgreSQL connection (libpq, blocking): owned by one thread. Failures throw store_error;
// a lost connection is re-established on the next call (the failed call is not retried: it may
// have committed).
class pg_database {
public:
    static config::parsed<std::unique_ptr<pg_database>> open(const std::string& dsn);
    ~pg_database();
    pg_database(const pg_database&) = delete;
    pg_database& operator=(const pg_database&) = delete;

    // One statement with $1, $2… bound to `params` (types inferred by the server).
    pg_rows query(const char* sql, std::initializer_list<pg_param> params = {});
    // SQL without parameters, possibly several statements (schema).
    void execute(const char* sql);
    // Runs `work` between BEGIN and COMMIT; rolls back and rethrows when it throws.
    template <class Work>
    void transaction(Work&& work) {
        execute("BEGIN");
        try {
            work();
        } catch (...) {
            rollback();
            throw;
        }
        execute("COMMIT");
    }

    // For a listening connection: its socket, and the notifications that arrived (after
    // consume()). consume() is false when the connection is lost.
    int socket() const;
    bool consume();
    // The next notification's channel and payload, if one is waiting.
    std::optional<std::pair<std::string, std::string>> next_notification();

private:
    explicit pg_database(pg_conn* c) : conn_(c) {}
    void reconnect_if_lost();
    void rollback();
    [[noreturn]] void fail(pg_result* r, std::string_view what);
    pg_conn* conn_;
};

}  // namespace gateway::store
