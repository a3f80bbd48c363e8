#include "gateway/upstream/pool.hpp"

#include <algorithm>

namespace gateway::upstream {

pool::pool(const config::upstream_config& upstream, std::shared_ptr<net::ssl::context> tls_context)
    : upstream_(&upstream),
      tls_context_(std::move(tls_context)),
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

std::unique_ptr<connection> pool::take() {
    // A connection back from its last response for less than this is reused without asking the
    // socket first: the probe is a system call per request on a busy pool, and an upstream that
    // closes a connection within a second of answering on it is met by the retry anyway.
    constexpr auto probe_after = std::chrono::seconds(1);
    auto now = std::chrono::steady_clock::now();
    sweep(now);
    while (!idle_.empty()) {
        auto conn = std::move(idle_.back());
        idle_.pop_back();
        count_idle();
        if (conn->looks_alive(now - conn->idle_since >= probe_after)) return conn;
    }
    return nullptr;
}

std::unique_ptr<connection> pool::make(net::any_io_executor executor) const {
    return std::make_unique<connection>(std::move(executor), tls_context_);
}

void pool::give_back(std::unique_ptr<connection> conn) {
    auto now = std::chrono::steady_clock::now();
    sweep(now);
    if (closed_ || upstream_->max_idle_connections == 0) return;
    if (idle_.size() >= upstream_->max_idle_connections) idle_.erase(idle_.begin());
    conn->park();
    conn->idle_since = now;
    idle_.push_back(std::move(conn));
    count_idle();
}

}  // namespace gateway::upstream
