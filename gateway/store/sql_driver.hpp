#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

// The small database driver the one SQL store (sql_store.hpp) is written over: a query with
// parameters that returns rows, an exec, a transaction. SQLite (sqlite_database.hpp) and
// PostgreSQL (pg_database.hpp) implement it; what differs between their SQL is the dialect
// table below.
namespace gateway::store {

// What differs between the two databases' SQL, in one place. Queries are written once, with
// PostgreSQL's `$1` parameters and these tokens, and expanded per connection on first use:
//   {ord}   what orders a table's rows by insertion (SQLite's rowid; a bigserial `ord` column on
//           PostgreSQL, which has no rowid);
//   {lock}  the clause that locks the rows a read inside a transaction returns (SQLite's
//           BEGIN IMMEDIATE holds the whole database already).
// The rest of the differences are outside query text: the statement that announces committed
// events to the other replicas (NOTIFY, PostgreSQL only), claiming runs and the replicas'
// requests (pg_store.hpp: SQLite is one process), and the migrations list's text per database
// where types differ (schema.cpp).
struct sql_dialect {
    enum class kind { sqlite, postgres };
    kind which;
    // SQLite numbers parameters `?1`; it would read `$1` as a name.
    bool question_mark_parameters;
    std::string_view insertion_order;
    std::string_view row_lock;
    // Run once per transaction that wrote events, with one "<run id> <newest seq> <owner>" line
    // per run; none when no other process reads the database.
    const char* announce_events;
    // Run with a virtual key's id when it was made, changed or revoked (the other replicas'
    // key rings follow); none when no other process reads the database.
    const char* announce_keys;
};

inline constexpr sql_dialect sqlite_dialect{
    sql_dialect::kind::sqlite, true, "rowid", "", nullptr, nullptr};
inline constexpr sql_dialect postgres_dialect{sql_dialect::kind::postgres,
                                              false,
                                              "ord",
                                              " FOR UPDATE",
                                              "SELECT pg_notify('contextgate_events', line) "
                                              "FROM unnest(string_to_array($1, E'\\n')) AS line",
                                              "SELECT pg_notify('contextgate_keys', $1)"};

// `sql` (written for the store: `$1` parameters, {tokens}) in `dialect`.
std::string expand_sql(std::string_view sql, const sql_dialect& dialect);

// One parameter of a query: a text, a number or NULL. A text is viewed, not copied: the caller's
// string outlives the query (the store's lambdas own their arguments). A text holding a NUL is
// refused here, for both databases (check_stored_text in state_store.hpp).
class sql_param {
public:
    sql_param(std::string_view text);  // NOLINT: implicit on purpose, like the values it holds
    sql_param(const std::string& text) : sql_param(std::string_view(text)) {}  // NOLINT
    sql_param(const char* text) : sql_param(std::string_view(text)) {}         // NOLINT
    sql_param(std::int64_t value) : value_(value) {}                           // NOLINT
    sql_param(int value) : value_(std::int64_t{value}) {}                      // NOLINT
    sql_param(bool value) : value_(std::int64_t{value}) {}                     // NOLINT
    sql_param(std::nullopt_t) {}                                               // NOLINT
    template <class T>
    sql_param(const std::optional<T>& value)  // NOLINT
        : sql_param(value ? sql_param(*value) : sql_param(std::nullopt)) {}

    bool is_null() const { return std::holds_alternative<std::monostate>(value_); }
    const std::string_view* text() const { return std::get_if<std::string_view>(&value_); }
    const std::int64_t* number() const { return std::get_if<std::int64_t>(&value_); }

private:
    std::variant<std::monostate, std::int64_t, std::string_view> value_;
};

class sql_rows;

// Row `row` of a result, read by 0-based column (what record_rows.hpp's readers take). NULL
// reads as "" and 0.
class sql_row {
public:
    sql_row(const sql_rows& rows, std::size_t row) : rows_(rows), row_(row) {}
    std::string text(int column) const;
    std::int64_t integer(int column) const;

private:
    const sql_rows& rows_;
    std::size_t row_;
};

// What a query returned: its rows, read whole (a driver steps to the end before handing them
// over, so no statement is left open), and the rows an INSERT, UPDATE or DELETE touched.
class sql_rows {
public:
    explicit sql_rows(int columns = 0) : columns_(columns) {}

    std::size_t size() const { return columns_ ? cells_.size() / columns_ : 0; }
    bool empty() const { return size() == 0; }
    sql_row operator[](std::size_t row) const { return {*this, row}; }
    std::string_view text(std::size_t row, int column) const { return cells_[at(row, column)]; }
    std::int64_t integer(std::size_t row, int column) const;
    bool is_null(std::size_t row, int column) const { return nulls_[at(row, column)]; }
    std::int64_t affected() const { return affected_; }

    // For drivers: cells row by row, column by column.
    void add(std::string_view text) {
        cells_.emplace_back(text);
        nulls_.push_back(false);
    }
    void add_null() {
        cells_.emplace_back();
        nulls_.push_back(true);
    }
    void set_affected(std::int64_t n) { affected_ = n; }

private:
    std::size_t at(std::size_t row, int column) const { return row * columns_ + column; }
    int columns_;
    std::vector<std::string> cells_;
    std::vector<bool> nulls_;
    std::int64_t affected_ = 0;
};

inline std::string sql_row::text(int column) const {
    return std::string(rows_.text(row_, column));
}

inline std::int64_t sql_row::integer(int column) const {
    return rows_.integer(row_, column);
}

// One connection, owned by one thread (store_thread.hpp). Failures throw store_error (a unique
// index refusing a row: unique_violation).
class sql_connection {
public:
    virtual ~sql_connection() = default;

    virtual const sql_dialect& dialect() const = 0;

    // One statement, written for the store (see sql_dialect), with `params` bound to $1, $2…
    // `sql` must have static storage (a literal): its address keys the connection's cache of
    // expanded (and, where the database has them, prepared) statements.
    virtual sql_rows query(const char* sql, std::initializer_list<sql_param> params = {}) = 0;
    // SQL without parameters, possibly several statements (schema, pragmas); not expanded.
    virtual void execute(const char* sql) = 0;

    // Runs `work` in a transaction; rolls back and rethrows when it throws.
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

    // The schema's version (0: none yet). Inside a transaction, lock_schema() first makes the
    // version's home exist and keeps other processes from migrating at the same time.
    virtual void lock_schema() = 0;
    virtual int schema_version() = 0;
    virtual void set_schema_version(int version) = 0;

protected:
    virtual void begin() = 0;
    virtual void commit() = 0;
    virtual void rollback() = 0;  // never throws
};

}  // namespace gateway::store
