#include "gateway/agent/agent_loop.hpp"

#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/tools/error_codes.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace gateway::agent {

namespace json = boost::json;

namespace {

// How the context budget (in tokens) is turned into bytes of request: a deliberately rough
// estimate, since no tokenizer is at hand.
constexpr std::size_t bytes_per_token = 4;

// The normalised call, as it goes into the history: the model learns the clean form.
std::string call_text(std::string_view tool, const json::object& parameters, bool terminate) {
    return json::serialize(
        json::object{{"tool", tool}, {"parameters", parameters}, {"terminate", terminate}});
}

// With a json_schema upstream the model's final answer arrives as {"answer": "…"}.
std::optional<std::string> schema_answer(std::string_view content) {
    json::error_code ec;
    auto value = json::parse(content, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    auto* answer = o.if_contains("answer");
    if (!answer || !answer->is_string() || o.contains("tool")) return std::nullopt;
    return std::string(answer->as_string());
}

// response_format for a json_schema upstream: one branch per tool the role may use, each pinning
// the tool's name and its parameter schema, and one branch for the final answer.
json::object response_format(const tools::registry& tools, tools::role role) {
    json::array branches;
    for (const auto* t : tools.for_role(role)) {
        auto name = t->spec().name;
        branches.push_back(
            json::object{{"type", "object"},
                         {"properties",
                          {{"tool", {{"const", name}}},
                           {"parameters", tools.schema(name)},
                           {"terminate", {{"type", "boolean"}}}}},
                         {"required", json::array{"tool", "parameters", "terminate"}},
                         {"additionalProperties", false}});
    }
    branches.push_back(json::object{{"type", "object"},
                                    {"properties", {{"answer", {{"type", "string"}}}}},
                                    {"required", json::array{"answer"}},
                                    {"additionalProperties", false}});
    return {{"type", "json_schema"},
            {"json_schema",
             {{"name", "agent_reply"}, {"strict", false}, {"schema", {{"oneOf", branches}}}}}};
}

std::string message_json(const chat_message& m) {
    return json::serialize(json::object{{"role", m.role}, {"content", m.content}});
}

}  // namespace

std::string result_message(std::string_view tool, const tools::tool_result& result) {
    if (result.ok) return "Result of `" + std::string(tool) + "`:\n" + result.text;
    return "`" + std::string(tool) + "` failed with " + result.error_code + ": " + result.text;
}

agent_loop::agent_loop(const config::context_config& limits, const tools::registry& tools,
                       model_port& model, approval_gate& gate, run_journal& journal)
    : limits_(limits), tools_(tools), model_(model), gate_(gate), journal_(journal) {}

net::awaitable<void> agent_loop::run(live_run& run) {
    auto& s = run.state;
    run.segment_started = std::chrono::steady_clock::now();
    for (;;) {
        if (run.stopping) co_return;  // left as stored: the next start resumes it
        if (run.cancel_requested) {
            run.end(run_status::cancelled, "", "");
            co_return;
        }
        if (s.pending) {
            auto go_on = co_await settle_pending(run);
            if (!go_on) co_return;
            continue;
        }
        if (run.spent() >= limits_.max_wall_time) {
            run.end(run_status::failed, "",
                    "The run exceeded its wall-time limit of " +
                        duration_text(limits_.max_wall_time) + ".");
            co_return;
        }
        // Turns of this agent segment (a chat run is one segment; a workflow's agent steps each
        // start one) against its limit; record.step counts every turn of the run.
        int limit = s.turn_limit.value_or(run.record.max_steps);
        int turns = s.turns.value_or(run.record.step);
        if (!s.final_request && s.failed.empty()) {
            if (turns >= limit) {
                s.final_request = true;
                run.conversation.push_back(
                    {"user", "You have reached the limit of " + std::to_string(limit) +
                                 " tool steps. Do not call any more tools. Reply now with your "
                                 "final answer in plain text: what you did, and what is left to "
                                 "do."});
            } else {
                ++run.record.step;
                s.turns = turns + 1;
            }
        }
        auto request = build_request(run);
        auto b = journal_.begin(run);
        if (request.trimmed) b.event("context.trimmed", std::move(*request.trimmed));
        b.event("model.requested", {{"attempt", s.retries + 1}});
        co_await journal_.record(run, std::move(b));
        auto answered = co_await ask(run, std::move(request.body));
        if (!answered) co_return;
        const auto& reply = *answered;
        parsed_reply parsed;
        std::optional<std::string> constrained;
        if (model_.upstream_for(run.chat.model).json_schema)
            constrained = schema_answer(reply.content);
        if (constrained)
            parsed.answer = *constrained;
        else
            parsed = parse_reply(reply.content, reply.finish_reason, tools_, run.role);

        if (s.final_request) {
            if (parsed.what == parsed_reply::kind::final_answer) {
                run.conversation.push_back({"assistant", parsed.answer});
                run.end(run_status::completed, parsed.answer, "");
            } else {
                run.end(run_status::failed, "",
                        "The run reached its limit of " + std::to_string(limit) +
                            " steps and the model did not give a final answer.");
            }
            co_return;
        }
        if (parsed.what == parsed_reply::kind::final_answer) {
            s.failed.clear();
            s.retries = 0;
            run.conversation.push_back({"assistant", parsed.answer});
            run.end(run_status::completed, parsed.answer, "");
            co_return;
        }
        if (parsed.what == parsed_reply::kind::malformed) {
            ++s.retries;
            auto reason = std::string(failure_name(parsed.reason));
            if (s.retries > static_cast<int>(limits_.max_retries)) {
                run.end(run_status::failed, "",
                        "The model's reply was malformed " + std::to_string(s.retries) +
                            " times in a row; the last time: " + reason + ": " + parsed.message);
                co_return;
            }
            // A truncated reply is not sent back whole: the model should not continue it.
            auto said = parsed.reason == failure::truncated
                            ? reply.content.substr(0, 200) + " […cut off]"
                            : reply.content;
            s.failed.push_back({"assistant", said});
            s.failed.push_back({"user", parsed.message});
            auto retry = journal_.begin(run);
            retry.event("model.retry",
                        {{"reason", reason}, {"message", parsed.message}, {"attempt", s.retries}});
            co_await journal_.checkpoint(run, std::move(retry));
            continue;
        }

        // A valid call: the failed attempts leave the history.
        s.failed.clear();
        s.retries = 0;
        const auto& call = parsed.call;
        auto signature = call.tool + json::serialize(call.parameters);
        s.identical = s.last_call == signature ? s.identical + 1 : 1;
        s.last_call = signature;
        if (s.identical >= static_cast<int>(limits_.identical_call_stop)) {
            run.end(run_status::failed, "",
                    "The model made the same call to `" + call.tool + "` " +
                        std::to_string(s.identical) + " times in a row.");
            co_return;
        }
        pending_call p;
        p.call_id = make_id("call");
        p.tool = call.tool;
        p.parameters = call.parameters;
        p.terminate = call.terminate;
        run.conversation.push_back(
            {"assistant", call_text(call.tool, call.parameters, call.terminate)});
        run.open_call(std::move(p));
        auto announced = journal_.begin(run);
        announced.call_opened();
        co_await journal_.checkpoint(run, std::move(announced));
    }
}

net::awaitable<bool> agent_loop::settle_pending(live_run& run) {
    auto result = co_await gate_.settle(run);
    if (!result) co_return false;  // ended (cancel, approval timeout) or stopping
    auto go_on = co_await deliver(run, *result);
    co_return go_on;
}

// Hands a call's outcome to the model (and the watchers), then applies the limits that depend on
// it. False when the run ended here.
net::awaitable<bool> agent_loop::deliver(live_run& run, const tools::tool_result& result) {
    auto& s = run.state;
    auto p = *s.pending;
    bool denied = result.error_code == tools::code::denied_by_user;
    s.tool_errors = result.ok || denied ? 0 : s.tool_errors + 1;
    auto text = denied ? result.text : result_message(p.tool, result);
    if (s.identical >= static_cast<int>(limits_.identical_call_warn))
        text += "\n\nNote: this is call number " + std::to_string(s.identical) + " to `" + p.tool +
                "` with the same parameters in a row; the result will not change. Change your "
                "approach or give your final answer.";
    run.conversation.push_back({"user", text});
    auto b = journal_.begin(run);
    gate_.record_result(run, b, result);
    s.pending.reset();
    run.call.reset();
    co_await journal_.checkpoint(run, std::move(b));
    if (p.terminate && !denied) {
        run.end(result.ok ? run_status::completed : run_status::failed,
                result.ok ? result.text : "", result.ok ? "" : result_message(p.tool, result));
        co_return false;
    }
    if (s.tool_errors >= static_cast<int>(limits_.max_tool_errors)) {
        run.end(run_status::failed, "",
                std::to_string(s.tool_errors) +
                    " tool calls failed in a row; the last: " + result_message(p.tool, result));
        co_return false;
    }
    co_return true;
}

net::awaitable<std::optional<model_reply>> agent_loop::ask(live_run& run, std::string body) {
    run.wall_hit = false;
    run.wall.expires_after(limits_.max_wall_time - run.spent());
    run.wall.async_wait([&run](boost::system::error_code ec) {
        if (ec) return;
        run.wall_hit = true;
        run.canceller.cancel();
    });
    retry_hook on_retry = [this, &run](model_retry retry) -> net::awaitable<void> {
        auto b = journal_.begin(run);
        b.event("model.retry",
                {{"reason", "UPSTREAM_ERROR"},
                 {"message", retry.why + "; retrying in " + std::to_string(retry.wait.count()) +
                                 " ms (" + std::to_string(retry.attempt) + " of " +
                                 std::to_string(retry.of) + ")"},
                 {"attempt", retry.attempt}});
        co_await journal_.record(run, std::move(b));
    };
    auto reply = co_await model_.complete(run.chat.model, std::move(body), run.record.id,
                                          run.canceller, on_retry);
    run.wall.cancel();
    if (reply.cancelled) {
        if (run.stopping) co_return std::nullopt;
        if (run.wall_hit)
            run.end(run_status::failed, "",
                    "The run exceeded its wall-time limit of " +
                        duration_text(limits_.max_wall_time) + ".");
        else
            run.end(run_status::cancelled, "", "");
        co_return std::nullopt;
    }
    if (!reply.ok) {
        run.end(run_status::failed, "", "The model call failed: " + reply.error);
        co_return std::nullopt;
    }
    co_return reply;
}

agent_loop::request agent_loop::build_request(live_run& run) {
    request out;
    auto& prefix = run.serialized;
    auto extend = [&] {
        // A new segment, or older turns left out: the prefix starts elsewhere now.
        auto from = std::max(run.state.segment_start, run.state.first_sent);
        if (run.serialized_from != from || prefix.empty()) {
            prefix = message_json({"system", run.system_prompt});
            run.serialized_from = from;
            run.serialized_messages = from;
        }
        for (; run.serialized_messages < run.conversation.size(); ++run.serialized_messages) {
            prefix += ',';
            prefix += message_json(run.conversation[run.serialized_messages]);
        }
    };
    extend();
    if (trim_history(run, prefix.size(), out.trimmed)) extend();
    auto& body = out.body;
    body = "{\"model\":" + json::serialize(json::value(run.chat.model));
    body += ",\"messages\":[";
    body += prefix;
    for (const auto& m : run.state.failed) {
        body += ',';
        body += message_json(m);
    }
    body += ']';
    if (model_.upstream_for(run.chat.model).json_schema) {
        body += ",\"response_format\":";
        body += json::serialize(response_format(tools_, run.role));
    }
    body += '}';
    return out;
}

// Keeps a chat run's request within its upstream's context budget: the chat's earlier turns
// (before turn_start) are left out, oldest first, until the system prompt, what is left of them
// and the current turn fit; the current turn is never cut. `trimmed` is set when more was left
// out than announced so far, counting what the run never loaded. True when the request's
// messages changed.
bool agent_loop::trim_history(live_run& run, std::size_t request_bytes,
                              std::optional<json::object>& trimmed) {
    auto& s = run.state;
    if (!s.turn_start) return false;  // workflow segments hold their current turn only
    const auto& upstream = model_.upstream_for(run.chat.model);
    auto budget = upstream.context_budget * bytes_per_token;
    auto turn_start = *s.turn_start;
    auto first = s.first_sent;
    bool changed = false;
    if (budget > 0 && request_bytes > budget && first < turn_start) {
        auto excess = request_bytes - budget;
        while (first < turn_start && excess > 0) {
            auto size = message_json(run.conversation[first]).size() + 1;
            excess = excess > size ? excess - size : 0;
            ++first;
        }
        // The kept history starts with a user turn, as every provider expects.
        while (first < turn_start && run.conversation[first].role == "assistant") ++first;
        s.first_sent = first;
        changed = true;
    }
    auto left_out = s.left_out + first;
    if (left_out > s.trim_reported) {
        s.trim_reported = left_out;
        trimmed = json::object{{"left_out_messages", left_out},
                               {"kept_messages", turn_start - first},
                               {"budget_tokens", upstream.context_budget}};
    }
    return changed;
}

}  // namespace gateway::agent
