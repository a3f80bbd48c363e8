#include "gateway/upstream/pool.hpp"

#include "gateway/clock.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace gateway::upstream {

pool::pool(const config::upstream_config& upstream, std::shared_ptr<net::ssl::context> tls_context,
           std::shared_ptr<aws::credentials_provider> aws_credentials,
           std::shared_ptr<token_source> tokens)
    : upstream_(&upstream),
      tls_context_(std::move(tls_context)),
      aws_credentials_(std::move(aws_credentials)),
      tokens_(std::move(tokens)),
      idle_gauge_(&observability::metrics().upstream_idle.with({upstream.name})) {}

pool::~pool() {
    idle_gauge_->add(-static_cast<double>(counted_idle_));
}

void pool::count_idle() {
    // The gauge is shared by the workers: no atomic update when nothing changed.
    if (idle_.size() == counted_idle_) return;
    idle_gauge_->add(static_cast<double>(idle_.size()) - static_cast<double>(counted_idle_));
    counted_idle_ = idle_.size();
}

void pool::sweep(std::chrono::steady_clock::time_point now) {
    auto expired = std::find_if(idle_.begin(), idle_.end(), [&](const auto& c) {
        return now - c->idle_since < upstream_->pool_idle_timeout;
    });
    idle_.erase(idle_.begin(), expired);
    count_idle();
}

std::unique_ptr<connection> pool::take(bool probe) {
    // A connection back from its last response for less than this is reused without asking the
    // socket first, unless the caller asks (`probe`): the probe is a system call per request on
    // a busy pool, and a GET that meets an upstream which closed the connection within a second
    // of answering on it is sent again anyway (start_exchange).
    constexpr auto probe_after = std::chrono::seconds(1);
    auto now = coarse_now();  // idle times of seconds: a tick early is nothing
    sweep(now);
    while (!idle_.empty()) {
        auto conn = std::move(idle_.back());
        idle_.pop_back();
        count_idle();
        if (conn->looks_alive(probe || now - conn->idle_since >= probe_after)) return conn;
    }
    return nullptr;
}

std::unique_ptr<connection> pool::make(net::any_io_executor executor) const {
    return std::make_unique<connection>(std::move(executor), tls_context_);
}

net::awaitable<resolution> pool::resolve(net::any_io_executor executor) {
    auto now = coarse_now();  // idle times of seconds: a tick early is nothing
    if (!resolved_.empty() && now < resolved_until_) {
        resolution kept;  // named: GCC 12 mishandles a braced temporary in co_return
        kept.endpoints = resolved_;
        co_return kept;
    }
    if (auto running = resolving_) {
        // Another request of this worker is resolving: its answer serves this one too.
        // (Only the lookup's end cancels `done`; `expires_at` once, so a late waiter never
        // re-arms it after that cancel.)
        while (!running->finished)
            co_await running->done.async_wait(net::as_tuple(net::use_awaitable));
        co_return running->result;
    }
    auto mine = std::make_shared<lookup>(executor);
    mine->done.expires_at(std::chrono::steady_clock::time_point::max());
    resolving_ = mine;
    mine->result = co_await upstream::resolve(executor, *upstream_);
    mine->finished = true;
    mine->done.cancel();  // wakes the waiters
    if (resolving_ == mine) resolving_.reset();
    if (!mine->result.failed && !closed_) {
        resolved_ = mine->result.endpoints;
        resolved_until_ = std::chrono::steady_clock::now() + resolve_ttl;
    }
    co_return mine->result;
}

void pool::give_back(std::unique_ptr<connection> conn) {
    auto now = coarse_now();  // idle times of seconds: a tick early is nothing
    sweep(now);
    if (closed_ || upstream_->max_idle_connections == 0) return;
    if (idle_.size() >= upstream_->max_idle_connections) idle_.erase(idle_.begin());
    conn->park();
    conn->idle_since = now;
    idle_.push_back(std::move(conn));
    count_idle();
}

}  // namespace gateway::upstream
