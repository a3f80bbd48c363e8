#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/sql_store.hpp"
#include "gateway/store/state_store.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gateway::store {

// The store for several gateways: sql_store on PostgreSQL through libpq, migrated at open
// (under an advisory lock, so replicas starting together migrate once). A third connection
// LISTENs for what the other replicas announce. It is also the replicas' coordination: run
// leases, requests for runs driven elsewhere, and NOTIFY after every commit with events
// (carrying only the run id, the sequence number and the replica).
class pg_store final : public sql_store, public replica_coordination {
public:
    static config::parsed<std::unique_ptr<pg_store>> open(const config::store_config& config);
    ~pg_store() override;

    replica_coordination* replicas() override { return this; }

    // replica_coordination
    const std::string& replica_id() const override { return owner_; }
    config::duration lease_timeout() const override { return lease_; }
    net::awaitable<std::vector<run_record>> claim_runs() override;
    net::awaitable<std::vector<std::string>> renew_leases() override;
    net::awaitable<void> release_leases() override;
    net::awaitable<std::int64_t> post_request(run_request request) override;
    net::awaitable<std::vector<run_request>> pending_requests(std::string run_id) override;
    net::awaitable<void> answer_request(std::int64_t id, std::string answer) override;
    net::awaitable<std::optional<std::string>> take_answer(std::int64_t id) override;
    net::awaitable<bool> withdraw_request(std::int64_t id) override;
    void listen(replica_signals signals) override;
    void on_keys_changed(std::function<void()> changed) override;
    void stop_listening() override;

private:
    pg_store(std::unique_ptr<sql_connection> writer, std::unique_ptr<sql_connection> reader,
             std::string dsn, std::string replica, config::duration lease);
    // The listening thread: LISTENs, hands each notification to `signals`, reconnects.
    void hear(replica_signals signals);

    std::string dsn_;
    std::mutex keys_mutex_;
    std::function<void()> keys_changed_;  // guarded by keys_mutex_
    void keys_changed();
    std::thread listener_;
    std::atomic<bool> stopping_ = false;
};

}  // namespace gateway::store
