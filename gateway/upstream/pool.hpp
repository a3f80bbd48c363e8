#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/connection.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace gateway::upstream {

// Idle keep-alive connections to one upstream, owned by one worker thread (so no lock): the most
// recently used connection is reused first, connections idle longer than pool_idle_timeout or
// beyond max_idle_connections are closed. Not thread-safe by design.
class pool {
public:
    pool(const config::upstream_config& upstream, std::shared_ptr<net::ssl::context> tls_context);
    ~pool();
    pool(pool&& other) noexcept
        : upstream_(other.upstream_),
          tls_context_(std::move(other.tls_context_)),
          idle_(std::move(other.idle_)),
          closed_(other.closed_),
          idle_gauge_(other.idle_gauge_),
          counted_idle_(std::exchange(other.counted_idle_, 0)) {}
    pool& operator=(pool&&) = delete;

    // An idle connection that still looks alive, or null.
    std::unique_ptr<connection> take();

    // A new, unopened connection for this upstream.
    std::unique_ptr<connection> make(net::any_io_executor executor) const;

    // Keeps a connection whose last response was read completely and allowed keep-alive;
    // closes it instead once the pool was closed.
    void give_back(std::unique_ptr<connection> conn);

    // Closes every idle connection and keeps none from now on (the process is draining: a pooled
    // connection, and the deadline timer it may still hold, would only keep its thread alive).
    void close_all() {
        closed_ = true;
        idle_.clear();
        count_idle();
    }

    const config::upstream_config& upstream() const { return *upstream_; }

private:
    void sweep(std::chrono::steady_clock::time_point now);
    void count_idle();  // the idle gauge follows idle_.size()

    const config::upstream_config* upstream_;
    std::shared_ptr<net::ssl::context> tls_context_;
    std::vector<std::unique_ptr<connection>> idle_;  // oldest first
    bool closed_ = false;
    observability::gauge* idle_gauge_;
    std::size_t counted_idle_ = 0;
};

}  // namespace gateway::upstream
