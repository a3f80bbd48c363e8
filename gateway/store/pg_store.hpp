#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/pg_database.hpp"
#include "gateway/store/pg_schema.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/store/store_thread.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace gateway::store {

// The state_store for several gateways: PostgreSQL through libpq, migrated at open (versioned,
// under an advisory lock, so replicas starting together migrate once). Like sqlite_store, writes
// and reads run on two threads of its own, each with its connection; a third connection LISTENs
// for what the other replicas announce. It is also the replicas' coordination: run leases,
// requests for runs driven elsewhere, and NOTIFY after every commit with events (carrying only
// the run id, the sequence number and the replica).
class pg_store final : public state_store, public replica_coordination {
public:
    static config::parsed<std::unique_ptr<pg_store>> open(const config::store_config& config);
    ~pg_store() override;
    pg_store(const pg_store&) = delete;
    pg_store& operator=(const pg_store&) = delete;

    int schema_version();

    // state_store
    net::awaitable<void> insert_chat(chat_record chat) override;
    net::awaitable<std::optional<chat_record>> chat(std::string id) override;
    net::awaitable<std::vector<chat_record>> chats() override;
    net::awaitable<bool> delete_chat(std::string id) override;
    net::awaitable<message_page> messages(std::string chat_id, std::int64_t before_id,
                                          std::size_t limit) override;
    net::awaitable<recent_history> recent_messages(std::string chat_id,
                                                   std::size_t max_bytes) override;
    net::awaitable<std::optional<run_record>> run(std::string id) override;
    net::awaitable<std::optional<std::string>> run_status(std::string id) override;
    net::awaitable<std::vector<run_record>> runs_of_chat(std::string chat_id) override;
    net::awaitable<std::vector<run_record>> unfinished_runs() override;
    net::awaitable<std::vector<run_message_record>> run_messages(std::string run_id) override;
    net::awaitable<std::optional<std::string>> run_input(std::string run_id) override;
    net::awaitable<std::vector<event_record>> events_after(std::string run_id,
                                                           std::int64_t after_seq,
                                                           std::size_t max_events,
                                                           std::size_t max_bytes) override;
    net::awaitable<std::int64_t> last_event(std::string run_id) override;
    net::awaitable<std::optional<tool_call_record>> tool_call(std::string id) override;
    net::awaitable<std::vector<tool_call_record>> tool_calls(std::string run_id) override;
    net::awaitable<std::optional<approval_record>> approval(std::string call_id) override;
    net::awaitable<std::optional<document_record>> document(std::string chat_id) override;
    net::awaitable<document_write> put_document(std::string chat_id, std::string name,
                                                std::string content,
                                                std::optional<std::int64_t> base_version) override;
    net::awaitable<bool> update_chat(std::string chat_id, chat_changes changes) override;
    net::awaitable<std::vector<edit_session_record>> edit_sessions(std::string chat_id,
                                                                   bool open_only) override;
    net::awaitable<std::optional<edit_session_record>> edit_session(std::string id) override;
    net::awaitable<std::vector<session_edit_record>> session_edits(std::string session_id) override;
    net::awaitable<std::optional<session_edit_record>> session_edit_of_call(
        std::string call_id) override;
    net::awaitable<bool> save_edit_session(edit_session_record session,
                                           std::int64_t expected_revision,
                                           std::optional<session_edit_record> edit) override;
    net::awaitable<std::optional<backup_record>> last_backup(std::string run_id) override;
    net::awaitable<void> commit(write_batch batch) override;
    net::awaitable<void> save_key(key_record key) override;
    net::awaitable<std::vector<key_record>> keys() override;
    net::awaitable<bool> revoke_key(std::string id) override;
    net::awaitable<void> add_usage(std::vector<usage_row> rows) override;
    net::awaitable<std::vector<usage_row>> usage(usage_query query) override;
    replica_coordination* replicas() override { return this; }

    // replica_coordination
    const std::string& replica_id() const override { return replica_; }
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

private:
    pg_store() = default;
    template <class Work>
    auto read(Work work) {
        return reader_.run(std::move(work));
    }
    template <class Work>
    auto write(Work work) {
        return writer_.run(std::move(work));
    }
    // The listening thread: LISTENs, hands each notification to `signals`, reconnects.
    void hear(replica_signals signals);
    // A lease taken or renewed now runs until this (Unix ms).
    std::int64_t lease_end() const;

    std::string dsn_;
    std::string replica_;
    config::duration lease_{15'000};
    store_thread<pg_database> writer_;
    store_thread<pg_database> reader_;
    std::thread listener_;
    std::atomic<bool> stopping_ = false;
};

}  // namespace gateway::store
