#include "tests/support/test_postgres.hpp"

#include "gateway/store/pg_database.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace gateway::testing {

std::string postgres_test_url() {
    const char* file = std::getenv("CONTEXTGATE_TEST_PG_URL_FILE");
    if (!file) return {};
    std::ifstream in(file);
    std::string url;
    std::getline(in, url);
    if (url.empty()) throw std::runtime_error(std::string("no PostgreSQL URL in ") + file);
    return url;
}

std::string fresh_postgres_schema() {
    auto url = postgres_test_url();
    auto db = store::pg_database::open(url);
    if (!db) throw std::runtime_error(db.error);
    static std::atomic<int> made = 0;
    auto schema =
        "t" + std::to_string(::getpid()) + "_" + std::to_string(++made) + "_" +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1'000'000);
    (*db.value)->execute(("CREATE SCHEMA " + schema).c_str());
    return url + "?options=-csearch_path%3D" + schema;
}

}  // namespace gateway::testing
