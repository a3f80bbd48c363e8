#include "gateway/sessions/edit_sessions.hpp"

#include "gateway/clock.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/run_events.hpp"
#include "gateway/sessions/review.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/tool.hpp"
#include "gateway/tools/workspace.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::sessions {

namespace json = boost::json;

namespace {

json::value time_or_null(std::int64_t t) {
    return t ? json::value(t) : json::value(nullptr);
}

// The session's target in `o`: `path` for a file, `document` (its name) for the document.
json::object with_target(json::object o, const store::edit_session_record& s) {
    if (s.kind == "file")
        o["path"] = s.path;
    else
        o["document"] = s.name;
    return o;
}

json::object summary_json(const store::edit_session_record& s) {
    return with_target({{"id", s.id},
                        {"object", "edit_session"},
                        {"chat_id", s.chat_id},
                        {"kind", s.kind},
                        {"status", status_name(s.status)},
                        {"edit_count", s.edit_count},
                        {"base_existed", s.base_existed},
                        {"ai_exists", s.ai_exists},
                        {"created_at", s.created_at},
                        {"updated_at", s.updated_at},
                        {"resolved_at", time_or_null(s.resolved_at)}},
                       s);
}

json::object hunk_json(const review_hunk& h) {
    const auto& d = h.hunk;
    return {{"id", h.id},
            {"old_start", d.old_start + 1},
            {"old_lines", d.old_count},
            {"new_start", d.new_start + 1},
            {"new_lines", d.new_count},
            {"added", d.stats.added},
            {"removed", d.stats.removed},
            {"diff", d.text}};
}

std::optional<std::string> base_of(const store::edit_session_record& s) {
    return s.base_existed ? std::optional<std::string>(s.base_snapshot) : std::nullopt;
}

std::string target_name(const store::edit_session_record& s) {
    return s.kind == "file" ? "`" + s.path + "`" : "the document `" + s.name + "`";
}

}  // namespace

edit_sessions::edit_sessions(store::state_store& store, workspace_opener open, announcer announce)
    : store_(store), open_(std::move(open)), announce_(std::move(announce)) {}

edit_sessions::~edit_sessions() {
    files_.join();
}

net::awaitable<edit_sessions::outcome> edit_sessions::list(std::string chat_id) {
    auto chat = co_await store_.chat(chat_id);
    if (!chat) co_return refusal{errc::not_found, "No chat " + chat_id + "."};
    auto all = co_await store_.edit_sessions(chat_id, false);
    json::array data;
    for (const auto& s : all) data.push_back(summary_json(s));
    co_return json::object{{"object", "list"}, {"data", std::move(data)}};
}

net::awaitable<edit_sessions::outcome> edit_sessions::view(std::string session_id) {
    auto found = co_await store_.edit_session(session_id);
    if (!found) co_return refusal{errc::session_not_found, "No edit session " + session_id + "."};
    const auto& s = *found;
    auto edits = co_await store_.session_edits(s.id);
    auto body = summary_json(s);
    body["base_snapshot"] = s.base_snapshot;
    body["ai_version"] = s.ai_version;
    json::array edit_list;
    for (const auto& e : edits) {
        json::error_code ec;
        auto parameters = json::parse(e.parameters, ec);
        edit_list.push_back(json::object{{"edit_id", e.id},
                                         {"order", e.order},
                                         {"tool", e.tool},
                                         {"command", e.command},
                                         {"parameters", ec ? json::value(nullptr) : parameters},
                                         {"run_id", e.run_id},
                                         {"call_id", e.call_id},
                                         {"time", e.created_at},
                                         {"diff", e.diff}});
    }
    body["edits"] = std::move(edit_list);
    auto label = s.kind == "file" ? s.path : s.name;
    body["diff"] =
        tools::unified_diff(label, s.base_snapshot, s.ai_version, s.base_existed, s.ai_exists);
    json::array hunks;
    for (const auto& h : review_hunks(s.base_snapshot, s.ai_version)) hunks.push_back(hunk_json(h));
    body["hunks"] = std::move(hunks);
    if (s.status == edit_session_status::open) {
        auto chat = co_await store_.chat(s.chat_id);
        if (!chat)
            co_return refusal{errc::session_not_found, "No edit session " + session_id + "."};
        auto now = co_await read_target(*chat, s);
        if (now.failed) co_return *now.failed;
        body["changed_on_disk"] = now.content != base_of(s);
    } else {
        body["changed_on_disk"] = nullptr;  // resolved: no longer compared
    }
    co_return body;
}

net::awaitable<edit_sessions::outcome> edit_sessions::accept(std::string session_id,
                                                             acceptance what) {
    auto opened = co_await open_session(session_id);
    if (auto* refused = std::get_if<refusal>(&opened)) co_return *refused;
    auto s = std::get<store::edit_session_record>(std::move(opened));
    auto chat = co_await store_.chat(s.chat_id);
    if (!chat) co_return refusal{errc::session_not_found, "No edit session " + session_id + "."};

    // What the human accepts, as a change from the base.
    auto hunks = review_hunks(s.base_snapshot, s.ai_version);
    std::optional<std::string> result =
        s.ai_exists ? std::optional<std::string>(s.ai_version) : std::nullopt;
    bool partial = false;
    std::vector<std::string> chosen;
    if (what.content) {
        result = *what.content;
    } else if (what.hunks) {
        chosen = *what.hunks;
        std::string unknown, known;
        for (const auto& id : chosen)
            if (std::none_of(hunks.begin(), hunks.end(), [&](const auto& h) { return h.id == id; }))
                unknown += (unknown.empty() ? "" : ", ") + id;
        for (const auto& h : hunks) known += (known.empty() ? "" : ", ") + h.id;
        if (!unknown.empty())
            co_return refusal{errc::invalid_parameters,
                              "Edit session " + s.id + " has no hunk " + unknown +
                                  "; its hunks are: " + (known.empty() ? "none" : known) + "."};
        partial = std::any_of(hunks.begin(), hunks.end(), [&](const auto& h) {
            return std::find(chosen.begin(), chosen.end(), h.id) == chosen.end();
        });
        if (partial) result = apply_hunks(s.base_snapshot, hunks, chosen);
    }

    // Merged with what the target became meanwhile, if it changed since the base.
    auto now = co_await read_target(*chat, s);
    if (now.failed) co_return *now.failed;
    auto base = base_of(s);
    std::optional<std::string> final_content = result;
    bool merged = false;
    if (now.content != base && !what.content) {  // a frontend's text is its own merge
        if (result == base) {
            final_content = now.content;  // nothing of the session's to apply
        } else if (now.content && result) {
            auto m = merge_three_way(s.base_snapshot, *now.content, *result);
            if (!m.clean) {
                json::array listed;
                auto accepted = review_hunks(s.base_snapshot, *result);
                for (const auto* h : overlapping(accepted, s.base_snapshot, *now.content))
                    listed.push_back(hunk_json(*h));
                auto count = std::max<std::size_t>(listed.size(), 1);
                co_return conflict_report{
                    target_name(s) + " changed since the session began, and " +
                        std::to_string(count) + (count == 1 ? " hunk" : " hunks") +
                        " of what was accepted overlap those changes; nothing was written.",
                    std::move(listed)};
            }
            final_content = std::move(m.content);
            merged = true;
        } else {
            co_return conflict_report{
                target_name(s) +
                    (now.content ? " was changed since the session began, and the suggestion "
                                   "deletes it"
                                 : " was deleted since the session began") +
                    "; nothing was written. Accept with `content` to say what it should be.",
                {}};
        }
    }

    // The session first (refused if the agent recorded an edit meanwhile), then the target; the
    // session is put back if the write fails.
    auto before = s;
    if (partial) {
        s.base_existed = true;
        s.base_snapshot = *result;
    }
    bool done = !partial || (s.base_snapshot == s.ai_version && s.ai_exists);
    if (done) {
        s.status = edit_session_status::accepted;
        s.resolved_at = now_ms();
    }
    bool saved = co_await store_.save_edit_session(s, before.revision, std::nullopt);
    if (!saved)
        co_return refusal{errc::conflict, "Edit session " + s.id +
                                              " changed while it was being accepted (the agent "
                                              "recorded another edit); review it again."};
    auto failed = co_await write_target(*chat, s, final_content, now.document_version);
    if (failed) {
        // Put back as it was (at the revision after the one just saved).
        co_await store_.save_edit_session(before, before.revision + 1, std::nullopt);
        co_return *failed;
    }
    json::object resolved{{"merged", merged}};
    if (what.hunks) {
        json::array ids;
        for (const auto& id : chosen) ids.push_back(json::value(id));
        resolved["hunks"] = std::move(ids);
    }
    co_await announce_resolution(s, std::move(resolved));
    auto body = summary_json(s);
    body["merged"] = merged;
    body["written"] = true;
    body["content"] = final_content ? json::value(*final_content) : json::value(nullptr);
    co_return body;
}

net::awaitable<edit_sessions::outcome> edit_sessions::reject(std::string session_id) {
    auto opened = co_await open_session(session_id);
    if (auto* refused = std::get_if<refusal>(&opened)) co_return *refused;
    auto s = std::get<store::edit_session_record>(std::move(opened));
    auto revision = s.revision;
    s.status = edit_session_status::rejected;
    s.resolved_at = now_ms();
    bool saved = co_await store_.save_edit_session(s, revision, std::nullopt);
    if (!saved)
        co_return refusal{errc::conflict, "Edit session " + s.id +
                                              " changed while it was being rejected (the agent "
                                              "recorded another edit); review it again."};
    co_await announce_resolution(s, {});
    auto body = summary_json(s);
    body["written"] = false;
    co_return body;
}

net::awaitable<edit_sessions::target_now> edit_sessions::read_target(
    const store::chat_record& chat, const store::edit_session_record& s) {
    target_now out;
    if (s.kind == "document") {
        auto document = co_await store_.document(chat.id);
        if (document) {
            out.content = std::move(document->content);
            out.document_version = document->version;
        }
        co_return out;
    }
    auto work = [this, workspace = chat.workspace, path = s.path]() {
        target_now read;
        std::string error;
        auto files = open_(workspace, error);
        if (!files) {
            read.failed = refusal{errc::conflict, "The chat's workspace cannot be used: " + error};
            return read;
        }
        auto file = files->read(path, tools::tool_limits{}.max_file_bytes);
        if (file)
            read.content = std::move(file.text);
        else if (file.error_code != tools::code::not_found)
            read.failed = refusal{errc::conflict, file.message};
        return read;
    };
    auto read = co_await io::run_on(files_.get_executor(), std::move(work));
    co_return read;
}

net::awaitable<std::optional<refusal>> edit_sessions::write_target(
    const store::chat_record& chat, const store::edit_session_record& s,
    const std::optional<std::string>& content, std::int64_t document_version) {
    if (s.kind == "document") {
        // Only on the version the merge read: an edit in the editor meanwhile is not overwritten.
        auto written =
            co_await store_.put_document(chat.id, s.name, content.value_or(""), document_version);
        if (written.conflict)
            co_return refusal{errc::version_conflict,
                              "The document changed while the session was being accepted; "
                              "nothing was written. Try again."};
        co_return std::nullopt;
    }
    auto work = [this, workspace = chat.workspace, path = s.path,
                 content]() -> std::optional<refusal> {
        std::string error;
        auto files = open_(workspace, error);
        if (!files) return refusal{errc::conflict, "The chat's workspace cannot be used: " + error};
        auto status =
            content ? files->write(path, *content, tools::overwrite::allowed) : files->remove(path);
        if (!status) return refusal{errc::conflict, status.message};
        return std::nullopt;
    };
    auto failed = co_await io::run_on(files_.get_executor(), std::move(work));
    co_return failed;
}

net::awaitable<std::variant<store::edit_session_record, refusal>> edit_sessions::open_session(
    std::string session_id) {
    auto found = co_await store_.edit_session(session_id);
    if (!found) co_return refusal{errc::session_not_found, "No edit session " + session_id + "."};
    if (found->status != edit_session_status::open)
        co_return refusal{errc::session_resolved, "Edit session " + found->id + " was " +
                                                      std::string(status_name(found->status)) +
                                                      " already."};
    co_return std::move(*found);
}

net::awaitable<void> edit_sessions::announce_resolution(const store::edit_session_record& s,
                                                        json::object extra) {
    auto edits = co_await store_.session_edits(s.id);
    if (edits.empty() || edits.back().run_id.empty()) co_return;
    extra["session_id"] = s.id;
    extra["kind"] = s.kind;
    extra["status"] = status_name(s.status);
    co_await announce_(edits.back().run_id, std::string(event::session_resolved),
                       with_target(std::move(extra), s));
}

}  // namespace gateway::sessions
