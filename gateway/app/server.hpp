#pragma once

#include "gateway/app/context_service.hpp"
#include "gateway/app/generation.hpp"
#include "gateway/config/config.hpp"
#include "gateway/console/console.hpp"
#include "gateway/http/origin_rule.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gateway::http {
class worker;
}
namespace gateway::admin {
class api;
class budget_alerts;
class gatekeeper;
class key_ring;
class limiter;
class team_book;
}  // namespace gateway::admin
namespace gateway::auth {
class sessions;
class sign_in;
}  // namespace gateway::auth
namespace gateway::http {
struct reply;
struct request_context;
}  // namespace gateway::http

namespace gateway::app {

// How a reload went (server::reload).
struct reload_outcome {
    bool applied = false;
    std::string error;             // not applied: why (a file's errors name their line)
    std::uint64_t generation = 0;  // the configuration serving now (1 at start)
    // Sections that differ in the file but need a restart to change; the running ones stay.
    std::vector<std::string> restart_needed;
    std::string workflows_error;  // the workflows were not loaded again (the old set stays)
};

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
    std::size_t workers() const { return slots_.size(); }
    // The connections each worker on the listening socket serves (see
    // http::worker::balance_with), in worker order.
    std::vector<std::size_t> connections_per_worker() const;
    // The port of metrics.listen when it is set (0 otherwise).
    std::uint16_t metrics_port() const { return metrics_port_; }

    // Graceful shutdown: every worker stops accepting and drains (see http::worker::drain).
    void stop();

    // Blocks until every worker thread has finished.
    void wait();

    // The configuration it started with (a reload changes what generation() holds).
    const config::gateway_config& config() const { return config_; }
    // What serves new requests now.
    std::shared_ptr<const generation> current() const;

    // Loads the workflows again; a broken change keeps the old set. Returns the error.
    std::string reload_workflows();

    // Switches to `next` for every request, run step and admin read that starts from now on;
    // those in flight finish on the generation they started with. Nothing changes when `next`
    // cannot be built. Sections a running process cannot change keep their running values and
    // are named in the outcome. Reloads are taken one at a time; any thread but a worker's.
    reload_outcome reload(config::gateway_config next);
    // SIGHUP and POST /admin/reload: the configuration file read again (a file that does not
    // validate changes nothing and its errors are the outcome's), then the workflows.
    reload_outcome reload_file();

private:
    // One worker's /v1 handler over a generation, and the generation it reads.
    struct v1_face;
    // Which face a worker's /v1 requests go to (and the faces before it that still serve
    // requests in flight); read and changed on that worker's thread only.
    struct v1_slot;

    // Parts of start(), each answering its error or "".
    std::string start_operations();
    std::string listen_for_metrics(const http::handler& scrape);
    std::unique_ptr<http::worker> make_worker(v1_slot& slot, const http::handler& scrape);
    std::shared_ptr<v1_face> make_face(std::shared_ptr<const generation> g);
    // POST /admin/reload: reload_file() on a thread of its own, its outcome as JSON.
    boost::asio::awaitable<http::reply> reload_request(http::request_context& ctx);

    config::gateway_config config_;
    console::site console_{console::embedded_assets()};
    std::string replica_;      // this process's name on the shared health channel
    std::mutex reload_mutex_;  // one reload at a time; guards stopping_
    // Read by requests (the admin API, the scrape) while a reload holds reload_mutex_ and waits
    // for the workers: a lock of its own, held only to copy or replace the pointer.
    mutable std::mutex current_mutex_;
    std::shared_ptr<generation> generation_;
    bool stopping_ = false;
    boost::asio::thread_pool reloads_{1};  // where POST /admin/reload does its work
    bool tracing_ = false;  // this server started the trace exporter (stops it in wait())
    std::unique_ptr<context_service> context_;
    // Declared before the handlers: the handlers' pooled sockets belong to the workers'
    // io_contexts and must be destroyed first.
    std::vector<std::unique_ptr<http::worker>> workers_;
    // After the workers too: the Redis limiter's connections belong to their io_contexts.
    std::unique_ptr<admin::key_ring> keys_;
    std::unique_ptr<admin::team_book> teams_;  // declared and made teams
    std::unique_ptr<admin::limiter> limiter_;
    std::unique_ptr<admin::budget_alerts> alerts_;
    std::unique_ptr<admin::gatekeeper> gate_;
    std::unique_ptr<auth::sessions> sessions_;  // who asks: the admin key, a session
    std::unique_ptr<auth::sign_in> sign_in_;    // /auth
    std::unique_ptr<admin::api> admin_;
    std::unique_ptr<http::origin_rule> origins_;   // Host/Origin check of every route
    std::vector<std::unique_ptr<v1_slot>> slots_;  // one per worker that serves requests
    std::vector<std::thread> threads_;
    std::uint16_t port_ = 0;
    std::uint16_t metrics_port_ = 0;
};

// `contextgate serve`: runs until SIGINT or SIGTERM, then drains. Returns the exit status.
int serve(const config::gateway_config& config);

}  // namespace gateway::app
