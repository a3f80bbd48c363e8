#pragma once

#include "gateway/config/config.hpp"
#include "gateway/http/router.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <functional>
#include <list>
#include <vector>

namespace gateway::http {

// A live session as the worker sees it: enough to close it on shutdown.
struct session_entry {
    net::ip::tcp::socket* stream;
    bool busy = false;  // between the first byte of a request and the end of its response
};

// One worker thread's share of the server, in the style of an nginx worker: its own io_context
// (run by exactly one thread, so nothing here needs a lock), its own acceptor on the one
// listening socket of the process, its own router and sessions. Every method must run on the
// worker's thread, except the constructor, listen() and share_listener(), which run before the
// thread starts.
class worker {
public:
    worker(const config::server_config& server, bool access_log, router routes);

    net::io_context& io() { return io_; }
    const config::server_config& server() const { return server_; }
    const router& routes() const { return router_; }
    bool access_log() const { return access_log_; }
    const bool& draining() const { return draining_; }

    // Binds and listens (port 0 resolved into `bound`). Without SO_REUSEPORT, on purpose: a
    // second process asking for the same port fails at start (EADDRINUSE) instead of silently
    // sharing the traffic. Only the first worker listens; the others share_listener().
    boost::system::error_code listen(const net::ip::tcp::endpoint& at,
                                     net::ip::tcp::endpoint& bound);
    // Accepts on `first`'s listening socket too (a duplicate descriptor of it): the workers
    // take turns at the same queue, and the port is released once every worker closed its copy.
    boost::system::error_code share_listener(const worker& first);
    // The workers that share the listening socket, this one included. Whichever worker's accept
    // wins the race for a new connection (the kernel wakes them all, and the first one awake
    // tends to take a whole burst), the connection is served by the one with the fewest
    // connections: without it, 50 connections opened at once split 70/30 between two workers.
    // Set before start().
    void balance_with(std::vector<worker*> peers) { peers_ = std::move(peers); }
    // Connections this worker serves, or has been handed and not yet started. Read by peers.
    std::size_t load() const { return load_.load(std::memory_order_relaxed); }

    // Starts accepting. Sessions are owned by the worker: drain() ends them all.
    void start();

    // Graceful shutdown: stop accepting, close idle connections, run the drain hooks (which
    // release pooled upstream connections), let busy sessions finish their current response
    // (then close). At drain_time the drain-over hooks stop the requests still waiting for an
    // answer to start (a backoff, a stalled upstream), which answer 503 within `last_words`;
    // then whatever is left is closed. The worker's thread returns once nothing is left:
    // anything still pending on its io_context delays that.
    void drain();
    static constexpr std::chrono::milliseconds last_words{500};

    // Called once by drain(), on the worker's thread. Registered before start().
    void on_drain(std::function<void()> hook) { drain_hooks_.push_back(std::move(hook)); }
    // Called once when drain_time is over, on the worker's thread, before the connections left
    // are closed. Registered before start().
    void on_drain_over(std::function<void()> hook) { drain_over_hooks_.push_back(std::move(hook)); }

    // Session bookkeeping, used by run_session.
    std::list<session_entry>::iterator add_session(net::ip::tcp::socket& stream);
    void remove_session(std::list<session_entry>::iterator it);

private:
    net::awaitable<void> run_listener();
    // The peer (or this worker) that serves a connection accepted now; its load counts it.
    worker& least_loaded();
    // Gives an accepted connection to `serving`, another worker, which adopt()s it.
    void hand_over(worker& serving, net::ip::tcp::socket& socket);
    // Runs a session on this worker for a connection another worker accepted.
    void adopt(int descriptor, net::ip::tcp protocol);

    net::io_context io_{1};
    const config::server_config& server_;
    bool access_log_;
    router router_;
    net::ip::tcp::acceptor acceptor_;
    net::steady_timer drain_deadline_;
    std::list<session_entry> sessions_;
    std::vector<std::function<void()>> drain_hooks_;
    std::vector<std::function<void()>> drain_over_hooks_;
    bool draining_ = false;
    std::vector<worker*> peers_;
    std::atomic<std::size_t> load_{0};
    observability::gauge& open_connections_ = observability::metrics().http_open_connections.with();
};

}  // namespace gateway::http
