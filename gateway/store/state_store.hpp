#pragma once

#include "gateway/store/records.hpp"

#include <boost/asio/awaitable.hpp>

#include "gateway/clock.hpp"
#include "gateway/config/config.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::store {

namespace net = boost::asio;

class replica_coordination;

// Where the gateway keeps its state: chats, messages, runs with their conversations, events,
// tool calls, approvals, documents, write backups, edit sessions, virtual keys and usage, users
// and their sessions. The interface is split by role (chat_store, run_store, session_store,
// key_store, identity_store) so a module sees only what it uses; state_store is all of them, and
// sql_store (sql_store.hpp) implements it on SQLite and PostgreSQL.
//
// Every method is awaitable and never blocks the caller's thread: an implementation does its
// I/O on threads of its own and resumes the caller on the caller's executor. Arguments are
// taken by value (they outlive the caller's full-expression). Writes that belong together go in
// one commit(); each other write method is one transaction. Reads see every commit that
// completed before they were issued.
//
// Expected outcomes are values (nullopt, `conflict`); failures of the medium (a full disk, a
// corrupt file, a lost server) are thrown as store_error and end the request or the run.
// Thread-safe: callable from any thread.

// Chats, their messages and their document.
class chat_store {
public:
    virtual ~chat_store() = default;

    virtual net::awaitable<void> insert_chat(chat_record chat) = 0;
    virtual net::awaitable<std::optional<chat_record>> chat(std::string id) = 0;
    virtual net::awaitable<std::vector<chat_record>> chats() = 0;
    // Deletes the chat with everything it owns; false when there was none.
    virtual net::awaitable<bool> delete_chat(std::string id) = 0;
    // Changes a chat's edit mode (`approve` | `review`) and/or title; false when there is no
    // such chat.
    virtual net::awaitable<bool> update_chat(std::string chat_id, chat_changes changes) = 0;

    // A chat's messages: `limit` of them before the message id `before_id` (0: the newest).
    virtual net::awaitable<message_page> messages(std::string chat_id, std::int64_t before_id,
                                                  std::size_t limit) = 0;
    // The newest messages whose contents add up to at most `max_bytes`.
    virtual net::awaitable<recent_history> recent_messages(std::string chat_id,
                                                           std::size_t max_bytes) = 0;

    // The chat's document. put_document writes when `base_version` is absent or equal to the
    // stored version (none stored counts as 0); otherwise nothing is written and the result
    // has `conflict` with the current version.
    virtual net::awaitable<std::optional<document_record>> document(std::string chat_id) = 0;
    virtual net::awaitable<document_write> put_document(
        std::string chat_id, std::string name, std::string content,
        std::optional<std::int64_t> base_version) = 0;
};

// Runs: their rows, conversations, events, tool calls, approvals and write backups, and the
// batch every run's step commits.
class run_store {
public:
    virtual ~run_store() = default;

    virtual net::awaitable<std::optional<run_record>> run(std::string id) = 0;
    // The run's status alone (gateway:: because this function's name hides the type's here).
    virtual net::awaitable<std::optional<gateway::run_status>> run_status(std::string id) = 0;
    virtual net::awaitable<std::vector<run_record>> runs_of_chat(std::string chat_id) = 0;
    // Runs that were running or awaiting approval: what a start resumes.
    virtual net::awaitable<std::vector<run_record>> unfinished_runs() = 0;
    virtual net::awaitable<std::vector<run_message_record>> run_messages(std::string run_id) = 0;
    // The user message that started the run, if any.
    virtual net::awaitable<std::optional<std::string>> run_input(std::string run_id) = 0;

    // The run's events after `after_seq`, in order: at most `max_events`, and no more once their
    // data adds up to `max_bytes` (at least one when there is one).
    virtual net::awaitable<std::vector<event_record>> events_after(std::string run_id,
                                                                   std::int64_t after_seq,
                                                                   std::size_t max_events,
                                                                   std::size_t max_bytes) = 0;
    // The run's highest event sequence number, 0 when it has none.
    virtual net::awaitable<std::int64_t> last_event(std::string run_id) = 0;

    virtual net::awaitable<std::optional<tool_call_record>> tool_call(std::string id) = 0;
    virtual net::awaitable<std::vector<tool_call_record>> tool_calls(std::string run_id) = 0;
    virtual net::awaitable<std::optional<approval_record>> approval(std::string call_id) = 0;
    // The run's newest applied write not yet undone, if any.
    virtual net::awaitable<std::optional<backup_record>> last_backup(std::string run_id) = 0;

    // Everything in `batch`, in one transaction.
    virtual net::awaitable<void> commit(write_batch batch) = 0;

    // How gateways sharing this store coordinate; null when no other gateway can use it (SQLite:
    // the data folder's lock keeps it to one process).
    virtual replica_coordination* replicas() { return nullptr; }
};

// Edit sessions (review mode) and their edits.
class session_store {
public:
    virtual ~session_store() = default;

    // The chat's sessions, oldest first (`open_only`: those still open).
    virtual net::awaitable<std::vector<edit_session_record>> edit_sessions(std::string chat_id,
                                                                           bool open_only) = 0;
    virtual net::awaitable<std::optional<edit_session_record>> edit_session(std::string id) = 0;
    virtual net::awaitable<std::vector<session_edit_record>> session_edits(
        std::string session_id) = 0;
    // The edit a tool call recorded, if it did: a call resumed after a crash records nothing twice.
    virtual net::awaitable<std::optional<session_edit_record>> session_edit_of_call(
        std::string call_id) = 0;
    // Writes `session` when it is new (`expected_revision` 0: no open session for its target may
    // exist) or when the stored one is still at `expected_revision` (every change bumps it, so a
    // writer that read an older one, e.g. before the session was resolved, is refused); its
    // revision becomes expected_revision + 1. `edit`, when given, is appended in the same
    // transaction. False, and nothing written, otherwise.
    virtual net::awaitable<bool> save_edit_session(edit_session_record session,
                                                   std::int64_t expected_revision,
                                                   std::optional<session_edit_record> edit) = 0;
};

// Virtual keys and token usage: the operations side.
class key_store {
public:
    virtual ~key_store() = default;

    // Virtual keys: inserted or updated by id; every key ever made (revoked ones with their
    // revoked_at); revoke is false when there was no such live key.
    virtual net::awaitable<void> save_key(config::virtual_key key) = 0;
    virtual net::awaitable<std::vector<key_record>> keys() = 0;
    virtual net::awaitable<bool> revoke_key(std::string id) = 0;

    // Usage (tokens, cost, cache hits): `rows` added to the day's totals (one transaction); the
    // report for `query`, one row per group it asks for, ordered by day, key, model and upstream.
    virtual net::awaitable<void> add_usage(std::vector<usage_row> rows) = 0;
    virtual net::awaitable<std::vector<usage_row>> usage(usage_query query) = 0;
};

// People who sign in through the identity provider (auth/): users, their sessions and the
// sign-ins under way. Every replica sharing the store sees the same ones, so any may finish a
// sign-in or serve a session. Times are Unix ms.
class identity_store {
public:
    virtual ~identity_store() = default;

    // The user `who` names (by issuer and subject), created at their first sign-in, else their
    // email and name refreshed, and their role and team where `who` sets them; as stored now.
    virtual net::awaitable<user_record> sign_in_user(user_sign_in who) = 0;
    virtual net::awaitable<std::optional<user_record>> user(std::string id) = 0;
    // Every user, by creation.
    virtual net::awaitable<std::vector<user_record>> users() = 0;
    // Sets the user's role and/or team (an admin's change); false when there is no such user.
    virtual net::awaitable<bool> update_user(std::string id, std::optional<std::string> role,
                                             std::optional<std::string> team) = 0;

    // Stores a new session (and drops the sessions that ended before `session.created_at`).
    virtual net::awaitable<void> start_user_session(user_session_record session) = 0;
    // The live session whose id has the digest `id_digest`, with its user: none when there is
    // none, it was unused for `idle_ms` or `now` is past its absolute end. A request marks it
    // used (written at most once a minute).
    virtual net::awaitable<std::optional<signed_in_user>> user_session(std::string id_digest,
                                                                       std::int64_t now,
                                                                       std::int64_t idle_ms) = 0;
    // Ends the session; false when there was none.
    virtual net::awaitable<bool> end_user_session(std::string id_digest) = 0;

    // Keeps a sign-in under way until it is taken (and drops those that expired).
    virtual net::awaitable<void> save_login(pending_login login) = 0;
    // The sign-in `state` names, removed so it is taken once; none when there is none or it
    // expired before `now`.
    virtual net::awaitable<std::optional<pending_login>> take_login(std::string state,
                                                                    std::int64_t now) = 0;
};

// Teams made through /admin/teams (the configuration's are not stored).
class team_store {
public:
    virtual ~team_store() = default;

    // Inserted or updated by name; every stored team; delete is false when there was none.
    virtual net::awaitable<void> save_team(team_record team) = 0;
    virtual net::awaitable<std::vector<team_record>> teams() = 0;
    virtual net::awaitable<bool> delete_team(std::string name) = 0;
};

// The audit log: every admin change, appended, never changed.
class audit_store {
public:
    virtual ~audit_store() = default;

    virtual net::awaitable<void> append_audit(audit_record record) = 0;
    // The records `query` asks for, newest first, at most its limit.
    virtual net::awaitable<std::vector<audit_record>> audit(audit_query query) = 0;
};

// All of the store's roles: what the service that opens the store holds and hands out by role.
class state_store : public chat_store,
                    public run_store,
                    public session_store,
                    public key_store,
                    public identity_store,
                    public team_store,
                    public audit_store {};

// A request for a run that another replica drives (a decision, a cancel, an event to append),
// handed over through the shared store. `body` and the answer are JSON.
struct run_request {
    std::int64_t id = 0;
    std::string run_id;
    std::string kind;
    std::string body;
};

// What the other replicas did, as the store hears it (on a thread of its own: a receiver posts
// to its executor and returns).
struct replica_signals {
    // Another replica committed the run's events up to `seq`.
    std::function<void(const std::string& run_id, std::int64_t seq)> events;
    // A request for the run waits in the store.
    std::function<void(const std::string& run_id)> requests;
    // The request `id` was answered.
    std::function<void(std::int64_t id)> answered;
    // The store lost and regained its connection: signals may have been missed.
    std::function<void()> reconnected;
};

// Replicas sharing one store (PostgreSQL). A run is driven by one replica at a time, the one
// holding its lease (the owner and an expiry in the run's row, renewed while it drives the run):
// a replica that dies stops renewing, and another one claims the run once the lease expired and
// resumes it as a restart would. Every write of a run is fenced by its lease (lease_lost). The
// replica that receives a decision or a cancel for a run driven elsewhere posts it as a request;
// the owner, woken by a notification, applies and answers it. Committed events are announced to
// every replica, which serve their watchers from the store.
class replica_coordination {
public:
    virtual ~replica_coordination() = default;

    // This gateway's name among the replicas: "<host>-<pid>-<random>".
    virtual const std::string& replica_id() const = 0;
    virtual config::duration lease_timeout() const = 0;

    // The unfinished runs whose lease expired (or was given up), now leased to this replica.
    virtual net::awaitable<std::vector<run_record>> claim_runs() = 0;
    // Extends this replica's leases; the ids of the unfinished runs it still holds.
    virtual net::awaitable<std::vector<std::string>> renew_leases() = 0;
    // Gives up this replica's leases (it stops; its runs stay resumable) so another replica
    // takes them over at once.
    virtual net::awaitable<void> release_leases() = 0;

    // Stores `request` and wakes the replicas; its id.
    virtual net::awaitable<std::int64_t> post_request(run_request request) = 0;
    // The run's requests not yet answered, oldest first.
    virtual net::awaitable<std::vector<run_request>> pending_requests(std::string run_id) = 0;
    virtual net::awaitable<void> answer_request(std::int64_t id, std::string answer) = 0;
    // The request's answer, taken (the request is removed), once it has one.
    virtual net::awaitable<std::optional<std::string>> take_answer(std::int64_t id) = 0;
    // Removes the request if nobody answered it yet; false when it was answered meanwhile.
    virtual net::awaitable<bool> withdraw_request(std::int64_t id) = 0;

    // Starts hearing the other replicas; `signals` are called until stop_listening() or the
    // store's destruction.
    virtual void listen(replica_signals signals) = 0;
    // Stops hearing them and waits for the listener to end: no signal is called after it (what
    // the signals reach may go away then).
    virtual void stop_listening() = 0;
    // Calls `changed` (on the listener's thread) when a replica made, changed or revoked a
    // virtual key or a team, and each time the listener (re)started listening (it may have
    // missed some before). Heard once listen() started the listener.
    virtual void on_keys_changed(std::function<void()> changed) = 0;
};

// A failure of the medium, never of the caller's input (see state_store).
struct store_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The one text rule of both stores: a text holding a NUL character is refused, never stored
// (PostgreSQL's text type cannot hold one, and libpq would cut it there; SQLite would keep it:
// the stores must not disagree). Callers check input first (http::body_object refuses NUL);
// reaching this is a bug or content the caller did not clean, and ends the write.
struct text_holds_nul : store_error {
    text_holds_nul() : store_error("a text value holds a NUL character, which no store keeps") {}
};

// Throws text_holds_nul when `text` holds a NUL. Both database drivers call it for every text
// they bind.
inline void check_stored_text(std::string_view text) {
    if (text.find('\0') != std::string_view::npos) throw text_holds_nul();
}

// A unique index refused a row: the store turns the ones it expects into values or into the
// errors below.
struct unique_violation : store_error {
    unique_violation(std::string constraint, const std::string& what)
        : store_error(what), constraint(std::move(constraint)) {}
    std::string constraint;
};

// commit() was asked to store a second unfinished run for a chat: one live run per chat is the
// database's rule, whichever replica asks.
struct live_run_exists : store_error {
    using store_error::store_error;
};

// commit() was asked to write a run whose lease another replica now holds: this replica must
// stop driving it, writing nothing more.
struct lease_lost : store_error {
    using store_error::store_error;
};

}  // namespace gateway::store
