#pragma once

#include "gateway/app/context_service.hpp"
#include "gateway/cache/response_cache.hpp"
#include "gateway/config/config.hpp"
#include "gateway/console/console.hpp"
#include "gateway/http/origin_rule.hpp"

#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gateway::http {
class worker;
}
namespace gateway::admin {
class api;
class gatekeeper;
class key_ring;
class limiter;
}  // namespace gateway::admin
namespace gateway::passthrough {
class handler;
}
namespace gateway::upstream {
class health_share;
class routing;
}  // namespace gateway::upstream

namespace gateway::app {

// The composition root: the only place that reads the whole configuration and wires modules
// together. Owns the workers (one thread and io_context each) and the per-worker handlers.
// start/stop/wait may be called from any thread; stop() is idempotent.
class server {
public:
    explicit server(config::gateway_config config);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Builds TLS contexts, binds every worker's acceptor and starts the worker threads.
    // Returns an error message, or "" on success.
    std::string start();

    // The bound port (useful with `listen: 127.0.0.1:0`).
    std::uint16_t port() const { return port_; }
    std::size_t workers() const { return handlers_.size(); }
    // The connections each worker on the listening socket serves (see
    // http::worker::balance_with), in worker order.
    std::vector<std::size_t> connections_per_worker() const;
    // The port of metrics.listen when it is set (0 otherwise).
    std::uint16_t metrics_port() const { return metrics_port_; }

    // Graceful shutdown: every worker stops accepting and drains (see http::worker::drain).
    void stop();

    // Blocks until every worker thread has finished.
    void wait();

    const config::gateway_config& config() const { return config_; }

    // SIGHUP: loads the workflows again; a broken change keeps the old set. Returns the error.
    std::string reload_workflows();

private:
    // Parts of start(), each answering its error or "".
    std::string start_operations();
    std::string listen_for_metrics(const http::handler& scrape);
    std::unique_ptr<http::worker> make_worker(passthrough::handler& handler,
                                              const http::handler& scrape);

    config::gateway_config config_;
    console::site console_{console::embedded_assets()};
    std::unique_ptr<upstream::routing> routing_;
    std::unique_ptr<upstream::health_share> health_share_;  // limits.backend: redis
    bool tracing_ = false;  // this server started the trace exporter (stops it in wait())
    std::unique_ptr<context_service> context_;
    // Declared before the handlers: the handlers' pooled sockets belong to the workers'
    // io_contexts and must be destroyed first.
    std::vector<std::unique_ptr<http::worker>> workers_;
    // After the workers too: the Redis limiter's connections belong to their io_contexts.
    std::unique_ptr<admin::key_ring> keys_;
    std::unique_ptr<admin::limiter> limiter_;
    std::unique_ptr<admin::gatekeeper> gate_;
    std::unique_ptr<cache::response_cache> cache_;
    std::unique_ptr<admin::api> admin_;
    std::unique_ptr<http::origin_rule> origins_;  // Host/Origin check of every route
    std::vector<std::unique_ptr<passthrough::handler>> handlers_;
    std::vector<std::thread> threads_;
    std::uint16_t port_ = 0;
    std::uint16_t metrics_port_ = 0;
};

// `contextgate serve`: runs until SIGINT or SIGTERM, then drains. Returns the exit status.
int serve(const config::gateway_config& config);

}  // namespace gateway::app
