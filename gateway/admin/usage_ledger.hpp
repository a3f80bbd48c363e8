#pragma once

#include "gateway/store/records.hpp"
#include "gateway/upstream/usage_sink.hpp"

#include <boost/asio/awaitable.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace gateway::store {
class key_store;
}

namespace gateway::admin {

namespace net = boost::asio;

// Usage on its way to the store: record() adds to in-memory totals (tokens, money, cache hits)
// per UTC day, key, model and upstream (a lock and a map update, no I/O on the request's path); a
// thread of its own writes them every `interval` in one transaction, and stop() writes what is
// left. A failed write keeps the totals for the next one. Model names come from clients: per key
// and UTC day the first `max_models_per_key_day` distinct names get rows of their own and later
// ones are counted under `other_model`, so inventing names cannot grow the table without bound.
// Thread-safe.
class usage_ledger final : public upstream::usage_sink {
public:
    static constexpr std::size_t max_models_per_key_day = 100;
    static constexpr std::string_view other_model = "(other)";

    usage_ledger(store::key_store& store, std::chrono::milliseconds interval);
    ~usage_ledger();
    usage_ledger(const usage_ledger&) = delete;
    usage_ledger& operator=(const usage_ledger&) = delete;

    void record(const upstream::usage_record& used) override;

    // Returns once everything recorded before the call is in the store (a report reads the store
    // right after): the ledger's thread writes it, in order after any write already under way, so
    // two reports asked at once both see it. On failure the totals are kept for the next write.
    net::awaitable<void> flush();

    // Writes what is pending and stops the thread. Idempotent.
    void stop();

private:
    std::vector<store::usage_row> take();
    void put_back(std::vector<store::usage_row> rows);
    // Takes what is pending and writes it (on failure, puts it back).
    net::awaitable<void> write_pending();

    store::key_store& store_;
    std::chrono::milliseconds interval_;
    std::mutex mutex_;
    // Looked up with string views (std::less<>): a request whose row exists copies no string.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, store::usage_row,
             std::less<>>
        pending_;
    // The row of (day, key, model as asked, upstream), found or made under model_seen_'s bound.
    store::usage_row& row_for(const std::string& day, std::string_view key_id,
                              std::string_view model, std::string_view upstream);
    // The row the last record() counted into, and what it was for (take() forgets it).
    struct last_row {
        store::usage_row* row = nullptr;
        std::string day, key_id, model, upstream;
    } last_row_;
    std::string seen_day_;  // the day models_seen_ counts
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> models_seen_;  // by key
    std::condition_variable wake_;
    // flush() callers, resumed after the next write: it holds what they recorded before.
    std::vector<std::function<void()>> waiting_;
    bool stopping_ = false;
    bool writing_thread_ = false;  // the thread runs and will resume `waiting_`
    std::thread thread_;
};

// "2026-11-23" for Unix milliseconds (UTC).
std::string utc_day(std::int64_t unix_ms);

}  // namespace gateway::admin
