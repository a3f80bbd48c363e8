#include "gateway/admin/usage_ledger.hpp"

#include "gateway/io/offload.hpp"
#include "gateway/store/sqlite_store.hpp"

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace gateway;

BOOST_AUTO_TEST_SUITE(usage_ledger_rows)

// Model names come from clients: a key inventing names gets at most 100 rows a day of its own,
// the rest counted together, and no token is lost.
BOOST_AUTO_TEST_CASE(invented_model_names_share_one_row_past_the_bound) {
    char pattern[] = "/tmp/contextgate-ledger-XXXXXX";
    fs::path dir = ::mkdtemp(pattern);
    {
        auto opened = store::sqlite_store::open((dir / "contextgate.db").string());
        BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
        auto& db = **opened.value;
        admin::usage_ledger ledger(db, std::chrono::hours(1));
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
        ledger.stop();
    }
    fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
