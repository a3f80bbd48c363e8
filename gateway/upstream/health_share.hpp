#pragma once

#include "gateway/io/redis.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Health shared by replicas (docs/routing.md): with `limits.backend: redis`, each change a
// replica's health board decides (a target cooled, restored, its key refused) is published on
// the Redis channel `contextgate:health`, and every replica applies the others' changes to its
// own board. A cooldown is also kept as a key that expires with it, so a replica that starts (or
// reconnects) meanwhile reads it. A refused key is only published: a replica that restarts with
// its configuration tries the key again.
//
// A change names its target by upstream name and model, with a fingerprint of the upstream's
// address and key: a replica whose upstream of that name has another key or address ignores it.
//
// Redis is never on a request's path: the boards decide locally and the sharing runs on a
// thread of its own. When Redis is down, each replica keeps its own health and the outage is
// logged once; sharing resumes when it is back.
namespace gateway::upstream {

namespace net = boost::asio;

class health_share {
public:
    // `replica`: this process's name in the messages (its own are ignored when they come back).
    health_share(io::redis_address address, health_board& board,
                 const std::vector<config::upstream_config>& upstreams, std::string replica);
    ~health_share();
    health_share(const health_share&) = delete;
    health_share& operator=(const health_share&) = delete;

    // Ends the sharing: closes the connections and joins the thread.
    void stop();

    // The message that tells `c` to the others, and the change a message tells (nullopt: not
    // for this replica's targets, or its own). Public for the tests.
    std::string message(const health_board::change& c) const;
    std::optional<health_board::change> read(std::string_view message) const;

private:
    void publish(health_board::change c);
    net::awaitable<void> subscribe();
    net::awaitable<void> send_queued();
    net::awaitable<bool> load(io::redis_connection& conn);
    void outage(const std::string& problem);

    io::redis_address address_;
    health_board& board_;
    std::vector<std::string> names_;         // the upstreams' names, by index
    std::vector<std::string> fingerprints_;  // of each upstream's address and key
    std::string replica_;

    net::io_context io_;
    // The subscriber and the sender, owned here: stop() cancels them and the thread runs until
    // they have ended.
    io::task_group tasks_;
    std::deque<std::vector<std::string>> queue_;  // commands to send, on io_'s thread only
    bool sending_ = false;
    bool stopping_ = false;
    bool down_ = false;  // an outage was logged and not yet over
    std::unique_ptr<io::redis_connection> listener_;
    std::unique_ptr<io::redis_connection> writer_;
    std::optional<net::steady_timer> pause_;
    std::thread thread_;
};

}  // namespace gateway::upstream
