#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/connection.hpp"

#include <memory>
#include <vector>

namespace gateway::upstream {

// Idle keep-alive connections to one upstream, owned by one worker thread (so no lock): the most
// recently used connection is reused first, connections idle longer than pool_idle_timeout or
// beyond max_idle_connections are closed. Not thread-safe by design.
class pool {
public:
    pool(const config::upstream_config& upstream, std::shared_ptr<net::ssl::context> tls_context);

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
    }

    const config::upstream_config& upstream() const { return *upstream_; }

private:
    void sweep(std::chrono::steady_clock::time_point now);

    const config::upstream_config* upstream_;
    std::shared_ptr<net::ssl::context> tls_context_;
    std::vector<std::unique_ptr<connection>> idle_;  // oldest first
    bool closed_ = false;
};

}  // namespace gateway::upstream
