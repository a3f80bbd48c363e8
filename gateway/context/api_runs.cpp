// The Context API's runs: a run, its calls and events, cancel, undo and decisions; the review of
// its edit sessions; and the workflows that start runs. (Chats, messages, documents and prompts:
// api.cpp.)
#include "gateway/context/api.hpp"

#include "gateway/context/views.hpp"
#include "gateway/error.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <charconv>
#include <variant>

namespace gateway::context {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using http::reply;

namespace {

std::string_view kind_name(workflows::step::kind k) {
    switch (k) {
        case workflows::step::kind::tool:
            return "tool";
        case workflows::step::kind::prompt:
            return "prompt";
        case workflows::step::kind::agent:
            return "agent";
    }
    return "";
}

// An edit-session outcome as the HTTP reply: 200 with the body, the refusal, or a
// merge_conflict 409 whose error names the conflicting hunks.
reply session_reply(sessions::edit_sessions::outcome outcome) {
    if (auto* refused = std::get_if<refusal>(&outcome)) return reply::error(*refused);
    if (auto* conflict = std::get_if<sessions::edit_sessions::conflict_report>(&outcome)) {
        auto envelope = json::parse(error_json(errc::merge_conflict, conflict->message));
        envelope.as_object()["error"].as_object()["conflicts"] = std::move(conflict->hunks);
        return reply::json(409, envelope);
    }
    return reply::json(200, std::get<json::object>(outcome));
}

}  // namespace

net::awaitable<reply> api::run_view(const store::run_record& run) {
    auto calls = co_await store_.tool_calls(run.id);
    auto input = co_await store_.run_input(run.id);
    co_return reply::json(200, run_json(run, calls, input, config_.event_excerpt_bytes, true));
}

net::awaitable<reply> api::get_run(http::request_context& ctx) {
    auto run = co_await store_.run(ctx.path_params[0]);
    if (!run) co_return reply::error(errc::not_found, "No run " + ctx.path_params[0] + ".");
    auto view = co_await run_view(*run);
    co_return view;
}

net::awaitable<reply> api::get_call(http::request_context& ctx) {
    const auto& run_id = ctx.path_params[0];
    auto call = co_await store_.tool_call(ctx.path_params[1]);
    if (!call || call->run_id != run_id)
        co_return reply::error(errc::not_found,
                               "Run " + run_id + " has no call " + ctx.path_params[1] + ".");
    auto body = tool_call_json(*call);
    body["object"] = "tool_call";
    body["run_id"] = run_id;
    co_return reply::json(200, body);
}

net::awaitable<reply> api::run_events(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    auto status = co_await store_.run_status(id);
    if (!status) co_return reply::error(errc::not_found, "No run " + id + ".");
    std::string last = std::string(ctx.req["last-event-id"]);
    if (last.empty()) last = http::query_value(ctx.req.target(), "last_event_id");
    std::int64_t after = 0;
    if (!last.empty()) {
        auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), after);
        if (ec != std::errc{} || end != last.data() + last.size() || after < 0)
            co_return reply::error(errc::bad_request,
                                   "`Last-Event-ID` must be an event id (a number).");
    }
    co_return streams_.stream(id, after);
}

net::awaitable<reply> api::cancel_run(http::request_context& ctx) {
    const auto& id = ctx.path_params[0];
    auto refused = co_await runs_.cancel(id);
    if (refused) co_return reply::error(*refused);
    // Answer once the run has stopped (a model call is cut at once), or after 10 s with the state
    // it has then.
    co_await streams_.wait_until_ended(id, std::chrono::steady_clock::now() + 10s);
    auto run = co_await store_.run(id);
    if (!run) co_return reply::error(errc::not_found, "No run " + id + ".");
    auto view = co_await run_view(*run);
    co_return view;
}

net::awaitable<reply> api::undo_run(http::request_context& ctx) {
    auto undone = co_await runs_.undo(ctx.path_params[0]);
    if (const auto* refused = std::get_if<refusal>(&undone)) co_return reply::error(*refused);
    auto body = std::get<json::object>(std::move(undone));
    body["run_id"] = ctx.path_params[0];
    body["undone"] = true;
    co_return reply::json(200, body);
}

net::awaitable<reply> api::decide(http::request_context& ctx) {
    const auto& run_id = ctx.path_params[0];
    const auto& call_id = ctx.path_params[1];
    std::string error;
    auto body =
        http::body_object(ctx.req.body(), error, {"decision", "feedback", "scope", "parameters"});
    agent::decision d;
    if (body) {
        auto verdict = http::string_member(*body, "decision", error);
        if (error.empty() && verdict != "approve" && verdict != "reject")
            error = "`decision` must be `approve` or `reject`.";
        d.approve = verdict == "approve";
        d.feedback = http::string_member(*body, "feedback", error);
        auto scope = http::string_member(*body, "scope", error);
        if (error.empty() && !scope.empty() && scope != "once" && scope != "run")
            error = "`scope` must be `once` or `run`.";
        d.whole_run = scope == "run";
        if (auto* p = body->if_contains("parameters"); p && !p->is_null()) {
            if (!p->is_object())
                error = "`parameters` must be an object.";
            else if (!d.approve)
                error = "`parameters` can only come with `approve`.";
            else
                d.parameters = p->as_object();
        }
    }
    if (!error.empty()) co_return reply::error(errc::bad_request, error);
    bool approve = d.approve;
    auto refused = co_await runs_.decide(run_id, call_id, std::move(d));
    if (refused) co_return reply::error(*refused);
    co_return reply::json(200, json::object{{"run_id", run_id},
                                            {"call_id", call_id},
                                            {"decision", approve ? "approve" : "reject"}});
}

net::awaitable<reply> api::list_sessions(http::request_context& ctx) {
    auto listed = co_await sessions_.list(ctx.path_params[0]);
    co_return session_reply(std::move(listed));
}

net::awaitable<reply> api::get_session(http::request_context& ctx) {
    auto viewed = co_await sessions_.view(ctx.path_params[0]);
    co_return session_reply(std::move(viewed));
}

// `{}` accepts everything, `{"hunks": [ids]}` those hunks, `{"content": "…"}` that text.
net::awaitable<reply> api::accept_session(http::request_context& ctx) {
    std::string error;
    auto body = ctx.req.body().empty()
                    ? std::optional<json::object>(json::object{})
                    : http::body_object(ctx.req.body(), error, {"hunks", "content"});
    sessions::edit_sessions::acceptance what;
    if (body) {
        if (auto* hunks = body->if_contains("hunks"); hunks && !hunks->is_null()) {
            if (!hunks->is_array() || hunks->as_array().empty())
                error = "`hunks` must be a non-empty array of hunk ids.";
            else {
                what.hunks.emplace();
                for (const auto& h : hunks->as_array()) {
                    if (!h.is_string()) {
                        error = "`hunks` must be a non-empty array of hunk ids.";
                        break;
                    }
                    what.hunks->emplace_back(h.as_string());
                }
            }
        }
        if (auto* content = body->if_contains("content"); content && !content->is_null()) {
            if (!content->is_string())
                error = "`content` must be a string: the accepted text.";
            else
                what.content = std::string(content->as_string());
        }
        if (error.empty() && what.hunks && what.content)
            error = "Give `hunks` or `content`, not both.";
    }
    if (!error.empty()) co_return reply::error(errc::bad_request, error);
    auto accepted = co_await sessions_.accept(ctx.path_params[0], std::move(what));
    co_return session_reply(std::move(accepted));
}

net::awaitable<reply> api::reject_session(http::request_context& ctx) {
    auto rejected = co_await sessions_.reject(ctx.path_params[0]);
    co_return session_reply(std::move(rejected));
}

// Grouped by category (alphabetical), each group in file order: what a frontend renders as menus
// and forms.
net::awaitable<reply> api::list_workflows(http::request_context&) {
    auto all = workflows_.all();
    std::map<std::string, json::array> groups;
    for (const auto& w : *all) groups[w.category].push_back(workflow_json(w));
    json::array categories;
    for (auto& [name, items] : groups)
        categories.push_back(json::object{{"category", name}, {"workflows", std::move(items)}});
    co_return reply::json(200,
                          json::object{{"object", "list"}, {"categories", std::move(categories)}});
}

net::awaitable<reply> api::workflow_categories(http::request_context&) {
    auto all = workflows_.all();
    std::map<std::string, int> counts;
    for (const auto& w : *all) ++counts[w.category];
    json::array data;
    for (const auto& [name, count] : counts)
        data.push_back(json::object{{"category", name}, {"workflows", count}});
    co_return reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<reply> api::get_workflow(http::request_context& ctx) {
    auto all = workflows_.all();
    const auto* w = workflows::registry::find(all, ctx.path_params[0]);
    if (!w) co_return reply::error(errc::not_found, "No workflow `" + ctx.path_params[0] + "`.");
    auto body = workflow_json(*w);
    json::array steps;
    for (const auto& s : w->steps) {
        json::object step{{"id", s.id}, {"kind", kind_name(s.what)}};
        if (s.what == workflows::step::kind::tool) step["tool"] = s.tool;
        if (!s.when.empty()) step["when"] = s.when;
        steps.push_back(std::move(step));
    }
    body["steps"] = std::move(steps);
    co_return reply::json(200, body);
}

// Starts a workflow in a chat (which gives it its model, workspace and document), with
// `parameters` checked against the workflow's schema (defaults applied; a 400 names the failing
// path) or with free-text `input` the run turns into parameters.
net::awaitable<reply> api::start_workflow(http::request_context& ctx) {
    auto all = workflows_.all();
    const auto* found = workflows::registry::find(all, ctx.path_params[0]);
    if (!found)
        co_return reply::error(errc::not_found, "No workflow `" + ctx.path_params[0] + "`.");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error, {"chat_id", "input", "parameters"});
    std::string chat_id, input;
    std::optional<json::object> parameters;
    if (body) {
        chat_id = http::string_member(*body, "chat_id", error);
        input = http::string_member(*body, "input", error);
        if (auto* p = body->if_contains("parameters"); p && !p->is_null()) {
            if (p->is_object())
                parameters = p->as_object();
            else
                error = "`parameters` must be an object.";
        }
    }
    if (error.empty() && chat_id.empty())
        error =
            "`chat_id` is required: the chat whose model, workspace and document the "
            "workflow uses.";
    if (error.empty() && parameters.has_value() == !input.empty())
        error = "Give either `parameters` or `input` (free text), not both and not neither.";
    if (error.empty() && input.size() > config_.max_message_bytes)
        co_return reply::error(errc::message_too_large,
                               "`input` is " + std::to_string(input.size()) +
                                   " bytes, over context.max_message_bytes (" +
                                   std::to_string(config_.max_message_bytes) + ").");
    if (error.empty() && parameters) {
        parameters = workflows::with_defaults(*found, std::move(*parameters));
        if (auto problem = found->schema->validate(*parameters); !problem.empty())
            error = "Invalid parameters for workflow `" + found->id + "` at " + problem;
    }
    if (!error.empty()) co_return reply::error(errc::bad_request, error);
    auto chat = co_await store_.chat(chat_id);
    auto owners = co_await owners_seen(ctx.principal);
    if (!chat || (owners && !owners->contains(chat->user)))
        co_return reply::error(errc::not_found, "No chat " + chat_id + ".");
    auto definition = std::shared_ptr<const workflows::workflow>(all, found);
    auto run = co_await workflow_runs_.start(std::move(*chat), definition, std::move(parameters),
                                             std::move(input), agent::parent_of(ctx.trace));
    co_return started(ctx, run, json::object{{"chat_id", chat_id}, {"workflow", found->id}});
}

}  // namespace gateway::context
