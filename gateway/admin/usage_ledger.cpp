#include "gateway/admin/usage_ledger.hpp"

#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/store/state_store.hpp"

#include <chrono>
#include <exception>
#include <limits>

namespace gateway::admin {

std::string utc_day(std::int64_t unix_ms) {
    // Every passthrough request records under today's date: formatted once a day per thread.
    thread_local std::int64_t last_day = std::numeric_limits<std::int64_t>::min();
    thread_local std::string last_text;
    auto days = unix_ms / 86'400'000 - (unix_ms % 86'400'000 < 0 ? 1 : 0);
    if (days == last_day) return last_text;
    std::chrono::year_month_day date{std::chrono::sys_days(std::chrono::days(days))};
    char text[16];
    std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
    last_day = days;
    last_text = text;
    return last_text;
}

usage_ledger::usage_ledger(store::key_store& store, std::chrono::milliseconds interval)
    : store_(store), interval_(interval) {
    thread_ = std::thread([this] {
        io::name_this_thread("usage");
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            wake_.wait_for(lock, interval_);
            if (pending_.empty()) continue;
            lock.unlock();
            io::run_blocking(flush());
            lock.lock();
        }
    });
}

usage_ledger::~usage_ledger() {
    stop();
}

void usage_ledger::record(std::string_view key_id, std::string_view model,
                          std::string_view upstream, std::int64_t input, std::int64_t output,
                          std::int64_t now_ms) {
    const std::string& day = utc_day(now_ms);
    std::lock_guard lock(mutex_);
    if (day != seen_day_) {
        seen_day_ = day;
        models_seen_.clear();
    }
    auto keyed = models_seen_.find(key_id);
    if (keyed == models_seen_.end())
        keyed =
            models_seen_.emplace(std::string(key_id), std::set<std::string, std::less<>>{}).first;
    auto& seen = keyed->second;
    if (seen.find(model) == seen.end()) {
        if (seen.size() < max_models_per_key_day)
            seen.emplace(model);
        else
            model = other_model;
    }
    auto found = pending_.find(std::make_tuple(std::string_view(day), key_id, model, upstream));
    if (found == pending_.end()) {
        store::usage_row fresh;
        fresh.day = day;
        fresh.key_id = key_id;
        fresh.model = model;
        fresh.upstream = upstream;
        found = pending_
                    .emplace(std::make_tuple(fresh.day, fresh.key_id, fresh.model, fresh.upstream),
                             std::move(fresh))
                    .first;
    }
    auto& row = found->second;
    ++row.requests;
    row.input_tokens += std::max<std::int64_t>(input, 0);
    row.output_tokens += std::max<std::int64_t>(output, 0);
}

std::vector<store::usage_row> usage_ledger::take() {
    std::lock_guard lock(mutex_);
    std::vector<store::usage_row> rows;
    rows.reserve(pending_.size());
    for (auto& [key, row] : pending_) rows.push_back(std::move(row));
    pending_.clear();
    return rows;
}

void usage_ledger::put_back(std::vector<store::usage_row> rows) {
    std::lock_guard lock(mutex_);
    for (auto& r : rows) {
        auto& row = pending_[std::make_tuple(r.day, r.key_id, r.model, r.upstream)];
        if (row.day.empty()) {
            row = std::move(r);
            continue;
        }
        row.requests += r.requests;
        row.input_tokens += r.input_tokens;
        row.output_tokens += r.output_tokens;
    }
}

net::awaitable<void> usage_ledger::flush() {
    auto rows = take();
    if (rows.empty()) co_return;
    auto copy = rows;
    try {
        co_await store_.add_usage(std::move(rows));
    } catch (const std::exception& e) {
        observability::log_error(std::string("usage not written, kept for the next try: ") +
                                 e.what());
        put_back(std::move(copy));
    }
}

void usage_ledger::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    io::run_blocking(flush());
}

}  // namespace gateway::admin
