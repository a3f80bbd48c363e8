#pragma once

#include "gateway/config/config.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace gateway::store {

// Rows, as plain structs. JSON columns hold serialized JSON text; times are Unix milliseconds.
struct chat_record {
    std::string id;
    std::int64_t created_at = 0;
    std::string system_prompt;
    std::string model;
    std::string workspace;
    std::string role;
};

struct message_record {
    std::int64_t id = 0;
    std::string chat_id;
    std::string run_id;  // empty for messages outside a run
    std::string role;    // user | assistant
    std::string content;
    std::int64_t created_at = 0;
};

struct run_record {
    std::string id;
    std::string chat_id;
    std::string status;  // running | awaiting_approval | completed | failed | cancelled
    int step = 0;
    int max_steps = 0;
    std::string output;
    std::string error;
    std::string state;  // JSON: what the loop needs to resume after a restart
    std::int64_t created_at = 0;
    std::int64_t updated_at = 0;
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
    std::string status;      // pending | awaiting_approval | approved | rejected | done | failed
    std::string result;      // JSON, empty until it ran
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

// The SQLite store of the Context API: one database file in WAL mode, versioned migrations
// applied at open (PRAGMA user_version), foreign keys on, so deleting a chat deletes its runs,
// events, calls, approvals and document. Writes use synchronous=NORMAL, which in WAL mode loses
// nothing on a process crash (SIGKILL); a committed write has been acknowledged. Every method is
// one transaction unless called inside atomically(). Thread-safe (one connection, one mutex).
class store {
public:
    // Opens or creates the database at `path` and migrates it; the error names the file.
    static config::parsed<std::unique_ptr<store>> open(const std::string& path);
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    int schema_version();
    static std::int64_t now_ms();

    // Runs `work` as one transaction: all of its writes commit together or not at all.
    void atomically(const std::function<void()>& work);

    void insert_chat(const chat_record& chat);
    std::optional<chat_record> chat(const std::string& id);
    std::vector<chat_record> chats();
    bool delete_chat(const std::string& id);

    std::int64_t add_message(const message_record& message);
    std::vector<message_record> messages(const std::string& chat_id);
    // A page of the chat's messages, oldest first: the `limit` newest with an id below
    // `before_id` (0: the newest of all). `older` tells whether messages before the page exist.
    std::vector<message_record> message_page(const std::string& chat_id, std::int64_t before_id,
                                             std::size_t limit, bool& older);
    // The chat's newest messages whose contents add up to at most `max_bytes`, oldest first;
    // `left_out` counts the older ones that did not fit.
    std::vector<message_record> recent_messages(const std::string& chat_id, std::size_t max_bytes,
                                                std::size_t& left_out);
    // The user message that started the run, if any.
    std::optional<std::string> run_input(const std::string& run_id);

    void save_run(const run_record& run);  // insert or replace
    std::optional<run_record> run(const std::string& id);
    // Only the status: cheap enough to ask at every event.
    std::optional<std::string> run_status(const std::string& id);
    std::vector<run_record> runs_of_chat(const std::string& chat_id);
    // The run's conversation, appended once per message; `seq` counts from 0.
    void append_run_message(const std::string& run_id, std::int64_t seq, const std::string& role,
                            const std::string& content);
    std::vector<std::pair<std::string, std::string>> run_messages(const std::string& run_id);
    std::vector<run_record> runs_with_status(const std::string& status);

    // Appends an event with the run's next sequence number and returns it.
    std::int64_t append_event(const std::string& run_id, const std::string& type,
                              const std::string& data);
    // The run's events after `after_seq`, in order: at most `max_events`, and no more once their
    // data adds up to `max_bytes` (at least one event is returned when there is one).
    std::vector<event_record> events_after(const std::string& run_id, std::int64_t after_seq,
                                           std::size_t max_events = SIZE_MAX,
                                           std::size_t max_bytes = SIZE_MAX);

    void save_tool_call(const tool_call_record& call);  // insert or replace
    std::optional<tool_call_record> tool_call(const std::string& id);
    std::vector<tool_call_record> tool_calls(const std::string& run_id);

    void save_approval(const approval_record& approval);
    std::optional<approval_record> approval(const std::string& call_id);

    // Stores the document and returns its new version.
    std::int64_t put_document(const std::string& chat_id, const std::string& name,
                              const std::string& content);
    std::optional<document_record> document(const std::string& chat_id);

private:
    explicit store(sqlite3* db) : db_(db) {}
    void execute(const char* sql);

    sqlite3* db_;
    std::recursive_mutex mutex_;
};

// Thrown only for failures that are bugs or a broken disk (SQLITE_CORRUPT, SQLITE_FULL…); the
// router's last-resort handler turns it into a 500.
struct store_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace gateway::store
