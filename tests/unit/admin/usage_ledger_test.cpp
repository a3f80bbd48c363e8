#include "gateway/admin/usage_ledger.hpp"

#include "gateway/io/offload.hpp"
#include "gateway/store/sqlite_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace admin_usage_ledger_test {

namespace fs = std::filesystem;
using namespace gateway;
namespace net = boost::asio;

BOOST_AUTO_TEST_SUITE(usage_ledger_rows)

// A ledger over a SQLite file in a directory of its own, removed afterwards (members are destroyed
// in reverse: the ledger stops and writes, the store closes, then the directory goes).
struct ledger_on_disk {
    struct temp_dir {
        fs::path path;
        ~temp_dir() { fs::remove_all(path); }
    };
    static fs::path made() {
        char pattern[] = "/tmp/contextgate-ledger-XXXXXX";
        return ::mkdtemp(pattern);
    }
    static std::unique_ptr<store::sqlite_store> opened(const fs::path& dir) {
        auto opened = store::sqlite_store::open((dir / "contextgate.db").string());
        BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
        return std::move(*opened.value);
    }
    temp_dir dir{made()};
    std::unique_ptr<store::sqlite_store> store = opened(dir.path);
    store::sqlite_store& db = *store;
    admin::usage_ledger ledger{db, std::chrono::hours(1)};
};

// Model names come from clients: a key inventing names gets at most 100 rows a day of its own,
// the rest counted together, and no token is lost.
BOOST_FIXTURE_TEST_CASE(invented_model_names_share_one_row_past_the_bound, ledger_on_disk) {
    const std::int64_t day = 1'795'000'000'000;  // one UTC day
    auto used = [&](std::string_view key, const std::string& model) {
        upstream::usage_record r{key, model, "up", 10, 1};
        r.now_ms = day;
        ledger.record(r);
    };
    for (int i = 0; i < 150; ++i) used("key_a", "model-" + std::to_string(i));
    used("key_a", "model-7");    // a known name keeps its row
    used("key_b", "model-149");  // counted per key
    io::run_blocking(ledger.flush());
    auto rows = io::run_blocking(db.usage(store::usage_query{}));
    std::size_t for_a = 0;
    std::int64_t input = 0, other_requests = 0;
    for (const auto& r : rows) {
        if (r.key_id == "key_a") ++for_a;
        input += r.input_tokens;
        if (r.model == admin::usage_ledger::other_model) other_requests += r.requests;
        if (r.model == "model-7") BOOST_TEST(r.requests == 2);
    }
    BOOST_TEST(for_a == admin::usage_ledger::max_models_per_key_day + 1);
    BOOST_TEST(other_requests == 50);
    BOOST_TEST(input == 152 * 10);  // nothing lost
}

// The same key, model and upstream in a run of requests count into one row; a write between
// them (the rows taken) and a new UTC day each start a row of their own, and nothing is lost.
BOOST_FIXTURE_TEST_CASE(a_run_of_requests_counts_across_writes_and_days, ledger_on_disk) {
    const std::int64_t day = 1'795'000'000'000;
    auto used = [&](std::int64_t at, std::string_view model) {
        upstream::usage_record r{"key_a", model, "up", 10, 1};
        r.now_ms = at;
        ledger.record(r);
    };
    used(day, "gpt-4o");
    used(day, "gpt-4o");
    io::run_blocking(ledger.flush());
    used(day, "gpt-4o");  // after the write: into the store's same row, added
    used(day, "gpt-4o-mini");
    used(day, "gpt-4o");
    used(day + 86'400'000, "gpt-4o");  // the next day
    io::run_blocking(ledger.flush());
    store::usage_query by_day;
    by_day.by_day = true;
    auto rows = io::run_blocking(db.usage(by_day));
    std::int64_t first_day = 0, next_day = 0, mini = 0, input = 0;
    for (const auto& r : rows) {
        input += r.input_tokens;
        if (r.model == "gpt-4o-mini")
            mini += r.requests;
        else if (r.day == admin::utc_day(day))
            first_day += r.requests;
        else
            next_day += r.requests;
    }
    BOOST_TEST(first_day == 4);
    BOOST_TEST(mini == 1);
    BOOST_TEST(next_day == 1);
    BOOST_TEST(input == 6 * 10);
}

// What the ledger sums per row: the token split, the cost of priced requests in whole
// nano-dollars, unpriced and estimated requests counted apart, and cache hits with what they
// saved (their tokens are not added); a negative token figure counts 0.
BOOST_FIXTURE_TEST_CASE(money_and_cache_hits_are_summed_in_nano_dollars, ledger_on_disk) {
    const std::int64_t day = 1'795'000'000'000;
    auto record = [&](upstream::usage_record r) {
        r.key_id = "key_a";
        r.model = "gpt-4o";
        r.upstream = "up";
        r.now_ms = day;
        ledger.record(r);
    };
    // gpt-4o with a cached prompt: 86 x 2.50 + 1920 x 1.25 + 300 x 10.00 = $0.005615.
    upstream::usage_record priced{.input_tokens = 2006,
                                  .output_tokens = 300,
                                  .cache_read_tokens = 1920,
                                  .cache_write_tokens = 7,
                                  .reasoning_tokens = 100,
                                  .cost = request_cost{0.005615, true, false}};
    record(priced);
    upstream::usage_record estimated{
        .input_tokens = 3, .output_tokens = 5, .cost = request_cost{0.0000001236, true, true}};
    record(estimated);
    upstream::usage_record unpriced{
        .input_tokens = 10, .output_tokens = -4, .cost = request_cost{0, false, false}};
    record(unpriced);
    upstream::usage_record unnamed{.input_tokens = 1, .output_tokens = 1};  // nothing priced
    record(unnamed);
    upstream::usage_record hit{.input_tokens = 2006,
                               .output_tokens = 300,
                               .cache_hit = true,
                               .saved = request_cost{0.005615, true, false}};
    record(hit);
    upstream::usage_record unpriced_hit{.cache_hit = true, .saved = request_cost{0, false, false}};
    record(unpriced_hit);
    io::run_blocking(ledger.flush());
    auto rows = io::run_blocking(db.usage(store::usage_query{}));
    BOOST_TEST_REQUIRE(rows.size() == 1u);
    const auto& r = rows[0];
    BOOST_TEST(r.requests == 6);
    BOOST_TEST(r.input_tokens == 2006 + 3 + 10 + 1);
    BOOST_TEST(r.output_tokens == 300 + 5 + 0 + 1);
    BOOST_TEST(r.cache_read_tokens == 1920);
    BOOST_TEST(r.cache_write_tokens == 7);
    BOOST_TEST(r.reasoning_tokens == 100);
    BOOST_TEST(r.usd_nano == 5'615'000 + 124);  // rounded to the nearest nano-dollar
    BOOST_TEST(r.unpriced_requests == 1);
    BOOST_TEST(r.estimated_requests == 1);
    BOOST_TEST(r.cache_hits == 2);
    BOOST_TEST(r.saved_usd_nano == 5'615'000);
}

// Two reports asked at once (the console's Usage page reads /admin/usage and /admin/keys
// together) both see what was recorded before them: a flush returns only after the write that
// holds it, also when another flush took the rows and is still writing them.
BOOST_FIXTURE_TEST_CASE(flushes_at_once_each_see_everything_recorded_before_them, ledger_on_disk) {
    net::io_context io;
    std::atomic<int> short_reads = 0;
    auto report = [&](std::int64_t expected) -> net::awaitable<void> {
        co_await ledger.flush();
        std::int64_t seen = 0;
        store::usage_query all;  // a named query: GCC 12 mis-moves a temporary's strings
        auto rows = co_await db.usage(all);  // in a co_await expression
        for (const auto& r : rows) seen += r.requests;
        if (seen != expected) ++short_reads;
    };
    for (std::int64_t round = 1; round <= 100; ++round) {
        upstream::usage_record r{"key_a", "gpt-4o", "up", 10, 1};
        r.now_ms = 1'795'000'000'000;
        ledger.record(r);
        net::co_spawn(io, report(round), net::detached);
        net::co_spawn(io, report(round), net::detached);
        io.run();
        io.restart();
    }
    BOOST_TEST(short_reads == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_usage_ledger_test
