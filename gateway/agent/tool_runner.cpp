#include "gateway/agent/tool_runner.hpp"

#include "gateway/ids.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/mcp/hub.hpp"
#include "gateway/observability/failpoint.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/run_events.hpp"
#include "gateway/tools/diff.hpp"
#include "gateway/tools/digest.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/workspace.hpp"
#include "gateway/tools/workspace_roots.hpp"

#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <latch>

#include <sys/stat.h>

namespace gateway::agent {

namespace json = boost::json;

namespace {

tools::tool_result changed_document(std::int64_t now) {
    return tools::tool_result::failure(
        tools::code::document_changed,
        "The document changed in the editor since this edit was prepared (it is now version " +
            std::to_string(now) +
            "); nothing was written. Read it again and redo the edit on its current text.");
}

}  // namespace

tool_runner::tool_runner(const tools::registry& tools, const tools::workspace_roots& roots,
                         store::state_store& store, run_journal& journal, unsigned threads,
                         mcp::hub* mcp)
    : tools_(tools), roots_(roots), store_(store), journal_(journal), mcp_(mcp), pool_(threads) {
    // Each pool thread takes one naming task and holds it until all have: one name per thread.
    // The tasks share the latch: one may still be leaving its wait when the constructor returns.
    auto named = std::make_shared<std::latch>(threads);
    for (unsigned i = 0; i < threads; ++i)
        boost::asio::post(pool_, [named, i] {
            io::name_this_thread("tools-" + std::to_string(i));
            io::yield_to_workers();
            named->arrive_and_wait();
        });
    named->wait();
}

tool_runner::~tool_runner() {
    stop();
}

void tool_runner::stop() {
    pool_.join();
}

bool tool_runner::writes(const std::string& tool, const json::object& parameters) const {
    const auto* t = tools_.find(tool);
    return t && !t->remote() && t->needs_approval_for(parameters);
}

net::awaitable<tools::tool_result> tool_runner::run_remote(live_run& run, const tools::tool& t,
                                                           const json::object& parameters,
                                                           tools::mode how) {
    auto name = std::string(t.spec().name);
    if (auto refused = tools_.refusal(name, parameters, run.role)) co_return std::move(*refused);
    tools::tool_context none;
    if (how == tools::mode::preview) co_return t.run(parameters, none, tools::mode::preview);
    if (!mcp_)
        co_return tools::tool_result::failure(tools::code::mcp_unavailable,
                                              "MCP tools are not available here.");
    auto result = co_await mcp_->call(name, parameters);
    co_return result;
}

std::optional<std::string> tool_runner::open_workspace(live_run& run) {
    run.files.reset();
    if (run.chat.workspace.empty()) return std::nullopt;
    std::string error;
    run.files = workspace_of(run.chat.workspace, error);
    if (!run.files) return error;
    return std::nullopt;
}

std::shared_ptr<tools::workspace> tool_runner::workspace_of(const std::string& path,
                                                            std::string& error) {
    auto opened = roots_.open(path);
    if (!opened) {
        error = opened.error;
        return nullptr;
    }
    struct stat info {};
    if (::fstat(opened.fd.get(), &info) != 0) {
        error = "The workspace " + path + " cannot be inspected: " + std::strerror(errno);
        return nullptr;
    }
    std::lock_guard lock(mutex_);
    auto& slot = workspaces_[opened.path];
    if (!slot.files || slot.device != info.st_dev || slot.inode != info.st_ino) {
        slot.device = info.st_dev;
        slot.inode = info.st_ino;
        slot.files = tools::workspace::adopt(opened.path, std::move(opened.fd));
        // First use in this process: what a killed earlier process left behind goes, off the
        // engine's thread.
        boost::asio::post(pool_, [files = slot.files] {
            if (auto removed = files->remove_debris())
                observability::log_info("workspace " + files->root() + ": removed " +
                                        std::to_string(removed) +
                                        " temporary file(s) left by an interrupted write");
        });
    }
    return slot.files;
}

net::awaitable<tools::tool_result> tool_runner::run(live_run& run, const std::string& tool,
                                                    const json::object& parameters, tools::mode how,
                                                    std::optional<std::int64_t> document_version,
                                                    std::optional<std::int64_t>* read_version) {
    const auto* t = tools_.find(tool);
    if (t && t->remote()) {
        auto result = co_await run_remote(run, *t, parameters, how);
        co_return result;
    }
    bool document_tool = t && t->uses_document(parameters);
    bool review = run.chat.edits == edit_mode::review;
    bool writing = how == tools::mode::execute && writes(tool, parameters);
    // A write (to the workspace, the document or an edit session) is made only once the call's
    // announcement and everything before it are stored (run_journal::send): a restart finds
    // the call it made, and one that could not be stored stops it here.
    if (writing) co_await journal_.settle(run);
    // Review mode: a write is recorded in its target's edit session instead of written.
    bool recording = review && writing;
    auto call_id = run.state.pending ? run.state.pending->call_id : std::string();
    if (recording && !call_id.empty()) {
        // Resumed after a crash: the call's edit may have been recorded already.
        auto prior = co_await store_.session_edit_of_call(call_id);
        if (prior) co_return result_of(*prior);
    }
    std::vector<store::edit_session_record> open;
    if (review) {
        auto found = co_await store_.edit_sessions(run.chat.id, true);
        open = std::move(found);
    }
    const store::edit_session_record* document_session = nullptr;
    for (const auto& s : open)
        if (s.kind == "document") document_session = &s;

    std::optional<store::document_record> stored;
    if (document_tool) {
        auto found = co_await store_.document(run.chat.id);
        stored = std::move(found);
    }
    if (read_version && stored) *read_version = stored->version;
    if (document_version && stored && stored->version != *document_version)
        co_return changed_document(stored->version);
    std::optional<tools::open_document> document;
    if (stored)  // the agent sees its own pending edits to the document
        document =
            tools::open_document{stored->name,
                                 document_session ? document_session->ai_version : stored->content,
                                 {},
                                 {}};
    auto document_before = document ? document->content : std::string();
    std::optional<tools::pending_edits> pending;
    if (review) {
        pending.emplace();
        for (const auto& s : open)
            if (s.kind == "file")
                pending->files[s.path] =
                    s.ai_exists ? std::optional<std::string>(s.ai_version) : std::nullopt;
        pending->record = recording;
    }
    auto files = run.files;
    auto role = run.role;
    auto work = [this, tool, parameters, how, role, files, &document, &pending]() {
        tools::tool_context context;
        context.files = files.get();
        context.document = document ? &*document : nullptr;
        context.pending = pending ? &*pending : nullptr;
        return tools_.execute(tool, parameters, context, how, role);
    };
    auto result = co_await io::run_on(pool_.get_executor(), std::move(work));
    if (recording) {
        std::optional<std::string> document_after;
        if (document && document->content != document_before) document_after = document->content;
        auto recorded = co_await record(run, tool, parameters, std::move(result), open, *pending,
                                        stored, document_after);
        co_return recorded;
    }
    if (how != tools::mode::execute || !document || document->content == document_before)
        co_return result;
    // Stored only on the version the tool read: an edit made meanwhile is never overwritten.
    auto written = co_await store_.put_document(run.chat.id, document->name, document->content,
                                                stored->version);
    if (written.conflict) co_return changed_document(written.version);
    json::object data{
        {"name", document->name}, {"version", written.version}, {"content", document->content}};
    if (auto* diff = result.data.if_contains("diff")) data["diff"] = *diff;
    auto b = journal_.begin(run);
    b.event(event::document_updated, std::move(data));
    co_await journal_.record(run, std::move(b));
    co_return result;
}

tools::tool_result tool_runner::result_of(const store::session_edit_record& edit) {
    json::error_code ec;
    auto stored = json::parse(edit.result, ec);
    tools::tool_result result;
    if (!ec && stored.is_object()) {
        const auto& o = stored.as_object();
        result.text = string_of(o, "text");
        if (auto* data = o.if_contains("data"); data && data->is_object())
            result.data = data->as_object();
    }
    result.data["session_id"] = edit.session_id;
    result.data["edit_id"] = edit.id;
    return result;
}

net::awaitable<tools::tool_result> tool_runner::record(
    live_run& run, const std::string& tool, const json::object& parameters,
    tools::tool_result result, const std::vector<store::edit_session_record>& open,
    const tools::pending_edits& pending, const std::optional<store::document_record>& document,
    const std::optional<std::string>& document_after) {
    if (!result.ok) co_return result;
    // The targets this call changed: its file (in the pending edits) or the document.
    struct target {
        std::string kind, path;
        std::optional<std::string> after;  // nullopt: deleted
    };
    std::vector<target> targets;
    for (const auto& path : pending.changed)
        if (std::none_of(targets.begin(), targets.end(),
                         [&](const target& t) { return t.path == path; }))
            targets.push_back({"file", path, *pending.find(path)});
    if (document_after) targets.push_back({"document", "", document_after});

    auto call_id = run.state.pending ? run.state.pending->call_id : std::string();
    for (const auto& target : targets) {
        store::edit_session_record session;
        auto existing = std::find_if(open.begin(), open.end(), [&](const auto& s) {
            return s.kind == target.kind && s.path == target.path;
        });
        std::int64_t expected = 0;
        if (existing != open.end()) {
            session = *existing;
            expected = session.revision;
        } else {
            // The first edit: the target as it is now becomes the session's base.
            session.id = new_id("sess");
            session.chat_id = run.chat.id;
            session.kind = target.kind;
            session.path = target.path;
            session.status = edit_session_status::open;
            if (target.kind == "document") {
                session.name = document ? document->name : "untitled";
                session.base_snapshot = document ? document->content : "";
            } else {
                session.name = target.path;
                auto base = co_await current_content(run, target.path);
                session.base_existed = base.has_value();
                session.base_snapshot = base.value_or("");
            }
        }
        session.ai_exists = target.after.has_value();
        session.ai_version = target.after.value_or("");
        if (target.kind == "document" && document) session.name = document->name;
        store::session_edit_record edit;
        edit.id = new_id("edit");
        edit.session_id = session.id;
        edit.order = ++session.edit_count;
        edit.tool = tool;
        edit.command = string_of(parameters, "command");
        edit.parameters = json::serialize(parameters);
        edit.run_id = run.record.id;
        edit.call_id = call_id;
        edit.diff = string_of(result.data, "diff");

        auto shown = target.kind == "document" ? "the document " + tools::quoted(session.name)
                                               : tools::quoted(target.path);
        result.data["session_id"] = session.id;
        result.data["edit_id"] = edit.id;
        result.data["applied"] = false;
        result.data["recorded"] = true;
        if (target.kind == "file") result.data["path"] = target.path;
        result.text = "Recorded for review in session " + session.id + " (edit " +
                      std::to_string(edit.order) + " to " + shown +
                      "); nothing is written until the user accepts, and your later reads "
                      "show it. " +
                      result.text;
        edit.result = json::serialize(json::object{{"text", result.text}, {"data", result.data}});
        auto saved = co_await store_.save_edit_session(session, expected, edit);
        observability::failpoint("session.after_record");
        if (!saved)
            co_return tools::tool_result::failure(
                tools::code::session_not_found,
                "The review session for " + shown +
                    " was resolved by the user (or removed) while this edit was being made; "
                    "nothing was recorded. Read it again and redo the edit if it is still "
                    "needed.");
        json::object updated{{"session_id", session.id}, {"kind", session.kind},
                             {"edit_id", edit.id},       {"order", edit.order},
                             {"call_id", call_id},       {"diff", edit.diff}};
        if (target.kind == "file")
            updated["path"] = target.path;
        else
            updated["document"] = session.name;
        auto b = journal_.begin(run);
        b.event(event::session_updated, std::move(updated));
        co_await journal_.record(run, std::move(b));
    }
    co_return result;
}

net::awaitable<tool_runner::target_now> tool_runner::current(live_run& run,
                                                             const std::string& path) {
    if (path.empty()) {
        auto stored = co_await store_.document(run.chat.id);
        target_now now;
        if (stored) now.content = std::move(stored->content);
        co_return now;
    }
    if (!run.files) co_return target_now{};
    auto files = run.files;
    auto work = [files, path]() {
        auto read = files->read(path, tools::tool_limits{}.max_file_bytes);
        target_now now;
        if (read)
            now.content = std::move(read.text);
        else if (read.error_code != tools::code::not_found)
            now = {std::nullopt, read.error_code, read.text};
        return now;
    };
    auto now = co_await io::run_on(pool_.get_executor(), std::move(work));
    co_return now;
}

net::awaitable<std::optional<std::string>> tool_runner::current_content(live_run& run,
                                                                        const std::string& path) {
    auto now = co_await current(run, path);
    if (!now.error_code.empty())
        throw std::runtime_error("cannot read " + path + " to check a write: " + now.message);
    co_return std::move(now.content);
}

net::awaitable<std::optional<tool_runner::write_plan>> tool_runner::plan_write(
    live_run& run, const std::string& tool, const json::object& parameters,
    const tools::tool_result& preview) {
    if (!writes(tool, parameters) || !preview.ok) co_return std::nullopt;
    const auto* t = tools_.find(tool);
    write_plan plan;
    if (t && t->uses_document(parameters)) {
        // The document's next content: the edit made on a copy of it.
        auto stored = co_await store_.document(run.chat.id);
        if (!stored) co_return std::nullopt;
        auto role = run.role;
        auto work = [this, tool, parameters, role, content = stored->content,
                     name = stored->name]() {
            tools::open_document copy{name, content, {}, {}};
            tools::tool_context context;
            context.document = &copy;
            tools_.execute(tool, parameters, context, tools::mode::execute, role);
            return copy.content;
        };
        auto after = co_await io::run_on(pool_.get_executor(), std::move(work));
        plan.intent = {"", true, tools::sha256_hex(stored->content), tools::sha256_hex(after)};
        plan.previous = std::move(stored->content);
        co_return plan;
    }
    auto path = string_of(preview.data, "path");
    if (path.empty()) co_return std::nullopt;
    auto before = string_of(preview.data, "before_sha256");
    plan.intent = {path, !before.empty(), before, string_of(preview.data, "after_sha256")};
    auto now = co_await current_content(run, path);
    plan.previous = now.value_or("");
    co_return plan;
}

net::awaitable<tool_runner::verdict> tool_runner::judge(live_run& run, const write_intent& intent) {
    auto state = co_await current(run, intent.path);
    if (!state.error_code.empty()) co_return verdict::unknown;
    const auto& now = state.content;
    auto digest = now ? tools::sha256_hex(*now) : std::string();
    bool as_after = intent.after_sha256.empty() ? !now : (now && digest == intent.after_sha256);
    bool as_before = intent.existed ? (now && digest == intent.before_sha256) : !now;
    if (as_after) co_return verdict::happened;
    if (as_before) co_return verdict::not_happened;
    co_return verdict::unknown;
}

net::awaitable<tools::tool_result> tool_runner::restore(live_run& run,
                                                        const store::backup_record& backup) {
    auto state = co_await current(run, backup.path);
    auto name = backup.path.empty() ? std::string("the document") : tools::quoted(backup.path);
    // Swapped for a link out of the workspace (or otherwise unreadable): nothing is written.
    if (!state.error_code.empty())
        co_return tools::tool_result::failure(
            state.error_code, name + " cannot be read to check it before undoing (" +
                                  state.message + "); it is left as it is.");
    const auto& now = state.content;
    auto digest = now ? tools::sha256_hex(*now) : std::string();
    bool as_left = backup.after_sha256.empty() ? !now : (now && digest == backup.after_sha256);
    if (!as_left)
        co_return tools::tool_result::failure(
            tools::code::nothing_to_undo, name + " changed since the write; it is left as it is.");
    auto diff =
        tools::unified_diff(backup.path.empty() ? "document" : backup.path, now.value_or(""),
                            backup.existed ? backup.content : "", now.has_value(), backup.existed);
    if (backup.path.empty()) {
        auto stored = co_await store_.document(run.chat.id);
        auto written = co_await store_.put_document(run.chat.id, stored ? stored->name : "untitled",
                                                    backup.content, stored ? stored->version : 0);
        if (written.conflict)
            co_return tools::tool_result::failure(tools::code::document_changed,
                                                  "The document changed meanwhile; try again.");
        co_return tools::tool_result::success("Restored the document.",
                                              {{"diff", diff}, {"version", written.version}});
    }
    if (!run.files) co_return tools::no_workspace();
    auto files = run.files;
    auto work = [files, backup, now]() {
        return backup.existed ? files->write(backup.path, backup.content, tools::overwrite::allowed)
                              : files->remove(backup.path);
    };
    auto status = co_await io::run_on(pool_.get_executor(), std::move(work));
    if (!status) co_return tools::tool_result::failure(status.error_code, status.message);
    co_return tools::tool_result::success(
        (backup.existed ? "Restored " : "Deleted ") + name + ", as it was before the write.",
        {{"path", backup.path}, {"diff", diff}});
}

}  // namespace gateway::agent
