#pragma once

#include "gateway/config/config.hpp"
#include "gateway/config/virtual_key.hpp"
#include "gateway/edit_mode.hpp"
#include "gateway/record_status.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The rows of the Context API's state, as plain structs: what a state_store keeps and returns.
// JSON columns hold serialized JSON text; times are Unix milliseconds. Statuses are typed here and
// stored by their names (record_status.hpp); a row holding another name is refused as corrupt.
namespace gateway::store {

struct chat_record {
    std::string id;
    std::int64_t created_at = 0;
    std::string system_prompt;
    std::string model;
    std::string workspace;
    std::string role;
    edit_mode edits = edit_mode::approve;  // stored by its name
    std::string title;                     // the human's name for it, or the first message's start
    // The signed-in user who made it (users.id): they, their team's admin and the admins see it.
    // "": made with a key or on an open gateway, for the keys' holders and the admins only.
    std::string user;
};

// What PATCH may change on a chat; unset members stay as they are.
struct chat_changes {
    std::optional<edit_mode> edits;
    std::optional<std::string> title;
};

struct message_record {
    std::int64_t id = 0;  // assigned by the store
    std::string chat_id;
    std::string run_id;  // empty for messages outside a run
    std::string role;    // user | assistant
    std::string content;
    std::int64_t created_at = 0;
};

struct run_record {
    std::string id;
    std::string chat_id;
    run_status status = run_status::running;
    int step = 0;
    int max_steps = 0;
    std::string output;
    std::string error;
    std::string state;  // agent::run_state in its stored form
    std::int64_t created_at = 0;
    std::int64_t updated_at = 0;
};

// One message of a run's conversation (what the model is sent), appended once. `format` says how
// the engine wrote `content`: 1, a role and its text (rows written before the conversation was
// typed); 2, the whole message as JSON (agent/conversation.hpp reads both).
struct run_message_record {
    std::string run_id;
    std::int64_t seq = 0;  // 0, 1, 2… per run
    std::string role;
    std::string content;
    std::int64_t format = 2;
};

struct event_record {
    std::string run_id;
    std::int64_t seq = 0;  // 1, 2, 3… per run: the SSE id
    std::string type;
    std::string data;  // JSON
    std::int64_t created_at = 0;
};

struct tool_call_record {
    std::string id;  // the call id approvals refer to
    std::string run_id;
    int step = 0;
    std::string tool;
    std::string parameters;  // JSON
    tool_call_status status = tool_call_status::pending;
    std::string result;  // JSON, empty until it ran
    std::int64_t created_at = 0;
    std::string preview;  // the write's unified diff shown for approval, empty otherwise
};

struct approval_record {
    std::string call_id;
    std::string run_id;
    std::string decision;    // approve | reject
    std::string parameters;  // JSON when the human edited them, else empty
    std::string feedback;
    std::string scope;  // once | run
    std::int64_t decided_at = 0;
};

struct document_record {
    std::string chat_id;
    std::string name;
    std::string content;
    std::int64_t version = 0;  // bumped on every change, by the user or the agent
    std::int64_t updated_at = 0;
};

// What an applied write replaced, kept so the write can be undone.
struct backup_record {
    std::string call_id;
    std::string run_id;
    std::string path;            // the workspace file, "" for the chat's document
    bool existed = false;        // false: the write created the file (undo deletes it)
    std::string content;         // the content before the write
    std::string after_sha256;    // the content the write left, to check before undoing
    std::int64_t undone_at = 0;  // 0 while not undone
    std::int64_t created_at = 0;
};

// An edit session: the agent's edits to one workspace file (or to the chat's document) recorded
// as a suggestion instead of written. `base_snapshot` is the target when the first edit came,
// `ai_version` the target as the agent's edits leave it. `revision` is bumped by every change
// and guards it (a write names the revision it read).
struct edit_session_record {
    std::string id;
    std::string chat_id;
    std::string kind;  // file | document
    std::string path;  // the workspace file; "" for the document
    std::string name;  // the document's name; the path for a file
    edit_session_status status = edit_session_status::open;
    bool base_existed = true;  // false: the agent created the file
    std::string base_snapshot;
    bool ai_exists = true;  // false: the agent deleted the file
    std::string ai_version;
    std::int64_t revision = 0;
    std::int64_t edit_count = 0;
    std::int64_t created_at = 0;
    std::int64_t updated_at = 0;
    std::int64_t resolved_at = 0;  // 0 while open
};

// One recorded edit, in the order the agent made them.
struct session_edit_record {
    std::string id;
    std::string session_id;
    std::int64_t order = 0;  // 1, 2, 3… per session
    std::string tool;
    std::string command;     // doc_edit's command, else ""
    std::string parameters;  // JSON
    std::string run_id;
    std::string call_id;
    std::string diff;    // from the AI version before it to the one after
    std::string result;  // the tool's result as the model got it (JSON)
    std::int64_t created_at = 0;
};

// Writes that commit together, in one transaction, in this order (rows refer to rows above
// them): chats, runs (upserted), run messages, tool calls (upserted), approvals, chat messages,
// backups (upserted), events.
struct write_batch {
    std::vector<chat_record> chats;
    std::vector<run_record> runs;
    std::vector<run_message_record> run_messages;
    std::vector<tool_call_record> tool_calls;
    std::vector<approval_record> approvals;
    std::vector<message_record> messages;
    std::vector<backup_record> backups;
    std::vector<event_record> events;
    bool empty() const {
        return chats.empty() && runs.empty() && run_messages.empty() && tool_calls.empty() &&
               approvals.empty() && messages.empty() && backups.empty() && events.empty();
    }
};

// A page of a chat's messages, oldest first; `older` when messages before it exist.
struct message_page {
    std::vector<message_record> messages;
    bool older = false;
};

// The newest messages of a chat that fit a byte budget, oldest first, and how many older ones
// were left out.
struct recent_history {
    std::vector<message_record> messages;
    std::size_t left_out = 0;
};

// Chooses a recent_history: fed a chat's message sizes from the newest back, it keeps the newest
// messages that add up to at most `max_bytes` and counts the older ones it leaves out. Both
// stores read sizes first this way, so contents that do not fit are never read.
class history_budget {
public:
    explicit history_budget(std::size_t max_bytes) : max_bytes_(max_bytes) {}
    void add(std::int64_t id, std::size_t size) {
        if (!full_ && total_ + size <= max_bytes_) {
            total_ += size;
            first_kept_ = id;
        } else {
            full_ = true;
            ++left_out_;
        }
    }
    // The oldest message id kept (every message from it on is kept); past every id when none is.
    std::int64_t first_kept() const { return first_kept_; }
    std::size_t left_out() const { return left_out_; }

private:
    std::size_t max_bytes_;
    std::size_t total_ = 0;
    bool full_ = false;
    std::int64_t first_kept_ = INT64_MAX;
    std::size_t left_out_ = 0;
};

// How a conditional document write went: the new version, or (`conflict`) the current one.
struct document_write {
    std::int64_t version = 0;
    bool conflict = false;
};

// A virtual key made with /admin/keys as the store holds it (declared keys live in the
// configuration only): the key itself, whose secret is never stored (only its digest), and when
// it was revoked. The row keeps the models as a JSON array.
struct key_record {
    config::virtual_key key;
    std::int64_t revoked_at = 0;  // Unix ms; 0: live
};

// Token usage summed per UTC day, virtual key ("" for none, "context" for agent runs), model
// and upstream. In a report, what it is not grouped by is empty.
struct usage_row {
    std::string day;  // "2026-11-23"
    std::string key_id;
    std::string model;
    std::string upstream;  // "" for response-cache hits: no upstream answered them
    std::int64_t requests = 0;
    std::int64_t input_tokens = 0;   // all input, its cache-read and cache-written parts included
    std::int64_t output_tokens = 0;  // all output, its reasoning part included
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_write_tokens = 0;
    std::int64_t reasoning_tokens = 0;
    // Money in whole nano-dollars (1e-9 USD), so sums are exact: what the priced requests cost,
    // and how many requests had no price (never counted as $0) or were priced on estimated usage.
    std::int64_t usd_nano = 0;
    std::int64_t unpriced_requests = 0;
    std::int64_t estimated_requests = 0;
    // Answered from the response cache (counted in `requests`, no tokens), and what they saved.
    std::int64_t cache_hits = 0;
    std::int64_t saved_usd_nano = 0;
    // The key's team, in a report per team (api::usage fills it: the store keeps usage per
    // key only). Last, so the rows' positional initialisers stay as they were.
    std::string team;
};

// A usage report: its filter (empty strings match everything; days inclusive) and what its rows
// are per; the rows sum everything else. By default, one row per key and model.
struct usage_query {
    std::string key_id;
    std::string model;
    std::string upstream;
    std::string from_day = "0000-00-00";
    std::string to_day = "9999-99-99";
    bool by_day = false;
    bool by_key = true;
    bool by_model = true;
    bool by_upstream = false;
};

// A person who signed in through the identity provider: the store's id for them, who the
// provider says they are (the issuer's `sub` is what finds them again at the next sign-in), and
// what they may do here (a role name of auth::role_name's, a team name or "").
struct user_record {
    std::string id;       // "user_" and 24 hex digits
    std::string issuer;   // the provider's `iss`
    std::string subject;  // its `sub`
    std::string email;
    std::string name;
    std::string role;
    std::string team;
    std::int64_t created_at = 0;    // Unix ms
    std::int64_t signed_in_at = 0;  // the latest sign-in
};

// Who the provider says signs in now, and what its claims map to: `role` and `team` are set only
// where a claim says them (nullopt: the stored value stays, or, for a new user, `default_role` and
// no team), so an admin's later change survives sign-ins that say nothing about it.
struct user_sign_in {
    std::string issuer;
    std::string subject;
    std::string email;
    std::string name;
    std::optional<std::string> role;
    std::optional<std::string> team;
    std::string default_role;
};

// A signed-in user's session: found by the SHA-256 of the id its cookie carries (the id itself is
// never stored), ended by logout or once unused for the idle lifetime or older than `expires_at`.
struct user_session_record {
    std::string id_digest;  // "sha256:<hex>" of the cookie's id
    std::string user_id;
    std::string csrf;  // what X-CSRF-Token must carry on a state-changing request
    std::int64_t created_at = 0;
    std::int64_t seen_at = 0;     // the latest request, to a minute
    std::int64_t expires_at = 0;  // the absolute end
};

// A live session with its user, as a request's cookie finds them.
struct signed_in_user {
    user_session_record session;
    user_record user;
};

// A sign-in under way, kept from the redirect to the provider until it sends the user back (any
// replica may receive that): the `state` it carries back, the ID token's expected `nonce`, the
// PKCE verifier, and where to go afterwards. Taken once.
struct pending_login {
    std::string state;
    std::string nonce;
    std::string verifier;
    std::string return_to;
    std::int64_t expires_at = 0;  // Unix ms
};

// A team made through /admin/teams (the configuration's `teams:` are not stored).
struct team_record {
    config::team_config team;
    std::int64_t created_at = 0;  // Unix ms
};

// One change on record in the audit log: who made it, what, when and from where.
struct audit_record {
    std::int64_t id = 0;  // the store's, ascending
    std::int64_t at = 0;  // Unix ms
    std::string actor;    // the user's id, or "api-key" for admin.api_key
    std::string actor_role;
    std::string action;  // "key.create", "team.update", "user.update", "config.reload", ...
    std::string target;  // the key's id, the team's name, the user's id ("" for a reload)
    std::string team;    // the team the target belongs to ("": none): what its team admin sees
    std::string detail;  // a JSON object: the changed fields, never a secret
    std::string remote;  // the client's address
};

// Which records of the audit log, newest first: "" or 0 filters nothing.
struct audit_query {
    std::string actor;
    std::string action;
    std::string target;
    std::string team;
    std::int64_t from = 0;  // Unix ms, inclusive
    std::int64_t to = 0;    // Unix ms, inclusive; 0: now
    std::int64_t limit = 100;
};

}  // namespace gateway::store
