#pragma once

#include "gateway/agent/run_command.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/io/task_group.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gateway::agent {

namespace net = boost::asio;

// How the replicas sharing a store reach each other's runs. A command for a run another replica
// drives is posted through the store; that replica, woken by the database's notification,
// applies it and stores the answer, whose notification wakes the asker (no polling: a lost
// connection is the one way to miss a notification, and a reconnect makes both sides look
// again). Engine thread only, apart from construction.
class replica_link {
public:
    // Applies a command to a run this replica drives, without forwarding it again.
    using applier = std::function<net::awaitable<command_answer>(std::string run_id, run_command)>;
    // Whether this replica drives the run now; the runs it drives.
    using drives = std::function<bool(const std::string& run_id)>;
    using driven = std::function<std::vector<std::string>()>;

    replica_link(net::io_context& engine, store::replica_coordination& replicas,
                 run_journal& journal);

    // Starts hearing the other replicas.
    void start(applier apply, drives is_driven, driven all_driven);
    // Engine thread: stops waiting for answers and serving new commands (the ones being applied
    // finish; the engine's io_context runs until they have).
    void stop();

    // Engine thread: hands `command` to the replica driving `run_id` and waits for its answer;
    // replica_unreachable when none came before a dead owner's lease could expire and its run
    // be claimed and served by another replica.
    net::awaitable<command_answer> ask_owner(std::string run_id, run_command command);
    // Engine thread: answers the commands waiting in the store for `run_id`, if this replica
    // drives it.
    net::awaitable<void> serve(std::string run_id);

private:
    net::io_context& io_;
    store::replica_coordination& replicas_;
    run_journal& journal_;
    applier apply_;
    drives is_driven_;
    driven all_driven_;
    io::task_group tasks_;
    bool stopping_ = false;
    // Runs whose commands are being served (true: asked again meanwhile, look once more), and
    // the timers of commands waiting for another replica's answer.
    std::map<std::string, bool> serving_;
    std::map<std::int64_t, std::shared_ptr<net::steady_timer>> asking_;
};

}  // namespace gateway::agent
