// sql_store's virtual keys and token usage.
#include "gateway/store/sql_store.hpp"

#include "gateway/store/record_rows.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::store {

namespace {

namespace json = boost::json;

// A key's models as the row keeps them: a JSON array of globs.
std::string models_text(const std::vector<std::string>& models) {
    json::array out;
    for (const auto& m : models) out.emplace_back(m);
    return json::serialize(out);
}

// The row's models; text that is not a JSON array of strings is a corrupt row, refused rather
// than read as no restriction.
std::vector<std::string> models_of(const std::string& key_id, const std::string& text) {
    boost::system::error_code ec;
    auto parsed = json::parse(text, ec);
    std::vector<std::string> out;
    if (!ec && parsed.is_array()) {
        for (const auto& m : parsed.get_array()) {
            if (!m.is_string()) break;
            out.emplace_back(m.get_string());
        }
        if (out.size() == parsed.get_array().size()) return out;
    }
    throw store_error("the stored virtual key " + key_id +
                      " has models that are not a JSON list of strings");
}

// The readers' column list and the reader, in its order (as record_rows.hpp does for the rest).
#define KEY_COLUMNS                                                                    \
    "id, name, digest, models, rpm, tpm, max_parallel, budget_tokens, budget_period, " \
    "expires_at, created_at, revoked_at, budget_usd_nano, team, owner_user"
key_record key_from(const sql_row& r) {
    key_record record;
    auto& k = record.key;
    k.id = r.text(0);
    k.name = r.text(1);
    k.digest = r.text(2);
    k.models = models_of(k.id, r.text(3));
    k.rpm = static_cast<std::uint64_t>(r.integer(4));
    k.tpm = static_cast<std::uint64_t>(r.integer(5));
    k.max_parallel = static_cast<std::uint64_t>(r.integer(6));
    k.budget_tokens = static_cast<std::uint64_t>(r.integer(7));
    auto period = config::budget_period_of(r.text(8));
    if (!period)
        throw store_error("the stored virtual key " + k.id + " has the budget period `" +
                          r.text(8) + "`, not day, week or month");
    k.budget_period = *period;
    k.expires_at = r.integer(9);
    k.created_at = r.integer(10);
    record.revoked_at = r.integer(11);
    k.budget_usd_nano = static_cast<std::uint64_t>(std::max<std::int64_t>(r.integer(12), 0));
    k.team = r.text(13);
    k.user = r.text(14);
    return record;
}

// Queries as sql_store.cpp says: literals, written once for both databases.
constexpr const char* upsert_key =
    "INSERT INTO virtual_keys (" KEY_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $12, $13, $14) ON CONFLICT (id) "
    "DO UPDATE SET name = excluded.name, models = excluded.models, rpm = excluded.rpm, "
    "tpm = excluded.tpm, max_parallel = excluded.max_parallel, "
    "budget_tokens = excluded.budget_tokens, budget_period = excluded.budget_period, "
    "expires_at = excluded.expires_at, budget_usd_nano = excluded.budget_usd_nano, "
    "team = excluded.team, owner_user = excluded.owner_user";
constexpr const char* select_keys =
    "SELECT " KEY_COLUMNS " FROM virtual_keys ORDER BY created_at, id";
constexpr const char* revoke_key_sql =
    "UPDATE virtual_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0";
constexpr const char* add_usage_sql =
    "INSERT INTO usage_daily (day, key_id, model, upstream, requests, input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, usd_nano, "
    "unpriced_requests, estimated_requests, cache_hits, saved_usd_nano) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) "
    "ON CONFLICT (day, key_id, model, upstream) DO UPDATE SET "
    "requests = usage_daily.requests + excluded.requests, "
    "input_tokens = usage_daily.input_tokens + excluded.input_tokens, "
    "output_tokens = usage_daily.output_tokens + excluded.output_tokens, "
    "cache_read_tokens = usage_daily.cache_read_tokens + excluded.cache_read_tokens, "
    "cache_write_tokens = usage_daily.cache_write_tokens + excluded.cache_write_tokens, "
    "reasoning_tokens = usage_daily.reasoning_tokens + excluded.reasoning_tokens, "
    "usd_nano = usage_daily.usd_nano + excluded.usd_nano, "
    "unpriced_requests = usage_daily.unpriced_requests + excluded.unpriced_requests, "
    "estimated_requests = usage_daily.estimated_requests + excluded.estimated_requests, "
    "cache_hits = usage_daily.cache_hits + excluded.cache_hits, "
    "saved_usd_nano = usage_daily.saved_usd_nano + excluded.saved_usd_nano";
// One query for every grouping: a dimension the report is not per reads '' in every row, so
// those rows sum into one. The casts tell PostgreSQL the parameters' types (it cannot infer them
// from `$1 = ''`).
constexpr const char* select_usage =
    "SELECT CASE WHEN CAST($6 AS BIGINT) <> 0 THEN day ELSE '' END AS d, "
    "CASE WHEN CAST($7 AS BIGINT) <> 0 THEN key_id ELSE '' END AS k, "
    "CASE WHEN CAST($8 AS BIGINT) <> 0 THEN model ELSE '' END AS m, "
    "CASE WHEN CAST($9 AS BIGINT) <> 0 THEN upstream ELSE '' END AS u, "
    "SUM(requests), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), "
    "SUM(cache_write_tokens), SUM(reasoning_tokens), SUM(usd_nano), SUM(unpriced_requests), "
    "SUM(estimated_requests), SUM(cache_hits), SUM(saved_usd_nano) FROM usage_daily "
    "WHERE (CAST($1 AS TEXT) = '' OR key_id = CAST($1 AS TEXT)) "
    "AND (CAST($2 AS TEXT) = '' OR model = CAST($2 AS TEXT)) "
    "AND (CAST($3 AS TEXT) = '' OR upstream = CAST($3 AS TEXT)) "
    "AND day >= CAST($4 AS TEXT) AND day <= CAST($5 AS TEXT) "
    "GROUP BY d, k, m, u ORDER BY d, k, m, u";

}  // namespace

net::awaitable<void> sql_store::save_key(config::virtual_key key) {
    auto work = [key = std::move(key)](sql_connection& db) {
        const auto& k = key;
        auto models = models_text(k.models);
        db.transaction([&] {
            db.query(upsert_key,
                     {k.id, k.name, k.digest, models, static_cast<std::int64_t>(k.rpm),
                      static_cast<std::int64_t>(k.tpm), static_cast<std::int64_t>(k.max_parallel),
                      static_cast<std::int64_t>(k.budget_tokens),
                      std::string(config::budget_period_name(k.budget_period)), k.expires_at,
                      k.created_at ? k.created_at : now_ms(),
                      static_cast<std::int64_t>(k.budget_usd_nano), k.team, k.user});
            // The other replicas hear of it on commit.
            if (const char* announce = db.dialect().announce_keys) db.query(announce, {k.id});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<key_record>> sql_store::keys() {
    return read_all(select_keys, key_from);
}

net::awaitable<bool> sql_store::revoke_key(std::string id) {
    auto work = [id = std::move(id)](sql_connection& db) {
        bool revoked = false;
        db.transaction([&] {
            revoked = db.query(revoke_key_sql, {id, now_ms()}).affected() > 0;
            if (const char* announce = db.dialect().announce_keys; announce && revoked)
                db.query(announce, {id});
        });
        return revoked;
    };
    auto revoked = co_await write(std::move(work));
    co_return revoked;
}

net::awaitable<void> sql_store::add_usage(std::vector<usage_row> rows) {
    auto work = [rows = std::move(rows)](sql_connection& db) {
        db.transaction([&] {
            for (const auto& r : rows)
                db.query(add_usage_sql,
                         {r.day, r.key_id, r.model, r.upstream, r.requests, r.input_tokens,
                          r.output_tokens, r.cache_read_tokens, r.cache_write_tokens,
                          r.reasoning_tokens, r.usd_nano, r.unpriced_requests, r.estimated_requests,
                          r.cache_hits, r.saved_usd_nano});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<usage_row>> sql_store::usage(usage_query query) {
    return read_all(select_usage, usage_from, std::move(query.key_id), std::move(query.model),
                    std::move(query.upstream), std::move(query.from_day), std::move(query.to_day),
                    query.by_day, query.by_key, query.by_model, query.by_upstream);
}

}  // namespace gateway::store
