#pragma once

#include "gateway/agent/live_run.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/store/state_store.hpp"
#include "gateway/tools/registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gateway::mcp {
class hub;
}
namespace gateway::tools {
class workspace;
class workspace_roots;
}  // namespace gateway::tools

namespace gateway::agent {

// Runs a run's tools: opens the chat's workspace (again for every run, beneath its configured
// root), runs each tool on a small pool of threads so a long search never stalls the engine,
// and keeps the chat's document in step: an agent edit is stored only on the version it read,
// so an edit made meanwhile in the frontend is never overwritten (DOCUMENT_CHANGED instead).
//
// In the chat's review mode (edit_mode::review) the tools see the AI versions of the chat's
// open edit sessions, and a write is recorded in its target's session instead of written.
//
// For writes it also keeps what is needed to survive a crash in the middle: the target's digests
// before and after (so a resumed run can tell whether the write happened) and its previous
// content (so the write can be undone).
//
// An MCP server's tool (tools::tool::remote()) is not given a pool thread: its call is awaited
// through `mcp`, and it is never recorded as a workspace edit.
//
// Thread safety: called on the engine thread; the tools run on the pool.
class tool_runner {
public:
    tool_runner(const tools::registry& tools, const tools::workspace_roots& roots,
                store::state_store& store, run_journal& journal, unsigned threads = 2,
                mcp::hub* mcp = nullptr);
    ~tool_runner();

    // Opens the run's workspace into run.files; the reason when it cannot be used.
    std::optional<std::string> open_workspace(live_run& run);
    // The workspace at `path` (a chat's), opened beneath its root, shared by every user of that
    // folder; null and `error` when it cannot be used. Thread-safe.
    std::shared_ptr<tools::workspace> workspace_of(const std::string& path, std::string& error);

    // Runs `tool` for the run. A document tool reads the chat's document: `document_version`,
    // when given, is the version the call was previewed (and approved) on, and a document that
    // changed since is DOCUMENT_CHANGED without running. In execute mode an edit to the
    // document is stored only on the version the tool read (DOCUMENT_CHANGED otherwise) and
    // announced as document.updated. `read_version`, when not null, receives the version read.
    net::awaitable<tools::tool_result> run(live_run& run, const std::string& tool,
                                           const boost::json::object& parameters, tools::mode how,
                                           std::optional<std::int64_t> document_version = {},
                                           std::optional<std::int64_t>* read_version = nullptr);

    // What a write is about to do, from its preview: its target and digests, and the target's
    // current content for the backup. nullopt for a call that writes nothing.
    struct write_plan {
        write_intent intent;
        std::string previous;  // the target's content now ("" when it does not exist)
    };
    net::awaitable<std::optional<write_plan>> plan_write(live_run& run, const std::string& tool,
                                                         const boost::json::object& parameters,
                                                         const tools::tool_result& preview);

    // After a crash during a write: did it happen, not happen, or can it not be told (the
    // target is neither as it was nor as the write would have left it)?
    enum class verdict { happened, not_happened, unknown };
    net::awaitable<verdict> judge(live_run& run, const write_intent& intent);

    // Puts a target back as `backup` had it, if it is still as the write left it. A tool error
    // (NOTHING_TO_UNDO when it changed since) or success.
    net::awaitable<tools::tool_result> restore(live_run& run, const store::backup_record& backup);

    // Whether `tool` with these parameters changes anything in the workspace or the document
    // (an MCP tool never does as far as the gateway can tell; its approval is its own policy).
    bool writes(const std::string& tool, const boost::json::object& parameters) const;

    // Stops the pool (waits for the tools running now).
    void stop();

private:
    // Review mode: records the edit `result` made (into `pending`, or `document_after` for the
    // document) in its target's open session, or a new one, and announces session.updated.
    // SESSION_NOT_FOUND when the session was resolved meanwhile.
    net::awaitable<tools::tool_result> record(live_run& run, const std::string& tool,
                                              const boost::json::object& parameters,
                                              tools::tool_result result,
                                              const std::vector<store::edit_session_record>& open,
                                              const tools::pending_edits& pending,
                                              const std::optional<store::document_record>& document,
                                              const std::optional<std::string>& document_after);
    // What a recorded edit answered the model.
    static tools::tool_result result_of(const store::session_edit_record& edit);

    // An MCP tool's call, through the hub.
    net::awaitable<tools::tool_result> run_remote(live_run& run, const tools::tool& t,
                                                  const boost::json::object& parameters,
                                                  tools::mode how);

    // A target as it stands: absent, present with its content, or unreadable (swapped for a
    // link out of the workspace, a device, a read error) with the tool's code and message.
    struct target_now {
        std::optional<std::string> content;  // nullopt: absent, or unreadable
        std::string error_code;              // set: unreadable
        std::string message;
    };
    // The target's content now ("" path: the chat's document).
    net::awaitable<target_now> current(live_run& run, const std::string& path);
    // The same where the target was just read by the tool's preview: unreadable now is a race
    // the caller cannot act on, and fails the step.
    net::awaitable<std::optional<std::string>> current_content(live_run& run,
                                                               const std::string& path);

    const tools::registry& tools_;
    const tools::workspace_roots& roots_;
    store::state_store& store_;
    run_journal& journal_;
    mcp::hub* mcp_;
    boost::asio::thread_pool pool_;

    // One workspace per folder, shared by its chats: the symbol index stays warm between runs.
    struct cached_workspace {
        std::uint64_t device = 0, inode = 0;  // which folder it is
        std::shared_ptr<tools::workspace> files;
    };
    std::mutex mutex_;
    std::map<std::string, cached_workspace> workspaces_;
};

}  // namespace gateway::agent
