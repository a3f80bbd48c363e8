#include "gateway/admin/usage_ledger.hpp"

#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/post.hpp>

#include <chrono>
#include <exception>
#include <limits>
#include <memory>

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
    writing_thread_ = true;
    thread_ = std::thread([this] {
        io::name_this_thread("usage");
        std::unique_lock lock(mutex_);
        for (;;) {
            if (waiting_.empty() && !stopping_) wake_.wait_for(lock, interval_);
            auto waiters = std::move(waiting_);
            waiting_.clear();
            bool last = stopping_;
            if (last) writing_thread_ = false;  // later flush() calls write for themselves
            if (!pending_.empty()) {
                lock.unlock();
                io::run_blocking(write_pending());
                lock.lock();
            }
            // Each resumes on its own executor, after the write that held what it recorded.
            for (auto& resume : waiters) resume();
            if (last) return;
        }
    });
}

usage_ledger::~usage_ledger() {
    stop();
}

namespace {

void add(store::usage_row& to, const store::usage_row& r) {
    to.requests += r.requests;
    to.input_tokens += r.input_tokens;
    to.output_tokens += r.output_tokens;
    to.cache_read_tokens += r.cache_read_tokens;
    to.cache_write_tokens += r.cache_write_tokens;
    to.reasoning_tokens += r.reasoning_tokens;
    to.usd_nano += r.usd_nano;
    to.unpriced_requests += r.unpriced_requests;
    to.estimated_requests += r.estimated_requests;
    to.cache_hits += r.cache_hits;
    to.saved_usd_nano += r.saved_usd_nano;
}

}  // namespace

store::usage_row& usage_ledger::row_for(const std::string& day, std::string_view key_id,
                                        std::string_view model, std::string_view upstream) {
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
    return found->second;
}

void usage_ledger::record(const upstream::usage_record& used) {
    auto model = used.model;
    auto key_id = used.key_id;
    auto upstream = used.upstream;
    const std::string& day = utc_day(used.now_ms);
    std::lock_guard lock(mutex_);
    if (day != seen_day_) {
        seen_day_ = day;
        models_seen_.clear();
    }
    // The row the last request counted into serves the next with the same day, key, model (as
    // asked) and upstream, as most requests are: then neither map is searched (their searches,
    // by four strings, were the ledger's largest code on the request path).
    auto& last = last_row_;
    if (!last.row || last.day != day || last.key_id != key_id || last.model != model ||
        last.upstream != upstream) {
        last.row = &row_for(day, key_id, model, upstream);
        last.day = day;
        last.key_id = key_id;
        last.model = model;
        last.upstream = upstream;
    }
    // Counted into the row in place (a row of its own to add would be four strings made and
    // dropped on every request).
    auto& row = *last.row;
    row.requests += 1;
    if (used.cache_hit) {
        row.cache_hits += 1;
        if (used.saved && used.saved->priced) row.saved_usd_nano += nano_usd(used.saved->usd);
        return;
    }
    auto count = [](std::int64_t n) { return std::max<std::int64_t>(n, 0); };
    row.input_tokens += count(used.input_tokens);
    row.output_tokens += count(used.output_tokens);
    row.cache_read_tokens += count(used.cache_read_tokens);
    row.cache_write_tokens += count(used.cache_write_tokens);
    row.reasoning_tokens += count(used.reasoning_tokens);
    if (used.cost) {
        if (!used.cost->priced)
            row.unpriced_requests += 1;
        else
            row.usd_nano += nano_usd(used.cost->usd);
        if (used.cost->estimated) row.estimated_requests += 1;
    }
}

std::vector<store::usage_row> usage_ledger::take() {
    std::lock_guard lock(mutex_);
    std::vector<store::usage_row> rows;
    rows.reserve(pending_.size());
    for (auto& [key, row] : pending_) rows.push_back(std::move(row));
    pending_.clear();
    last_row_.row = nullptr;
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
        add(row, r);
    }
}

net::awaitable<void> usage_ledger::flush() {
    bool queued = false;
    co_await net::async_initiate<decltype(net::use_awaitable), void()>(
        [this, &queued](auto handler) {
            // Resumed by a post to the caller's own executor, from whichever thread calls it;
            // the executor counts the wait as work meanwhile, so its io_context keeps running.
            auto on = net::prefer(net::get_associated_executor(handler),
                                  net::execution::outstanding_work.tracked);
            auto held = std::make_shared<decltype(handler)>(std::move(handler));
            std::function<void()> resume = [on, held] {
                net::post(on, [held] { std::move (*held)(); });
            };
            std::lock_guard lock(mutex_);
            if (writing_thread_) {
                queued = true;
                waiting_.push_back(std::move(resume));
                wake_.notify_all();
                return;
            }
            resume();
        },
        net::use_awaitable);
    // The thread has stopped (or was stopping): what is pending is written here.
    if (!queued) co_await write_pending();
}

net::awaitable<void> usage_ledger::write_pending() {
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
    io::run_blocking(write_pending());
}

}  // namespace gateway::admin
