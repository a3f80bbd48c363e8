#include "gateway/store/pg_store.hpp"
#include "gateway/ids.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"

#include "gateway/store/pg_database.hpp"
#include "gateway/store/record_rows.hpp"
#include "gateway/store/schema.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <random>
#include <tuple>

namespace gateway::store {

namespace {

// A claim takes each expired lease once: a second claimer waits for the first one's row lock,
// then finds the lease renewed and skips the row.
constexpr const char* claim_runs_sql =
    "UPDATE runs SET owner = $1, lease_expires = $2 WHERE " UNFINISHED_RUN
    " AND lease_expires < $3 RETURNING " RUN_COLUMNS;
constexpr const char* renew_leases_sql =
    "UPDATE runs SET lease_expires = $2 WHERE owner = $1 AND " UNFINISHED_RUN " RETURNING id";
constexpr const char* release_leases_sql =
    "UPDATE runs SET lease_expires = 0 WHERE owner = $1 AND " UNFINISHED_RUN;

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

std::string make_replica_id() {
    char host[64] = {};
    gethostname(host, sizeof host - 1);
    return random_id(std::string(host) + '-' + std::to_string(getpid()) + '-', 4);
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
        migrate(**writer.value);
    } catch (const store_error& e) {
        return result::fail(std::string("cannot migrate the PostgreSQL database: ") + e.what());
    }
    auto reader = pg_database::open(config.dsn);
    if (!reader) return result::fail(reader.error);
    return {std::unique_ptr<pg_store>(new pg_store(std::move(*writer.value),
                                                   std::move(*reader.value), config.dsn,
                                                   make_replica_id(), config.lease_timeout)),
            {}};
}

pg_store::pg_store(std::unique_ptr<sql_connection> writer, std::unique_ptr<sql_connection> reader,
                   std::string dsn, std::string replica, config::duration lease)
    : sql_store(std::move(writer), std::move(reader), std::move(replica), lease),
      dsn_(std::move(dsn)) {}

pg_store::~pg_store() {
    stop_listening();
}

void pg_store::stop_listening() {
    stopping_ = true;
    if (listener_.joinable()) listener_.join();
}

net::awaitable<std::vector<run_record>> pg_store::claim_runs() {
    auto work = [replica = owner_, lease = lease_end()](sql_connection& db) {
        auto runs = all_rows(db.query(claim_runs_sql, {replica, lease, now_ms()}), run_from);
        std::sort(runs.begin(), runs.end(), [](const run_record& a, const run_record& b) {
            return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
        });
        return runs;
    };
    auto runs = co_await write(std::move(work));
    co_return runs;
}

net::awaitable<std::vector<std::string>> pg_store::renew_leases() {
    auto work = [replica = owner_, lease = lease_end()](sql_connection& db) {
        auto rows = db.query(renew_leases_sql, {replica, lease});
        std::vector<std::string> held;
        for (std::size_t i = 0; i < rows.size(); ++i) held.emplace_back(rows.text(i, 0));
        return held;
    };
    auto held = co_await write(std::move(work));
    co_return held;
}

net::awaitable<void> pg_store::release_leases() {
    auto work = [replica = owner_](sql_connection& db) { db.query(release_leases_sql, {replica}); };
    co_await write(std::move(work));
}

net::awaitable<std::int64_t> pg_store::post_request(run_request request) {
    auto work = [request = std::move(request)](sql_connection& db) {
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
    auto work = [run_id = std::move(run_id)](sql_connection& db) {
        auto rows = db.query(select_pending_requests, {run_id});
        std::vector<run_request> out;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            auto r = rows[i];
            out.push_back({r.integer(0), r.text(1), r.text(2), r.text(3)});
        }
        return out;
    };
    auto pending = co_await write(std::move(work));
    co_return pending;
}

net::awaitable<void> pg_store::answer_request(std::int64_t id, std::string answer) {
    auto work = [id, answer = std::move(answer)](sql_connection& db) {
        db.transaction([&] {
            db.query(answer_request_sql, {id, answer});
            db.query(notify_answer, {std::to_string(id)});
        });
    };
    co_await write(std::move(work));
}

net::awaitable<std::optional<std::string>> pg_store::take_answer(std::int64_t id) {
    auto work = [id](sql_connection& db) -> std::optional<std::string> {
        auto rows = db.query(take_answer_sql, {id});
        if (rows.empty()) return std::nullopt;
        return std::string(rows.text(0, 0));
    };
    auto answer = co_await write(std::move(work));
    co_return answer;
}

net::awaitable<bool> pg_store::withdraw_request(std::int64_t id) {
    auto work = [id](sql_connection& db) {
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

void pg_store::on_keys_changed(std::function<void()> changed) {
    std::lock_guard lock(keys_mutex_);
    keys_changed_ = std::move(changed);
}

void pg_store::keys_changed() {
    std::function<void()> heard;
    {
        std::lock_guard lock(keys_mutex_);
        heard = keys_changed_;
    }
    if (heard) heard();
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
                "LISTEN contextgate_answers; LISTEN contextgate_keys");
        } catch (const store_error& e) {
            observability::log_warn(std::string("PostgreSQL listener: ") + e.what());
            continue;
        }
        backoff = 100ms;
        if (!first && signals.reconnected) signals.reconnected();
        // Keys are read again once LISTEN holds: one made between the start-up read (or a lost
        // connection) and now was announced to nobody here.
        keys_changed();
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
                    if (std::string_view(payload).substr(second_space + 1) == owner_) continue;
                    signals.events(payload.substr(0, first_space),
                                   to_int(std::string_view(payload).substr(
                                       first_space + 1, second_space - first_space - 1)));
                } else if (channel == "contextgate_requests") {
                    signals.requests(payload);
                } else if (channel == "contextgate_answers") {
                    signals.answered(to_int(payload));
                } else if (channel == "contextgate_keys") {
                    keys_changed();
                }
            }
        }
        if (!stopping_)
            observability::log_warn("PostgreSQL listener: connection lost; reconnecting");
    }
}

}  // namespace gateway::store
