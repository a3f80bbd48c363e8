#include "gateway/context/api.hpp"

#include "gateway/agent/excerpt.hpp"
#include "gateway/clock.hpp"
#include "gateway/context/views.hpp"
#include "gateway/error.hpp"
#include "gateway/ids.hpp"
#include "gateway/providers/conversation.hpp"

#include <openssl/crypto.h>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>
#include <variant>

namespace gateway::context {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using http::reply;

namespace {

reply not_found(std::string message) {
    return reply::error(errc::not_found, message);
}

reply bad_request(std::string message) {
    return reply::error(errc::bad_request, message);
}

bool wants_stream(const http::request& req) {
    return req[bhttp::field::accept].find("text/event-stream") != std::string_view::npos;
}

// A document version as an entity tag: "\"3\"".
std::string etag(std::int64_t version) {
    return "\"" + std::to_string(version) + "\"";
}

// The version a document write is based on: `base_version` in the body or an If-Match entity
// tag; nullopt when neither is given. `error` is set when one is malformed.
std::optional<std::int64_t> base_version(const json::object& body, std::string_view if_match,
                                         std::string& error) {
    if (auto* v = body.if_contains("base_version"); v && !v->is_null()) {
        if (!v->is_int64() || v->as_int64() < 0) {
            error = "`base_version` must be a document version (a number).";
            return std::nullopt;
        }
        return v->as_int64();
    }
    if (if_match.empty()) return std::nullopt;
    auto tag = if_match;
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"')
        tag = tag.substr(1, tag.size() - 2);
    std::int64_t version = 0;
    auto [end, ec] = std::from_chars(tag.data(), tag.data() + tag.size(), version);
    if (ec != std::errc{} || end != tag.data() + tag.size() || version < 0) {
        error = "`If-Match` must be the document's entity tag, e.g. \"3\".";
        return std::nullopt;
    }
    return version;
}

// A chat's title as given: one line of at most 200 bytes.
std::string title_member(const json::object& body, std::string& error) {
    auto title = http::string_member(body, "title", error);
    if (error.empty() && (title.size() > 200 || title.find('\n') != std::string::npos))
        error = "`title` must be one line of at most 200 bytes.";
    return title;
}

// The title a chat gets from its first message: its words on one line, at most 80 bytes, cut
// at a character boundary.
std::string title_from(std::string_view message) {
    std::string words;
    for (char c : message) {
        bool blank = c == ' ' || c == '\n' || c == '\r' || c == '\t';
        if (blank && (words.empty() || words.back() == ' ')) continue;
        words += blank ? ' ' : c;
        if (words.size() > 80) break;
    }
    std::string title(agent::utf8_prefix(words, 80));
    while (!title.empty() && title.back() == ' ') title.pop_back();
    return title;
}

// `edits` in a body: approve | review; nullopt when absent (or wrong: `error` says so).
std::optional<edit_mode> edits_member(const json::object& body, std::string& error) {
    auto edits = http::string_member(body, "edits", error);
    if (!error.empty() || edits.empty()) return std::nullopt;
    auto mode = parse_edit_mode(edits);
    if (!mode)
        error =
            "`edits` must be `approve` (each write waits for approval) or `review` (writes "
            "are recorded in edit sessions for review).";
    return mode;
}
}  // namespace

api::api(const config::context_config& config, bool signs_in, store::state_store& store,
         agent::run_registry& runs, agent::run_journal& journal,
         const agent::system_prompts& prompts, const tools::registry& tools,
         const tools::workspace_roots& roots, const workflows::registry& workflows,
         workflows::runner& workflow_runs, sessions::edit_sessions& sessions)
    : config_(config),
      store_(store),
      runs_(runs),
      prompts_(prompts),
      tools_(tools),
      roots_(roots),
      workflows_(workflows),
      workflow_runs_(workflow_runs),
      sessions_(sessions),
      streams_(config, store, journal),
      open_(config.api_keys.empty() && !signs_in) {
    for (const auto& key : config.api_keys) key_hashes_.push_back(config::hashed_key(key));
}

bool api::authorized(const bhttp::request_header<>& head) const {
    if (open_) return true;
    std::string_view header = head[bhttp::field::authorization];
    if (header.size() < 7 || !boost::beast::iequals(header.substr(0, 7), "bearer ")) return false;
    auto token = header.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (token.empty()) return false;
    auto presented = config::key_digest(token);
    bool match = false;
    for (const auto& stored : key_hashes_)
        match |= stored.size() == presented.size() &&
                 CRYPTO_memcmp(stored.data(), presented.data(), stored.size()) == 0;
    return match;
}

http::handler api::route(method m) {
    return [this, m](http::request_context& ctx) -> net::awaitable<void> {
        auto refused = co_await hidden(ctx);
        if (refused) {
            co_await http::write_reply(ctx, std::move(*refused));
            co_return;
        }
        auto answer = co_await (this->*m)(ctx);
        co_await http::write_reply(ctx, std::move(answer));
    };
}

net::awaitable<std::optional<std::set<std::string>>> api::owners_seen(
    const std::optional<auth::principal>& who) {
    if (!who || who->is_admin()) co_return std::nullopt;
    std::set<std::string> owners{who->user_id};
    if (who->as == auth::role::team_admin && !who->team.empty()) {
        auto users = co_await store_.users();
        for (const auto& u : users)
            if (u.team == who->team) owners.insert(u.id);
    }
    co_return owners;
}

net::awaitable<std::optional<reply>> api::hidden(const http::request_context& ctx) {
    if (!ctx.principal || ctx.principal->is_admin() || ctx.path_params.empty())
        co_return std::nullopt;
    const auto& id = ctx.path_params[0];
    std::optional<store::chat_record> chat;
    reply absent;
    if (ctx.route.starts_with("/context/chats/{id}")) {
        chat = co_await store_.chat(id);
        absent = not_found("No chat " + id + ".");
    } else if (ctx.route.starts_with("/context/runs/{id}")) {
        auto run = co_await store_.run(id);
        if (run) chat = co_await store_.chat(run->chat_id);
        absent = not_found("No run " + id + ".");
    } else if (ctx.route.starts_with("/context/sessions/{id}")) {
        auto session = co_await store_.edit_session(id);
        if (session) chat = co_await store_.chat(session->chat_id);
        absent = reply::error(errc::session_not_found, "No edit session " + id + ".");
    }
    if (!chat) co_return std::nullopt;
    auto owners = co_await owners_seen(ctx.principal);
    if (!owners || owners->contains(chat->user)) co_return std::nullopt;
    co_return absent;
}

http::guard api::guard(std::string_view prefix) const {
    return {prefix,
            [this](const bhttp::request_header<>& head, const auth::principal* who) {
                return who != nullptr || authorized(head);
            },
            errc::unauthorized,
            "A valid gateway API key is required: send `Authorization: Bearer <key>`, or sign "
            "in (GET /auth/login)."};
}

net::awaitable<reply> api::list_prompts(http::request_context&) {
    json::array data;
    for (const auto& p : prompts_.all()) data.push_back(prompt_json(p));
    co_return reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<reply> api::list_workspaces(http::request_context&) {
    json::array data;
    for (const auto& path : roots_.paths()) data.push_back(json::object{{"path", path}});
    co_return reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<reply> api::get_prompt(http::request_context& ctx) {
    const auto* p = prompts_.find(ctx.path_params[0]);
    if (!p) co_return not_found("No system prompt `" + ctx.path_params[0] + "`.");
    auto body = prompt_json(*p);
    body["content"] = p->body;
    co_return reply::json(200, body);
}

net::awaitable<reply> api::get_enhanced_prompt(http::request_context& ctx) {
    const auto* p = prompts_.find(ctx.path_params[0]);
    if (!p) co_return not_found("No system prompt `" + ctx.path_params[0] + "`.");
    auto role_name = http::query_value(ctx.req.target(), "role");
    if (role_name.empty()) role_name = "editor";
    auto role = tools::parse_role(role_name);
    if (!role) co_return bad_request("`role` must be `reader` or `editor`.");
    auto body = prompt_json(*p);
    body["role"] = role_name;
    body["content"] = prompts_.build(p->id, *role, false);
    co_return reply::json(200, body);
}

net::awaitable<reply> api::create_chat(http::request_context& ctx) {
    std::string error;
    auto body = http::body_object(
        ctx.req.body(), error, {"system_prompt", "model", "workspace", "role", "edits", "title"});
    store::chat_record chat;
    if (body) {
        chat.system_prompt = http::string_member(*body, "system_prompt", error);
        chat.model = http::string_member(*body, "model", error);
        chat.workspace = http::string_member(*body, "workspace", error);
        chat.role = http::string_member(*body, "role", error);
        chat.edits = edits_member(*body, error).value_or(edit_mode::approve);
        chat.title = title_member(*body, error);
    }
    if (error.empty() && chat.model.empty())
        error = "`model` is required: the model the agent loop asks.";
    if (error.empty() && chat.model.size() > providers::max_model_name_bytes)
        error = "`model` is longer than " + std::to_string(providers::max_model_name_bytes) +
                " bytes; no model has such a name.";
    if (chat.system_prompt.empty()) chat.system_prompt = config_.default_prompt;
    if (error.empty() && !prompts_.find(chat.system_prompt)) {
        std::string ids;
        for (const auto& p : prompts_.all()) ids += (ids.empty() ? "" : ", ") + p.id;
        error = "No system prompt `" + chat.system_prompt + "`; available: " + ids + ".";
    }
    if (chat.role.empty()) chat.role = "editor";
    if (error.empty() && !tools::parse_role(chat.role))
        error = "`role` must be `reader` or `editor`.";
    if (error.empty() && body && body->contains("workspace") && !body->at("workspace").is_null()) {
        // Opened here only to be checked; every run opens it again.
        auto opened = roots_.open(chat.workspace);
        error = opened.error;
        chat.workspace = opened.path;
    }
    if (!error.empty()) co_return bad_request(error);
    chat.id = new_id("chat");
    chat.created_at = now_ms();
    if (ctx.principal && ctx.principal->from == auth::principal::kind::session)
        chat.user = ctx.principal->user_id;
    co_await store_.insert_chat(chat);
    co_return reply::json(201, chat_json(chat));
}

// Every chat the asker sees, each with its run in progress (`live_run`: its id and status, or
// null), so that a list can mark the chats waiting for an approval without asking each one.
net::awaitable<reply> api::list_chats(http::request_context& ctx) {
    auto owners = co_await owners_seen(ctx.principal);
    auto chats = co_await store_.chats();
    if (owners) std::erase_if(chats, [&](const auto& c) { return !owners->contains(c.user); });
    auto unfinished = co_await store_.unfinished_runs();
    std::unordered_map<std::string_view, const store::run_record*> live;
    for (const auto& r : unfinished) live[r.chat_id] = &r;
    json::array data;
    for (const auto& c : chats) {
        auto chat = chat_json(c);
        json::value run = nullptr;
        if (auto it = live.find(c.id); it != live.end())
            run = json::object{{"id", it->second->id}, {"status", status_name(it->second->status)}};
        chat["live_run"] = std::move(run);
        data.push_back(std::move(chat));
    }
    co_return reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

// The chat with one page of its messages (the newest, or those before `?before=`) and the runs
// those messages belong to, as excerpts.
net::awaitable<reply> api::get_chat(http::request_context& ctx) {
    auto chat = co_await store_.chat(ctx.path_params[0]);
    if (!chat) co_return not_found("No chat " + ctx.path_params[0] + ".");
    std::size_t limit = 0;
    std::int64_t before = 0;
    if (auto error = page_of(ctx.req.target(), limit, before); !error.empty())
        co_return bad_request(error);
    auto page = co_await store_.messages(chat->id, before, limit);
    auto body = chat_json(*chat);
    json::array messages;
    std::vector<std::string> run_ids;
    for (const auto& m : page.messages) {
        messages.push_back(message_json(m));
        if (!m.run_id.empty() &&
            std::find(run_ids.begin(), run_ids.end(), m.run_id) == run_ids.end())
            run_ids.push_back(m.run_id);
    }
    json::array runs;
    auto all_runs = co_await store_.runs_of_chat(chat->id);
    // The chat's run in progress, wherever its messages are: a client opening the chat follows it.
    json::value live_run = nullptr;
    for (const auto& r : all_runs)
        if (!is_final(r.status)) live_run = json::value(r.id);
    // Runs no message names (workflow runs) are shown with the page they fall in.
    std::int64_t window =
        page.older && !page.messages.empty() ? page.messages.front().created_at : 0;
    for (const auto& r : all_runs) {
        bool named = std::find(run_ids.begin(), run_ids.end(), r.id) != run_ids.end();
        if (!named && r.created_at < window) continue;
        // Made in the same millisecond as this page's first message: a chat run (one with an
        // input message) has its messages on the older page, and is shown there.
        if (!named && r.created_at == window) {
            auto input = co_await store_.run_input(r.id);
            if (input) continue;
        }
        auto calls = co_await store_.tool_calls(r.id);
        runs.push_back(run_json(r, calls, std::nullopt, config_.event_excerpt_bytes, false));
    }
    body["messages"] = std::move(messages);
    body["has_more"] = page.older;
    body["next_before"] = page.older ? json::value(page.messages.front().id) : json::value(nullptr);
    body["runs"] = std::move(runs);
    body["live_run"] = std::move(live_run);
    co_return reply::json(200, body);
}

net::awaitable<reply> api::list_messages(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    auto chat = co_await store_.chat(id);
    if (!chat) co_return not_found("No chat " + id + ".");
    std::size_t limit = 0;
    std::int64_t before = 0;
    if (auto error = page_of(ctx.req.target(), limit, before); !error.empty())
        co_return bad_request(error);
    auto page = co_await store_.messages(id, before, limit);
    json::array data;
    for (const auto& m : page.messages) data.push_back(message_json(m));
    co_return reply::json(
        200, json::object{{"object", "list"},
                          {"data", std::move(data)},
                          {"has_more", page.older},
                          {"next_before", page.older ? json::value(page.messages.front().id)
                                                     : json::value(nullptr)}});
}

net::awaitable<reply> api::delete_chat(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    auto runs = co_await store_.runs_of_chat(id);
    for (const auto& r : runs)
        if (!is_final(r.status))
            co_return reply::error(
                errc::run_in_progress,
                "Chat " + id + " has a run in progress (" + r.id + "); cancel it first.");
    auto deleted = co_await store_.delete_chat(id);
    if (!deleted) co_return not_found("No chat " + id + ".");
    co_return reply::json(200, json::object{{"id", id}, {"object", "chat"}, {"deleted", true}});
}

// Changes what can change in a chat: its edit mode. A run in progress takes it at its next write.
net::awaitable<reply> api::patch_chat(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    store::chat_changes changes;
    if (body) {
        for (const auto& [key, value] : *body)
            if (key != "edits" && key != "title" && error.empty())
                error =
                    "`" + std::string(key) + "` cannot be changed; only `edits` and `title` can.";
        if (error.empty() && body->contains("edits")) {
            changes.edits = edits_member(*body, error);
            if (error.empty() && !changes.edits) error = "`edits` must be `approve` or `review`.";
        }
        if (error.empty() && body->contains("title")) changes.title = title_member(*body, error);
    }
    if (error.empty() && !changes.edits && !changes.title)
        error = "Nothing to change: send `edits` (`approve` or `review`) and/or `title`.";
    if (!error.empty()) co_return bad_request(error);
    auto changed = co_await store_.update_chat(id, changes);
    if (!changed) co_return not_found("No chat " + id + ".");
    auto chat = co_await store_.chat(id);
    if (!chat) co_return not_found("No chat " + id + ".");
    co_return reply::json(200, chat_json(*chat));
}

http::reply api::started(http::request_context& ctx, const agent::started_run& run,
                         json::object body) {
    if (const auto* refused = std::get_if<refusal>(&run)) return reply::error(*refused);
    const auto& run_id = std::get<std::string>(run);
    if (wants_stream(ctx.req)) return streams_.stream(run_id, 0);
    body["run_id"] = run_id;
    body["status"] = status_name(run_status::running);
    return reply::json(202, body);
}

net::awaitable<reply> api::post_message(http::request_context& ctx) {
    auto chat = co_await store_.chat(ctx.path_params[0]);
    if (!chat) co_return not_found("No chat " + ctx.path_params[0] + ".");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error, {"content"});
    std::string content;
    if (body) content = http::string_member(*body, "content", error);
    if (error.empty() && content.empty()) error = "`content` is required: the user's message.";
    if (!error.empty()) co_return bad_request(error);
    if (content.size() > config_.max_message_bytes)
        co_return reply::error(
            errc::message_too_large,
            "The message is " + std::to_string(content.size()) +
                " bytes, over the gateway's limit of " + std::to_string(config_.max_message_bytes) +
                " (context.max_message_bytes); put large texts in the workspace or the document.");
    auto chat_id = chat->id;
    auto title = chat->title.empty() ? title_from(content) : std::string();
    auto run = co_await runs_.start_chat_run(std::move(*chat), std::move(content),
                                             agent::parent_of(ctx.trace));
    // An untitled chat is named after the first message that started a run.
    if (!title.empty() && std::holds_alternative<std::string>(run)) {
        store::chat_changes changes{.title = std::move(title)};
        co_await store_.update_chat(chat_id, std::move(changes));
    }
    co_return started(ctx, run, json::object{{"chat_id", chat_id}});
}

net::awaitable<reply> api::put_document(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    auto chat = co_await store_.chat(id);
    if (!chat) co_return not_found("No chat " + id + ".");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error, {"name", "content", "base_version"});
    std::string name, content;
    std::optional<std::int64_t> base;
    if (body) {
        name = http::string_member(*body, "name", error);
        content = http::string_member(*body, "content", error);
        if (error.empty() && !body->contains("content")) error = "`content` is required.";
        if (error.empty()) base = base_version(*body, ctx.req[bhttp::field::if_match], error);
    }
    if (!error.empty()) co_return bad_request(error);
    if (name.empty()) name = "untitled";
    auto size = content.size();
    auto written = co_await store_.put_document(id, name, std::move(content), base);
    if (written.conflict)
        co_return reply::error(errc::version_conflict,
                               "The document is at version " + std::to_string(written.version) +
                                   ", not " + std::to_string(base.value_or(0)) +
                                   ": it changed since you read it. Read it again, merge, and "
                                   "send its current version as base_version.")
            .header("ETag", etag(written.version));
    co_return reply::json(
        200,
        json::object{{"chat_id", id}, {"name", name}, {"version", written.version}, {"size", size}})
        .header("ETag", etag(written.version));
}

net::awaitable<reply> api::get_document(http::request_context& ctx) {
    auto document = co_await store_.document(ctx.path_params[0]);
    if (!document) co_return not_found("Chat " + ctx.path_params[0] + " has no document.");
    co_return reply::json(200, json::object{{"chat_id", document->chat_id},
                                            {"name", document->name},
                                            {"content", document->content},
                                            {"version", document->version},
                                            {"updated_at", document->updated_at}})
        .header("ETag", etag(document->version));
}

}  // namespace gateway::context
