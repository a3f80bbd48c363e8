#pragma once

#include "gateway/error.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gateway::tools {
class workspace;
}

namespace gateway::sessions {

namespace net = boost::asio;

// The human's side of edit sessions (the agent's side is agent::tool_runner, which records the
// edits): list a chat's sessions, show one as base, AI version, edits and hunks, accept it (all,
// some hunks, or the frontend's merged text) or reject it.
//
// Accepting writes the result to the target: a workspace file atomically, the chat's document
// as a new version. When the target changed since the session's base, the result is merged with
// it three ways (libgit2); overlapping changes are a merge_conflict that writes nothing. A
// partial accept writes its hunks and moves them into the base; the session stays open with the
// rest. Every resolution is announced as session.resolved on the stream of the run that made the
// session's last edit. Stateless but for a thread for file I/O; callable from any thread.
class edit_sessions {
public:
    // Appends an event to a run's stream (run_registry::announce).
    using announcer = std::function<net::awaitable<void>(std::string run_id, std::string type,
                                                         boost::json::object data)>;
    // A merge_conflict: why, and the accepted hunks that overlap the target's changes.
    struct conflict_report {
        std::string message;
        boost::json::array hunks;
    };
    using outcome = std::variant<boost::json::object, refusal, conflict_report>;

    // Opens a chat's workspace folder (agent::tool_runner::workspace_of: the agent's tools see
    // what the review writes); null with `error` when it cannot be used.
    using workspace_opener = std::function<std::shared_ptr<tools::workspace>(
        const std::string& path, std::string& error)>;

    edit_sessions(store::state_store& store, workspace_opener open, announcer announce);
    ~edit_sessions();

    net::awaitable<outcome> list(std::string chat_id);
    net::awaitable<outcome> view(std::string session_id);

    // What to accept: everything (both empty), these hunk ids, or this text as the result.
    struct acceptance {
        std::optional<std::vector<std::string>> hunks;
        std::optional<std::string> content;
    };
    net::awaitable<outcome> accept(std::string session_id, acceptance what);
    net::awaitable<outcome> reject(std::string session_id);

private:
    // The target's current content (nullopt: absent); a refusal when it cannot be read.
    struct target_now {
        std::optional<std::string> content;
        std::int64_t document_version = 0;
        std::optional<refusal> failed;
    };
    net::awaitable<target_now> read_target(const store::chat_record& chat,
                                           const store::edit_session_record& s);
    // Writes `content` (nullopt: deletes) to the target; a refusal when it cannot.
    net::awaitable<std::optional<refusal>> write_target(const store::chat_record& chat,
                                                        const store::edit_session_record& s,
                                                        const std::optional<std::string>& content,
                                                        std::int64_t document_version);
    // The open session `session_id`; session_not_found or session_resolved otherwise.
    net::awaitable<std::variant<store::edit_session_record, refusal>> open_session(
        std::string session_id);
    // session.resolved with `extra` (what was accepted) on the stream of the run that made the
    // session's last edit.
    net::awaitable<void> announce_resolution(const store::edit_session_record& s,
                                             boost::json::object extra);

    store::state_store& store_;
    workspace_opener open_;
    announcer announce_;
    net::thread_pool files_{1};
};

}  // namespace gateway::sessions
