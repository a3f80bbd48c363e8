// The MCP endpoint's tools/call: a workflow run, followed over SSE with progress and approval
// elicitations, and its outcome as the call's result. (Sessions and requests: mcp_endpoint.cpp.)
#include "gateway/context/mcp_endpoint.hpp"
#include "gateway/run_events.hpp"

#include "gateway/context/mcp_session.hpp"

#include "gateway/agent/run_state.hpp"
#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/http/response.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

namespace gateway::context {

namespace json = boost::json;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using namespace mcp_rpc;
using http::reply;

namespace {

// A tool result of one text.
json::object tool_text(std::string_view text, bool error) {
    return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
            {"isError", error}};
}

std::string sse_message(const json::object& message) {
    return "event: message\ndata: " + json::serialize(message) + "\n\n";
}

// The message of an elicitation that asks for an approval: what the call does, with its diff
// (the summary of a preview holds it), capped at preview_bytes.
std::string approval_question(const workflows::workflow& w, const json::object& asked) {
    auto text = "The workflow \"" + w.name + "\" wants to run `" + string_of(asked, "tool") + "`.";
    auto preview = string_of(asked, "summary");
    if (preview.empty()) preview = string_of(asked, "preview");
    if (!preview.empty())
        text += "\n\n" + tools::cap_text(std::move(preview), preview_bytes,
                                         "The whole change is on the console.");
    return text + "\n\nApprove it?";
}

}  // namespace

net::awaitable<reply> mcp_endpoint::call_tool(http::request_context& ctx,
                                              std::shared_ptr<session> s, json::value id,
                                              const json::object& params) {
    auto name = string_of(params, "name");
    auto all = workflows_.all();
    const auto* found = workflows::registry::find(all, name);
    if (!found) co_return rpc(200, rpc_error(id, invalid_params, "Unknown tool `" + name + "`."));
    json::object arguments;
    if (const auto* a = params.if_contains("arguments"); a && !a->is_null()) {
        if (!a->is_object())
            co_return rpc(200, rpc_error(id, invalid_params, "`arguments` must be an object."));
        arguments = a->as_object();
    }
    // Wrong arguments are a tool error the model can correct, not a protocol error.
    auto parameters = workflows::with_defaults(*found, std::move(arguments));
    if (auto problem = found->schema->validate(parameters); !problem.empty())
        co_return rpc(
            200,
            rpc_result(id, tool_text("Invalid arguments for `" + name + "` at " + problem, true)));

    store::chat_record chat;
    chat.id = new_id("chat");
    chat.created_at = now_ms();
    chat.model = config_.model;
    chat.system_prompt = system_prompt_;
    chat.role = "editor";
    chat.edits = config_.edits;
    chat.title = "MCP: " + found->name;
    if (!workspace_.empty()) {
        // Opened again for every chat, as every run does: a folder replaced by a link is refused.
        auto opened = roots_.open(workspace_);
        if (!opened.error.empty())
            co_return rpc(
                200,
                rpc_result(id, tool_text("The workspace cannot be used: " + opened.error, true)));
        chat.workspace = opened.path;
    }
    co_await store_.insert_chat(chat);
    auto definition = std::shared_ptr<const workflows::workflow>(all, found);
    std::optional<json::object> given(std::move(parameters));
    std::string no_input;
    auto started = co_await workflow_runs_.start(std::move(chat), definition, std::move(given),
                                                 std::move(no_input));
    if (const auto* refused = std::get_if<refusal>(&started))
        co_return rpc(200, rpc_result(id, tool_text(refused->message, true)));

    auto c = std::make_shared<call>();
    c->id = id;
    c->key = json::serialize(id);
    c->run_id = std::get<std::string>(started);
    c->definition = definition;
    c->sse = ctx.req[bhttp::field::accept].find("text/event-stream") != std::string_view::npos;
    if (const auto* meta = object_of(params, "_meta"))
        if (const auto* token = meta->if_contains("progressToken"); token && valid_id(*token))
            c->token = *token;
    {
        std::lock_guard lock(mutex_);
        s->runs[c->key] = c->run_id;
    }
    observability::log_info("MCP tools/call `" + name + "`: run " + c->run_id);
    co_return reply::streamed(
        [this, s, c](http::request_context& stream) { return follow(stream, s, c); });
}

net::awaitable<void> mcp_endpoint::follow(http::request_context& ctx, std::shared_ptr<session> s,
                                          std::shared_ptr<call> c) {
    http::body_stream body(ctx);
    bool open = true;
    if (c->sse) {
        const std::vector<std::pair<std::string, std::string>> fields{
            {"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}};
        open = co_await body.begin(200, fields);
    }
    if (open) {
        auto winner =
            co_await (relay(ctx, *s, *c, c->sse ? &body : nullptr) || http::client_leaves(ctx));
        std::optional<json::object> final;
        if (winner.index() == 0) final = std::get<0>(std::move(winner));
        if (!final) {
            ctx.keep_alive = false;
            observability::log_info("MCP client of run " + c->run_id +
                                    " left before its end; the run goes on");
        } else if (c->sse) {
            auto sent = co_await body.write(sse_message(*final));
            if (sent) co_await body.end();
        } else {
            auto text = json::serialize(*final);
            co_await http::write_response(ctx, 200, "application/json", text);
        }
    }
    std::lock_guard lock(mutex_);
    s->runs.erase(c->key);
    s->dismissed.erase(c->run_id);
}

// Follows the run's events from its first: progress per step, approvals asked (or the run
// cancelled when they cannot be), and at its end the tools/call response. Nothing when the
// client went away or the gateway is draining.
net::awaitable<std::optional<json::object>> mcp_endpoint::relay(http::request_context& ctx,
                                                                session& s, call& c,
                                                                http::body_stream* body) {
    co_await net::this_coro::throw_if_cancelled(false);
    auto heartbeat = http::heartbeat(ctx.server);
    const auto& steps = c.definition->steps;
    // Progress counts halves of steps: step i (from 1) started is 2i - 1, done or skipped 2i.
    auto position = [&](std::string_view step_id) {
        for (std::size_t i = 0; i < steps.size(); ++i)
            if (steps[i].id == step_id) return static_cast<std::int64_t>(2 * (i + 1));
        return std::int64_t{0};
    };
    std::string why_not;  // set when an approval could not be asked
    std::int64_t after = 0;
    for (;;) {
        if (ctx.draining) co_return std::nullopt;
        auto until = std::chrono::steady_clock::now() + heartbeat;
        auto events = co_await streams_.next_events(c.run_id, after, until);
        auto left = co_await http::cancelled();
        if (left) co_return std::nullopt;
        if (events.empty()) {
            // Nothing new: a run gone (its chat deleted) or ended, else a keep-alive.
            auto status = co_await store_.run_status(c.run_id);
            if (!status || is_final(*status)) {
                auto answer = co_await outcome(s, c, why_not);
                co_return answer;
            }
            if (body) {
                auto alive = co_await body->write(": keep-alive\n\n");
                if (!alive) co_return std::nullopt;
            }
            continue;
        }
        for (const auto& e : events) {
            after = e.seq;
            json::error_code ec;
            auto parsed = json::parse(e.data, ec);
            json::object data;
            if (!ec && parsed.is_object()) data = std::move(parsed.as_object());
            if (e.type == event::step_started || e.type == event::step_completed ||
                e.type == event::step_skipped) {
                auto step_id = string_of(data, "step_id");
                auto at = position(step_id);
                auto progress = e.type == event::step_started ? at - 1 : at;
                if (body && c.token && progress > c.progress) {
                    c.progress = progress;
                    auto verb = e.type == event::step_started   ? "started"
                                : e.type == event::step_skipped ? "skipped"
                                                                : "done";
                    json::object note{{"jsonrpc", "2.0"},
                                      {"method", "notifications/progress"},
                                      {"params",
                                       {{"progressToken", *c.token},
                                        {"progress", progress},
                                        {"total", static_cast<std::int64_t>(2 * steps.size())},
                                        {"message", "Step `" + step_id + "` " + verb}}}};
                    auto sent = co_await body->write(sse_message(note));
                    if (!sent) co_return std::nullopt;
                }
            } else if (e.type == event::approval_required) {
                auto call_id = string_of(data, "call_id");
                if (body && s.can_ask) {
                    json::object schema{{"type", "object"}, {"properties", json::object{}}};
                    json::object ask{
                        {"jsonrpc", "2.0"},
                        {"id", std::string(approval_prefix) + c.run_id + "/" + call_id},
                        {"method", "elicitation/create"},
                        {"params",
                         {{"message", approval_question(*c.definition, data)},
                          {"requestedSchema", std::move(schema)}}}};
                    auto sent = co_await body->write(sse_message(ask));
                    if (!sent) co_return std::nullopt;
                } else {
                    why_not = "The workflow `" + c.definition->id +
                              "` needs a human approval of `" + string_of(data, "tool") +
                              "`, and this MCP client cannot ask for one (it declared no "
                              "elicitation). Run the workflow in review mode (`mcp.edits: "
                              "review`, its edits kept for review) or from the console (/console), "
                              "where approvals are asked. Run " +
                              c.run_id + " was cancelled.";
                    co_await runs_.cancel(c.run_id);
                }
            } else if (agent::is_final_event(e.type)) {
                auto answer = co_await outcome(s, c, why_not);
                co_return answer;
            }
        }
    }
}

// The tools/call response for a run that ended, from its record (its events hold excerpts of
// long outputs and errors).
net::awaitable<json::object> mcp_endpoint::outcome(session& s, const call& c, std::string why_not) {
    auto record = co_await store_.run(c.run_id);
    if (!record) co_return rpc_result(c.id, tool_text("The run " + c.run_id + " is gone.", true));
    json::object result;
    if (record->status == run_status::completed)
        result = tool_text(record->output, false);
    else if (record->status == run_status::failed)
        result = tool_text(record->error, true);
    else {
        if (why_not.empty()) {
            std::lock_guard lock(mutex_);
            if (auto it = s.dismissed.find(c.run_id); it != s.dismissed.end()) why_not = it->second;
        }
        result = tool_text(why_not.empty() ? "Run " + c.run_id + " was cancelled." : why_not, true);
    }
    result["_meta"] =
        json::object{{"contextgate/run_id", c.run_id}, {"contextgate/chat_id", record->chat_id}};
    co_return rpc_result(c.id, std::move(result));
}

// accept → approve; decline → reject; cancel, or an error → the run is cancelled with the reason.
net::awaitable<void> mcp_endpoint::answered(std::shared_ptr<session> s,
                                            const json::object& message) {
    const auto& id = message.at("id");
    if (!id.is_string() || !id.as_string().starts_with(approval_prefix)) co_return;
    std::string_view rest(id.as_string());
    rest.remove_prefix(approval_prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string_view::npos) co_return;
    std::string run_id(rest.substr(0, slash));
    std::string call_id(rest.substr(slash + 1));
    {
        // Only the runs this session follows: an answer names no other.
        std::lock_guard lock(mutex_);
        bool own = std::any_of(s->runs.begin(), s->runs.end(),
                               [&](const auto& entry) { return entry.second == run_id; });
        if (!own) co_return;
    }
    std::string action;
    std::string failure;
    if (const auto* result = object_of(message, "result"))
        action = string_of(*result, "action");
    else if (const auto* error = object_of(message, "error"))
        failure = string_of(*error, "message");
    if (action == "accept" || action == "decline") {
        agent::decision d;
        d.approve = action == "accept";
        if (!d.approve) d.feedback = "Declined in the MCP client.";
        auto refused = co_await runs_.decide(run_id, call_id, std::move(d));
        if (refused)
            observability::log_info("MCP approval of " + call_id +
                                    " not applied: " + refused->message);
        co_return;
    }
    {
        std::lock_guard lock(mutex_);
        s->dismissed[run_id] =
            action == "cancel"
                ? "The approval was dismissed in the MCP client; run " + run_id + " was cancelled."
                : "The MCP client could not ask for the approval (" +
                      (failure.empty() ? std::string("no answer") : failure) + "); run " + run_id +
                      " was cancelled. Run the workflow from the console (/console) instead.";
    }
    co_await runs_.cancel(run_id);
}

}  // namespace gateway::context
