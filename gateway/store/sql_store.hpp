#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/record_rows.hpp"
#include "gateway/store/sql_driver.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/store/store_thread.hpp"

#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace gateway::store {

// The state_store, written once over the database driver (sql_driver.hpp): SQLite on one machine
// (sqlite_store.hpp), PostgreSQL for replicas (pg_store.hpp). Writes run on a writer thread
// that owns one connection; reads run on a reader thread with a connection of their own, so a
// large read never waits behind a write and no caller's thread ever waits on the database.
// A read sees every transaction committed before it began.
//
// Runs' commits are grouped: those that arrive while the writer is busy are written together in
// one transaction (and their events announced in one statement), so that many concurrent runs
// cost one transaction, not one each. When the group's transaction fails, its batches are
// written again one per transaction, so a batch that fails (lease_lost, a unique index) fails
// alone. Work reaches the writer in the order it was asked for: any other write closes the group
// before it.
//
// A run's row carries its driver and lease (`owner`, `lease_expires`): every write of a run is
// fenced by it (lease_lost when another replica holds the run now). On SQLite the owner is
// always "", so the fence always holds.
class sql_store : public state_store {
public:
    ~sql_store() override;  // finishes queued work, then joins the threads
    sql_store(const sql_store&) = delete;
    sql_store& operator=(const sql_store&) = delete;

    int schema_version();

    net::awaitable<void> insert_chat(chat_record chat) override;
    net::awaitable<std::optional<chat_record>> chat(std::string id) override;
    net::awaitable<std::vector<chat_record>> chats() override;
    net::awaitable<bool> delete_chat(std::string id) override;
    net::awaitable<message_page> messages(std::string chat_id, std::int64_t before_id,
                                          std::size_t limit) override;
    net::awaitable<recent_history> recent_messages(std::string chat_id,
                                                   std::size_t max_bytes) override;
    net::awaitable<bool> update_chat(std::string chat_id, chat_changes changes) override;
    net::awaitable<std::optional<document_record>> document(std::string chat_id) override;
    net::awaitable<document_write> put_document(std::string chat_id, std::string name,
                                                std::string content,
                                                std::optional<std::int64_t> base_version) override;

    net::awaitable<std::optional<run_record>> run(std::string id) override;
    net::awaitable<std::optional<gateway::run_status>> run_status(std::string id) override;
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
    net::awaitable<std::optional<backup_record>> last_backup(std::string run_id) override;
    net::awaitable<void> commit(write_batch batch) override;

    net::awaitable<std::vector<edit_session_record>> edit_sessions(std::string chat_id,
                                                                   bool open_only) override;
    net::awaitable<std::optional<edit_session_record>> edit_session(std::string id) override;
    net::awaitable<std::vector<session_edit_record>> session_edits(std::string session_id) override;
    net::awaitable<std::optional<session_edit_record>> session_edit_of_call(
        std::string call_id) override;
    net::awaitable<bool> save_edit_session(edit_session_record session,
                                           std::int64_t expected_revision,
                                           std::optional<session_edit_record> edit) override;

    net::awaitable<void> save_key(config::virtual_key key) override;
    net::awaitable<std::vector<key_record>> keys() override;
    net::awaitable<bool> revoke_key(std::string id) override;
    net::awaitable<void> add_usage(std::vector<usage_row> rows) override;
    net::awaitable<std::vector<usage_row>> usage(usage_query query) override;

    net::awaitable<void> save_team(team_record team) override;
    net::awaitable<std::vector<team_record>> teams() override;
    net::awaitable<bool> delete_team(std::string name) override;
    net::awaitable<void> append_audit(audit_record record) override;
    net::awaitable<std::vector<audit_record>> audit(audit_query query) override;

    net::awaitable<user_record> sign_in_user(user_sign_in who) override;
    net::awaitable<std::optional<user_record>> user(std::string id) override;
    net::awaitable<std::vector<user_record>> users() override;
    net::awaitable<bool> update_user(std::string id, std::optional<std::string> role,
                                     std::optional<std::string> team) override;
    net::awaitable<void> start_user_session(user_session_record session) override;
    net::awaitable<std::optional<signed_in_user>> user_session(std::string id_digest,
                                                               std::int64_t now,
                                                               std::int64_t idle_ms) override;
    net::awaitable<bool> end_user_session(std::string id_digest) override;
    net::awaitable<void> save_login(pending_login login) override;
    net::awaitable<std::optional<pending_login>> take_login(std::string state,
                                                            std::int64_t now) override;

protected:
    // Starts the threads on the two connections (the writer's already migrated). `owner` and
    // `lease` are what this store writes into the runs it drives.
    sql_store(std::unique_ptr<sql_connection> writer, std::unique_ptr<sql_connection> reader,
              std::string owner, config::duration lease);

    // Runs `work(db)` on the reader's / the writer's thread and resumes the caller with its result.
    template <class Work>
    auto read(Work work) {
        return reader_.run(std::move(work));
    }
    template <class Work>
    auto write(Work work) {
        close_commit_group();
        return writer_.run(std::move(work));
    }
    // One query on the reader's connection with `args` bound to $1, $2…: its rows through
    // `reader` (a record reader of record_rows.hpp), or the first one.
    template <class Reader, class... Args>
    net::awaitable<std::vector<std::invoke_result_t<Reader, const sql_row&>>> read_all(
        const char* sql, Reader reader, Args... args) {
        auto work = [sql, reader, ... args = std::move(args)](sql_connection& db) {
            return all_rows(db.query(sql, {sql_param(args)...}), reader);
        };
        auto rows = co_await read(std::move(work));
        co_return rows;
    }
    template <class Reader, class... Args>
    net::awaitable<std::optional<std::invoke_result_t<Reader, const sql_row&>>> read_one(
        const char* sql, Reader reader, Args... args) {
        auto work = [sql, reader, ... args = std::move(args)](sql_connection& db) {
            return one_row(db.query(sql, {sql_param(args)...}), reader);
        };
        auto row = co_await read(std::move(work));
        co_return row;
    }
    // One statement on the writer's connection; whether it changed a row.
    template <class... Args>
    net::awaitable<bool> write_changes(const char* sql, Args... args) {
        auto work = [sql, ... args = std::move(args)](sql_connection& db) {
            return db.query(sql, {sql_param(args)...}).affected() > 0;
        };
        auto changed = co_await write(std::move(work));
        co_return changed;
    }

    // A lease taken or renewed now runs until this (Unix ms).
    std::int64_t lease_end() const;

    const std::string owner_;
    const config::duration lease_;

private:
    // A commit waiting for its group's transaction; `done` resumes its caller.
    struct queued_commit {
        write_batch batch;
        std::function<void(std::exception_ptr)> done;
    };
    struct commit_group {
        std::vector<queued_commit> commits;
        bool open = true;  // later commits may join it
    };
    void queue_commit(queued_commit commit);
    void close_commit_group();
    // On the writer's thread: the oldest group, in one transaction.
    void write_commit_group(sql_connection& db);

    store_thread<sql_connection> writer_;
    store_thread<sql_connection> reader_;
    std::mutex groups_mutex_;
    std::deque<commit_group> groups_;  // one writer task queued per group
};

}  // namespace gateway::store
