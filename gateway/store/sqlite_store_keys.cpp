// sqlite_store's virtual keys and token usage (migration 7): the operations side of the store,
// beside the Context API's state in sqlite_store.cpp.
#include "gateway/store/record_rows.hpp"
#include "gateway/store/sqlite_database.hpp"
#include "gateway/store/sqlite_store.hpp"

namespace gateway::store {

namespace {

#define KEY_COLUMNS                                                                    \
    "id, name, digest, models, rpm, tpm, max_parallel, budget_tokens, budget_period, " \
    "expires_at, created_at, revoked_at"
constexpr const char* upsert_key =
    "INSERT INTO virtual_keys (" KEY_COLUMNS
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
    "?11, 0) ON CONFLICT(id) DO UPDATE SET name = excluded.name, models = excluded.models, "
    "rpm = excluded.rpm, tpm = excluded.tpm, max_parallel = excluded.max_parallel, "
    "budget_tokens = excluded.budget_tokens, budget_period = excluded.budget_period, "
    "expires_at = excluded.expires_at";
constexpr const char* select_keys =
    "SELECT " KEY_COLUMNS " FROM virtual_keys ORDER BY created_at, id";
#undef KEY_COLUMNS
constexpr const char* revoke_key_sql =
    "UPDATE virtual_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at = 0";
constexpr const char* add_usage_sql =
    "INSERT INTO usage_daily (day, key_id, model, upstream, requests, input_tokens, "
    "output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(day, key_id, model, upstream) "
    "DO UPDATE SET requests = requests + excluded.requests, "
    "input_tokens = input_tokens + excluded.input_tokens, "
    "output_tokens = output_tokens + excluded.output_tokens";
constexpr const char* select_usage =
    "SELECT CASE WHEN ?5 THEN day ELSE '' END AS d, key_id, model, SUM(requests), "
    "SUM(input_tokens), SUM(output_tokens) FROM usage_daily "
    "WHERE (?1 = '' OR key_id = ?1) AND (?2 = '' OR model = ?2) AND day >= ?3 AND day <= ?4 "
    "GROUP BY d, key_id, model ORDER BY d, key_id, model";

key_record read_key(statement& s) {
    return key_from(s);
}

}  // namespace

net::awaitable<void> sqlite_store::save_key(key_record key) {
    auto work = [key = std::move(key)](sqlite_database& db) {
        db.query(upsert_key)
            .bind(1, key.id)
            .bind(2, key.name)
            .bind(3, key.digest)
            .bind(4, key.models)
            .bind(5, key.rpm)
            .bind(6, key.tpm)
            .bind(7, key.max_parallel)
            .bind(8, key.budget_tokens)
            .bind(9, key.budget_period)
            .bind(10, key.expires_at)
            .bind(11, key.created_at ? key.created_at : now_ms())
            .run();
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<key_record>> sqlite_store::keys() {
    auto work = [](sqlite_database& db) {
        std::vector<key_record> keys;
        auto s = db.query(select_keys);
        while (s.step()) keys.push_back(read_key(s));
        return keys;
    };
    auto all = co_await read(std::move(work));
    co_return all;
}

net::awaitable<bool> sqlite_store::revoke_key(std::string id) {
    auto work = [id = std::move(id)](sqlite_database& db) {
        db.query(revoke_key_sql).bind(1, id).bind(2, now_ms()).run();
        return db.changes() > 0;
    };
    auto revoked = co_await write(std::move(work));
    co_return revoked;
}

net::awaitable<void> sqlite_store::add_usage(std::vector<usage_row> rows) {
    auto work = [rows = std::move(rows)](sqlite_database& db) {
        db.transaction([&] {
            for (const auto& r : rows)
                db.query(add_usage_sql)
                    .bind(1, r.day)
                    .bind(2, r.key_id)
                    .bind(3, r.model)
                    .bind(4, r.upstream)
                    .bind(5, r.requests)
                    .bind(6, r.input_tokens)
                    .bind(7, r.output_tokens)
                    .run();
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<usage_row>> sqlite_store::usage(usage_query query) {
    auto work = [query = std::move(query)](sqlite_database& db) {
        auto s = db.query(select_usage);
        s.bind(1, query.key_id)
            .bind(2, query.model)
            .bind(3, query.from_day)
            .bind(4, query.to_day)
            .bind(5, std::int64_t(query.by_day));
        std::vector<usage_row> rows;
        while (s.step()) rows.push_back(usage_from(s));
        return rows;
    };
    auto rows = co_await read(std::move(work));
    co_return rows;
}

}  // namespace gateway::store
