// pg_store's side for operating several gateways: opening it, virtual keys and usage, run
// leases, requests for runs driven by another replica, and hearing the other replicas.
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/store/pg_schema.hpp"
#include "gateway/store/pg_store.hpp"
#include "gateway/store/record_rows.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <random>

namespace gateway::store {

namespace {

#define KEY_COLUMNS                                                                    \
    "id, name, digest, models, rpm, tpm, max_parallel, budget_tokens, budget_period, " \
    "expires_at, created_at, revoked_at"
constexpr const char* upsert_key =
    "INSERT INTO virtual_keys (" KEY_COLUMNS
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0) ON CONFLICT (id) DO UPDATE SET "
    "name = excluded.name, models = excluded.models, rpm = excluded.rpm, tpm = excluded.tpm, "
    "max_parallel = excluded.max_parallel, budget_tokens = excluded.budget_tokens, "
    "budget_period = excluded.budget_period, expires_at = excluded.expires_at";
constexpr const char* select_keys =
    "SELECT " KEY_COLUMNS " FROM virtual_keys ORDER BY created_at, id";
#undef KEY_COLUMNS
constexpr const char* revoke_key_sql =
    "UPDATE virtual_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0";
constexpr const char* add_usage_sql =
    "INSERT INTO usage_daily (day, key_id, model, upstream, requests, input_tokens, "
    "output_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT (day, key_id, model, upstream) DO UPDATE SET "
    "requests = usage_daily.requests + excluded.requests, "
    "input_tokens = usage_daily.input_tokens + excluded.input_tokens, "
    "output_tokens = usage_daily.output_tokens + excluded.output_tokens";
constexpr const char* select_usage =
    "SELECT CASE WHEN $5::boolean THEN day ELSE '' END AS d, key_id, model, SUM(requests), "
    "SUM(input_tokens), SUM(output_tokens) FROM usage_daily "
    "WHERE ($1::text = '' OR key_id = $1::text) AND ($2::text = '' OR model = $2::text) "
    "AND day >= $3::text AND day <= $4::text GROUP BY d, key_id, model ORDER BY d, key_id, model";

constexpr const char* renew_leases_sql =
    "UPDATE runs SET lease_expires = $2 WHERE owner = $1 AND status IN ('running', "
    "'awaiting_approval') RETURNING id";
constexpr const char* release_leases_sql =
    "UPDATE runs SET lease_expires = 0 WHERE owner = $1 AND status IN ('running', "
    "'awaiting_approval')";

constexpr const char* insert_request =
    "INSERT INTO run_requests (run_id, kind, body, created_at) VALUES ($1, $2, $3, $4) "
    "RETURNING id";
constexpr const char* notify_request = "SELECT pg_notify('contextgate_requests', $1)";
constexpr const char* select_pending_requests =
    "SELECT id, run_id, kind, body FROM run_requests WHERE run_id = $1 AND answer IS NULL "
    "ORDER BY id";
constexpr const char* answer_request_sql =
    "UPDATE run_requests SET answer = $2 WHERE id = $1 AND answer IS NULL";
constexpr const char* notify_answer = "SELECT pg_notify('contextgate_answers', $1)";
constexpr const char* take_answer_sql =
    "DELETE FROM run_requests WHERE id = $1 AND answer IS NOT NULL RETURNING answer";
constexpr const char* withdraw_request_sql =
    "DELETE FROM run_requests WHERE id = $1 AND answer IS NULL";

key_record read_key(const pg_rows& r, int i) {
    pg_row row(r, i);
    return key_from(row);
}

std::string make_replica_id() {
    char host[64] = {};
    gethostname(host, sizeof host - 1);
    std::mt19937_64 generator{std::random_device{}()};
    static constexpr char hex[] = "0123456789abcdef";
    std::string id = std::string(host) + '-' + std::to_string(getpid()) + '-';
    auto bits = generator();
    for (int i = 0; i < 8; ++i) id += hex[(bits >> (i * 4)) & 0xf];
    return id;
}

std::int64_t to_int(std::string_view text) {
    std::int64_t out = 0;
    std::from_chars(text.data(), text.data() + text.size(), out);
    return out;
}

}  // namespace

config::parsed<std::unique_ptr<pg_store>> pg_store::open(const config::store_config& config) {
    using result = config::parsed<std::unique_ptr<pg_store>>;
    auto writer = pg_database::open(config.dsn);
    if (!writer) return result::fail(writer.error);
    try {
        migrate_pg(**writer.value);
    } catch (const store_error& e) {
        return result::fail(std::string("cannot migrate the PostgreSQL database: ") + e.what());
    }
    auto reader = pg_database::open(config.dsn);
    if (!reader) return result::fail(reader.error);
    std::unique_ptr<pg_store> s(new pg_store());
    s->dsn_ = config.dsn;
    s->lease_ = config.lease_timeout;
    s->replica_ = make_replica_id();
    s->writer_.start(std::move(*writer.value), "store-write");
    s->reader_.start(std::move(*reader.value), "store-read");
    return {std::move(s), {}};
}

pg_store::~pg_store() {
    stopping_ = true;
    if (listener_.joinable()) listener_.join();
    writer_.stop();
    reader_.stop();
}

net::awaitable<void> pg_store::save_key(key_record key) {
    auto work = [key = std::move(key)](pg_database& db) {
        const auto& k = key;
        db.query(upsert_key,
                 {k.id, k.name, k.digest, k.models, k.rpm, k.tpm, k.max_parallel, k.budget_tokens,
                  k.budget_period, k.expires_at, k.created_at ? k.created_at : now_ms()});
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<key_record>> pg_store::keys() {
    auto work = [](pg_database& db) {
        std::vector<key_record> keys;
        auto rows = db.query(select_keys);
        for (int i = 0; i < rows.size(); ++i) keys.push_back(read_key(rows, i));
        return keys;
    };
    auto all = co_await read(std::move(work));
    co_return all;
}

net::awaitable<bool> pg_store::revoke_key(std::string id) {
    auto work = [id = std::move(id)](pg_database& db) {
        return db.query(revoke_key_sql, {id, now_ms()}).affected() > 0;
    };
    auto revoked = co_await write(std::move(work));
    co_return revoked;
}

net::awaitable<void> pg_store::add_usage(std::vector<usage_row> rows) {
    auto work = [rows = std::move(rows)](pg_database& db) {
        db.transaction([&] {
            for (const auto& r : rows)
                db.query(add_usage_sql, {r.day, r.key_id, r.model, r.upstream, r.requests,
                                         r.input_tokens, r.output_tokens});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::vector<usage_row>> pg_store::usage(usage_query query) {
    auto work = [query = std::move(query)](pg_database& db) {
        auto result = db.query(
            select_usage, {query.key_id, query.model, query.from_day, query.to_day, query.by_day});
        std::vector<usage_row> rows;
        for (int i = 0; i < result.size(); ++i) {
            pg_row row(result, i);
            rows.push_back(usage_from(row));
        }
        return rows;
    };
    auto rows = co_await read(std::move(work));
    co_return rows;
}

net::awaitable<std::vector<std::string>> pg_store::renew_leases() {
    auto work = [replica = replica_, lease = lease_end()](pg_database& db) {
        auto rows = db.query(renew_leases_sql, {replica, lease});
        std::vector<std::string> held;
        for (int i = 0; i < rows.size(); ++i) held.push_back(rows.text(i, 0));
        return held;
    };
    auto held = co_await write(std::move(work));
    co_return held;
}

net::awaitable<void> pg_store::release_leases() {
    auto work = [replica = replica_](pg_database& db) { db.query(release_leases_sql, {replica}); };
    co_await write(std::move(work));
}

net::awaitable<std::int64_t> pg_store::post_request(run_request request) {
    auto work = [request = std::move(request)](pg_database& db) {
        std::int64_t id = 0;
        db.transaction([&] {
            id = db.query(insert_request, {request.run_id, request.kind, request.body, now_ms()})
                     .integer(0, 0);
            db.query(notify_request, {request.run_id});
        });
        return id;
    };
    auto id = co_await write(std::move(work));
    co_return id;
}

net::awaitable<std::vector<run_request>> pg_store::pending_requests(std::string run_id) {
    // On the writer: it must see the request whose notification woke the caller.
    auto work = [run_id = std::move(run_id)](pg_database& db) {
        auto rows = db.query(select_pending_requests, {run_id});
        std::vector<run_request> out;
        for (int i = 0; i < rows.size(); ++i)
            out.push_back({rows.integer(i, 0), rows.text(i, 1), rows.text(i, 2), rows.text(i, 3)});
        return out;
    };
    auto pending = co_await write(std::move(work));
    co_return pending;
}

net::awaitable<void> pg_store::answer_request(std::int64_t id, std::string answer) {
    auto work = [id, answer = std::move(answer)](pg_database& db) {
        db.transaction([&] {
            db.query(answer_request_sql, {id, answer});
            db.query(notify_answer, {std::to_string(id)});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::optional<std::string>> pg_store::take_answer(std::int64_t id) {
    auto work = [id](pg_database& db) -> std::optional<std::string> {
        auto rows = db.query(take_answer_sql, {id});
        if (rows.empty()) return std::nullopt;
        return rows.text(0, 0);
    };
    auto answer = co_await write(std::move(work));
    co_return answer;
}

net::awaitable<bool> pg_store::withdraw_request(std::int64_t id) {
    auto work = [id](pg_database& db) {
        return db.query(withdraw_request_sql, {id}).affected() > 0;
    };
    auto withdrawn = co_await write(std::move(work));
    co_return withdrawn;
}

void pg_store::listen(replica_signals signals) {
    if (listener_.joinable()) return;
    listener_ = std::thread([this, signals = std::move(signals)] {
        io::name_this_thread("store-listen");
        hear(signals);
    });
}

void pg_store::hear(replica_signals signals) {
    using namespace std::chrono_literals;
    auto backoff = 100ms;
    bool first = true;
    while (!stopping_) {
        auto opened = pg_database::open(dsn_);
        if (!opened) {
            observability::log_warn("PostgreSQL listener: " + opened.error + "; retrying");
            for (auto waited = 0ms; waited < backoff && !stopping_; waited += 50ms)
                std::this_thread::sleep_for(50ms);
            backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
            continue;
        }
        auto& db = **opened.value;
        try {
            db.execute(
                "LISTEN contextgate_events; LISTEN contextgate_requests; "
                "LISTEN contextgate_answers");
        } catch (const store_error& e) {
            observability::log_warn(std::string("PostgreSQL listener: ") + e.what());
            continue;
        }
        backoff = 100ms;
        if (!first && signals.reconnected) signals.reconnected();
        first = false;
        while (!stopping_) {
            pollfd fd{db.socket(), POLLIN, 0};
            int ready = ::poll(&fd, 1, 200);
            if (ready < 0 && errno != EINTR) break;
            if (ready <= 0) continue;
            if (!db.consume()) break;
            while (auto n = db.next_notification()) {
                const auto& [channel, payload] = *n;
                if (channel == "contextgate_events") {
                    // "<run id> <seq> <replica>": a replica's own commits woke its watchers.
                    auto first_space = payload.find(' ');
                    auto second_space = payload.find(' ', first_space + 1);
                    if (first_space == std::string::npos || second_space == std::string::npos)
                        continue;
                    if (std::string_view(payload).substr(second_space + 1) == replica_) continue;
                    signals.events(payload.substr(0, first_space),
                                   to_int(std::string_view(payload).substr(
                                       first_space + 1, second_space - first_space - 1)));
                } else if (channel == "contextgate_requests") {
                    signals.requests(payload);
                } else if (channel == "contextgate_answers") {
                    signals.answered(to_int(payload));
                }
            }
        }
        if (!stopping_)
            observability::log_warn("PostgreSQL listener: connection lost; reconnecting");
    }
}

}  // namespace gateway::store
