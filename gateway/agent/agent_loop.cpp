#include "gateway/agent/agent_loop.hpp"

#include "gateway/agent/json_protocol.hpp"
#include "gateway/agent/tool_call_parser.hpp"
#include "gateway/guardrails/engine.hpp"
#include "gateway/guardrails/model_check.hpp"
#include "gateway/guardrails/webhook.hpp"
#include "gateway/ids.hpp"
#include "gateway/providers/genai_trace.hpp"
#include "gateway/run_events.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace gateway::agent {

namespace json = boost::json;

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
                    user_text("You have reached the limit of " + std::to_string(limit) +
                              " tool steps. Do not call any more tools. Reply now with your "
                              "final answer in plain text: what you did, and what is left to "
                              "do."));
            } else {
                ++run.record.step;
                s.turns = turns + 1;
            }
        }
        bool native =
            model_.upstream_for(run.chat.model).tool_calling == config::tool_calling_mode::native;
        auto request = build_request(run);
        auto b = journal_.begin(run);
        if (request.trimmed) b.event(event::context_trimmed, std::move(*request.trimmed));
        b.event(event::model_requested, {{"attempt", s.retries + 1}});
        // Stored while the model is asked: a restart before it lands asks again.
        co_await journal_.send(run, std::move(b), false);
        // The reply streams to the watchers as message.delta events; told stays true while
        // text is out that a call would have to withdraw (message.reset).
        bool told = false;
        auto turn = co_await ask(run, std::move(request.model), text_events(run, told));
        if (!turn) co_return;
        std::vector<providers::tool_call> native_calls;
        if (native)
            for (const auto* c : turn->content.calls()) native_calls.push_back(*c);
        // The text that came with a native call is not the answer.
        if (!native_calls.empty()) co_await withdraw_text(run, told);
        if (!native_calls.empty() && !s.final_request) {
            auto go_on =
                co_await open_native_turn(run, turn->content.text(), std::move(native_calls));
            if (!go_on) co_return;
            continue;
        }
        // The protocol's reply (a native reply's text: its calls were taken above).
        auto content = native ? turn->content.text() : protocol_text(*turn);
        auto finish_reason = providers::openai_finish_reason(turn->why);
        parsed_reply parsed;
        std::optional<std::string> constrained;
        if (model_.upstream_for(run.chat.model).json_schema) constrained = schema_answer(content);
        if (constrained)
            parsed.answer = *constrained;
        else
            parsed = parse_reply(content, finish_reason, tools_, run.role);

        // Streamed text that turned out to be a call (or a malformed reply) is withdrawn.
        if (parsed.what != parsed_reply::kind::final_answer) co_await withdraw_text(run, told);
        if (s.final_request) {
            if (parsed.what == parsed_reply::kind::final_answer) {
                run.conversation.push_back(assistant_text(parsed.answer));
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
            run.conversation.push_back(assistant_text(parsed.answer));
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
            auto said = parsed.reason == failure::truncated ? content.substr(0, 200) + " […cut off]"
                                                            : content;
            s.failed.push_back(assistant_text(std::move(said)));
            s.failed.push_back(user_text(parsed.message));
            auto retry = journal_.begin(run);
            retry.event(event::model_retry,
                        {{"reason", reason}, {"message", parsed.message}, {"attempt", s.retries}});
            co_await journal_.checkpoint(run, std::move(retry));
            continue;
        }

        // A valid call: the failed attempts leave the history.
        s.failed.clear();
        s.retries = 0;
        const auto& call = parsed.call;
        if (repeated_too_often(run, call.tool, call.parameters)) co_return;
        pending_call p;
        p.call_id = new_id("call");
        p.tool = call.tool;
        p.parameters = call.parameters;
        p.terminate = call.terminate;
        run.conversation.push_back({providers::role::assistant,
                                    {providers::part::of_call(protocol_call(
                                        p.call_id, call.tool, call.parameters, call.terminate))}});
        run.open_call(std::move(p));
        auto announced = journal_.begin(run);
        // A native model that wrote our JSON protocol in its text: taken, and counted.
        if (native) announced.event(event::model_salvaged, {{"tool", call.tool}});
        announced.call_opened();
        // Stored while the call is settled: whatever a write must have stored before it runs
        // (its plan, the approval asked) is a commit of its own, which waits for this one.
        co_await journal_.send(run, std::move(announced), true);
    }
}

// A native turn's calls: the turn goes into the conversation as the model sent it (ids and
// provider_meta kept for the provider), then each call is opened in order, the first now and
// the others queued behind it; their results go back together in the next request.
net::awaitable<bool> agent_loop::open_native_turn(live_run& run, const std::string& text,
                                                  std::vector<providers::tool_call> calls) {
    auto& s = run.state;
    s.failed.clear();
    s.retries = 0;
    message turn{providers::role::assistant, {}};
    if (!text.empty()) turn.parts.push_back(providers::part::of_text(text));
    std::vector<pending_call> opened;
    for (auto& c : calls) {
        pending_call p;
        p.call_id = new_id("call");
        if (c.id.empty()) c.id = p.call_id;  // a server that gives none: results need one
        p.tool = c.name;
        p.parameters = c.arguments;
        p.native_id = c.id;
        opened.push_back(std::move(p));
        turn.parts.push_back(providers::part::of_call(std::move(c)));
    }
    run.conversation.push_back(std::move(turn));
    s.queue.assign(std::make_move_iterator(opened.begin() + 1),
                   std::make_move_iterator(opened.end()));
    auto go_on = co_await open_native_call(run, std::move(opened.front()));
    co_return go_on;
}

// Opens one native call: announced like any call; an unknown tool or parameters that break its
// schema are answered at once with the error, as a result the model reads (every native call
// must have one). False when the run ended here.
net::awaitable<bool> agent_loop::open_native_call(live_run& run, pending_call p) {
    if (repeated_too_often(run, p.tool, p.parameters)) co_return false;
    bool known = false;
    for (const auto* t : tools_.for_role(run.role)) known = known || t->spec().name == p.tool;
    std::optional<tools::tool_result> refused;
    if (!known)
        refused = tools::tool_result::failure(tools::code::unknown_tool,
                                              "There is no tool named `" + p.tool + "`.");
    else if (auto problem = tools_.validate(p.tool, p.parameters); !problem.empty())
        refused = tools::tool_result::failure(
            tools::code::invalid_parameters,
            "The parameters of " + p.tool + " are invalid at " + problem +
                ". Its schema: " + json::serialize(tools_.schema(p.tool)) + ".");
    run.open_call(std::move(p));
    auto announced = journal_.begin(run);
    announced.call_opened();
    co_await journal_.send(run, std::move(announced), true);
    if (refused) {
        auto go_on = co_await deliver(run, *refused);
        co_return go_on;
    }
    co_return true;
}

net::awaitable<bool> agent_loop::settle_pending(live_run& run) {
    auto result = co_await gate_.settle(run);
    if (!result) co_return false;  // ended (cancel, approval timeout) or stopping
    auto go_on = co_await deliver(run, *result);
    co_return go_on;
}

// Hands a call's outcome to the model (and the watchers), then applies the limits that depend on
// it. False when the run ended here.
net::awaitable<bool> agent_loop::deliver(live_run& run, const tools::tool_result& outcome) {
    auto& s = run.state;
    auto p = *s.pending;
    auto b = journal_.begin(run);
    // What the model reads of it, the guardrails' tool_result stage passed.
    auto guarded = co_await guard_result(run, p.tool, outcome, b);
    const auto& result = guarded ? *guarded : outcome;
    bool denied = result.error_code == tools::code::denied_by_user;
    s.tool_errors = result.ok || denied ? 0 : s.tool_errors + 1;
    // The result is the tool's own text (the JSON protocol says which tool it was when it
    // renders it), a failure says what failed. Either way a repeated call carries the warning.
    std::string text = denied || result.ok ? result.text : result_message(p.tool, result);
    if (s.identical >= static_cast<int>(limits_.identical_call_warn))
        text += "\n\nNote: this is call number " + std::to_string(s.identical) + " to `" + p.tool +
                "` with the same parameters in a row; the result will not change. Change your "
                "approach or give your final answer.";
    auto answers = p.native_id.empty() ? p.call_id : p.native_id;
    run.conversation.push_back(
        {providers::role::tool,
         {providers::part::of_result({answers, p.tool, std::move(text), !result.ok})}});
    gate_.record_result(run, b, result);
    s.pending.reset();
    run.call.reset();
    // Stored with whatever the run commits next (the next model request, the next call, its
    // end) rather than on its own.
    journal_.defer(run, std::move(b));
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
    if (!s.queue.empty()) {
        auto next = std::move(s.queue.front());
        s.queue.erase(s.queue.begin());
        auto go_on = co_await open_native_call(run, std::move(next));
        co_return go_on;
    }
    co_return true;
}

// Runs the tool_result guardrails of the configuration in force: its detectors, then its
// webhooks and model checks. The run goes on whatever they decide.
net::awaitable<std::optional<tools::tool_result>> agent_loop::guard_result(
    live_run& run, const std::string& tool, const tools::tool_result& result,
    run_journal::batch& b) {
    auto guards = model_.guardrails();
    if (!guards.rules || guards.rules->empty() || result.text.empty()) co_return std::nullopt;
    using stage = config::guardrail_stage;
    guardrails::subject who{{}, {}, run.chat.model};
    auto chosen = guards.rules->select(stage::tool_result, who);
    if (chosen.empty()) co_return std::nullopt;
    auto checked = guards.rules->check(chosen, result.text);
    guardrails::record(checked, stage::tool_result);
    std::optional<guardrails::finding> blocked = checked.blocked_by;
    json::array hits;
    for (const auto& f : checked.hits)
        if (f.action != config::guardrail_action::log)
            hits.push_back({{"guardrail", f.guardrail}, {"rule", f.rule}});
    std::string text =
        checked.result == guardrails::verdict::masked ? std::move(checked.text) : result.text;
    if (!blocked && chosen.has_external_checks()) {
        for (const auto* g : chosen.items()) {
            guardrails::webhook_answer answer;
            std::string_view rule = "webhook";
            if (g->config.webhook && guards.hooks) {
                answer = co_await guards.hooks->ask(g->config, stage::tool_result, text,
                                                    run.chat.model, "");
            } else if (g->config.model_check) {
                answer = co_await guardrails::ask_model(guards.models, g->config, text);
                rule = "model_check";
            } else {
                continue;
            }
            guardrails::finding hit{g->config.name, rule, config::guardrail_action::block};
            if (answer.what == guardrails::webhook_answer::action::block) {
                blocked = hit;
            } else if (answer.what == guardrails::webhook_answer::action::mask &&
                       !answer.spans.empty()) {
                hit.action = config::guardrail_action::mask;
                std::string masked;
                std::size_t copied = 0;
                for (auto [begin, end] : answer.spans) {
                    masked.append(text, copied, begin - copied);
                    masked += "[REDACTED:" + g->config.name + "]";
                    copied = end;
                }
                text = masked + text.substr(copied);
            } else {
                continue;
            }
            guardrails::outcome counted;
            counted.hits.push_back(hit);
            guardrails::record(counted, stage::tool_result);
            hits.push_back({{"guardrail", hit.guardrail}, {"rule", hit.rule}});
            if (blocked) break;
        }
    }
    if (hits.empty()) co_return std::nullopt;
    b.event(event::guardrail_applied,
            {{"tool", tool}, {"action", blocked ? "block" : "mask"}, {"hits", std::move(hits)}});
    if (blocked)
        co_return tools::tool_result::failure(
            tools::code::guardrail_blocked,
            "The result was withheld: the guardrail `" + std::string(blocked->guardrail) +
                "` blocked it (rule `" + std::string(blocked->rule) + "`). Go on without it.");
    auto masked = result;
    masked.text = std::move(text);
    co_return masked;
}

void agent_loop::arm_wall(live_run& run) {
    run.wall_hit = false;
    run.wall.expires_after(limits_.max_wall_time - run.spent());
    run.wall.async_wait([&run](boost::system::error_code ec) {
        if (ec) return;
        run.wall_hit = true;
        run.canceller.cancel();
    });
}

retry_hook agent_loop::retry_events(live_run& run) {
    return [this, &run](model_retry retry) -> net::awaitable<void> {
        auto b = journal_.begin(run);
        b.event(event::model_retry,
                {{"reason", "UPSTREAM_ERROR"},
                 {"message", retry.why + "; retrying in " + std::to_string(retry.wait.count()) +
                                 " ms (" + std::to_string(retry.attempt) + " of " +
                                 std::to_string(retry.of) + ")"},
                 {"attempt", retry.attempt}});
        co_await journal_.record(run, std::move(b));
    };
}

// Counts identical calls in a row (both protocols): ends the run at identical_call_stop.
bool agent_loop::repeated_too_often(live_run& run, const std::string& tool,
                                    const json::object& parameters) {
    auto& s = run.state;
    auto signature = tool + json::serialize(parameters);
    s.identical = s.last_call == signature ? s.identical + 1 : 1;
    s.last_call = signature;
    if (s.identical < static_cast<int>(limits_.identical_call_stop)) return false;
    run.end(run_status::failed, "",
            "The model made the same call to `" + tool + "` " + std::to_string(s.identical) +
                " times in a row.");
    return true;
}

net::awaitable<void> agent_loop::withdraw_text(live_run& run, bool& told) {
    if (!told) co_return;
    auto withdrawn = journal_.begin(run);
    withdrawn.event(event::message_reset, {});
    co_await journal_.record(run, std::move(withdrawn));
    told = false;
}

bool agent_loop::answered(live_run& run, const model_failure* failed) {
    run.wall.cancel();
    if (!failed) return true;
    if (failed->cancelled) {
        if (run.stopping) return false;
        if (run.wall_hit)
            run.end(run_status::failed, "",
                    "The run exceeded its wall-time limit of " +
                        duration_text(limits_.max_wall_time) + ".");
        else
            run.end(run_status::cancelled, "", "");
        return false;
    }
    run.end(run_status::failed, "", "The model call failed: " + failed->message);
    return false;
}

text_hook agent_loop::text_events(live_run& run, bool& told) {
    // A reply that starts like a call (`{`, a code fence) or with reasoning (`<think>`) is held
    // back whole: watchers see only text that reads as an answer.
    struct gate {
        std::string held;
        bool open = false;
        bool shut = false;
    };
    auto g = std::make_shared<gate>();
    return [this, &run, &told, g](std::string text, bool reset) -> net::awaitable<void> {
        auto b = journal_.begin(run);
        if (reset) {
            *g = gate{};
            if (!told) co_return;
            b.event(event::message_reset, {});
            told = false;
        } else {
            if (g->shut) co_return;
            if (!g->open) {
                g->held += text;
                auto first = g->held.find_first_not_of(" \t\r\n");
                if (first == std::string::npos) co_return;
                char c = g->held[first];
                if (c == '{' || c == '`' || c == '<') {
                    g->shut = true;
                    co_return;
                }
                g->open = true;
                text = std::move(g->held);
            }
            b.event(event::message_delta, {{"text", std::move(text)}});
            told = true;
        }
        // The reply is read on while its text is stored (and reaches the watchers in order).
        co_await journal_.send(run, std::move(b), false);
    };
}

net::awaitable<std::optional<providers::reply>> agent_loop::ask(live_run& run, providers::request r,
                                                                text_hook on_text) {
    arm_wall(run);
    // The step's `chat {model}` span: the model call with its retries and fallbacks.
    auto span = run.trace.child("chat " + r.model, observability::span_kind::client);
    if (span.recording()) {
        const auto& up = model_.upstream_for(r.model);
        providers::describe_call(span, "chat", up.provider, r.model, up.endpoint.host,
                                 up.endpoint.port);
    }
    auto turn = co_await model_.converse(std::move(r), run.record.id, run.canceller,
                                         retry_events(run), std::move(on_text), span.context());
    if (const auto* failed = std::get_if<model_failure>(&turn))
        span.fail(failed->cancelled ? "cancelled" : error_code_name(failed->code), failed->message);
    if (!answered(run, std::get_if<model_failure>(&turn))) co_return std::nullopt;
    auto& answer = std::get<model_answer>(turn);
    providers::describe_reply(span, answer.reply);
    providers::describe_usage(span, answer.reply.used);
    if (answer.settled.cost.priced) span.set("contextgate.cost_usd", answer.settled.cost.usd);
    span.end();
    account(run, answer.settled);
    co_return std::move(answer.reply);
}

void agent_loop::account(live_run& run, const settled_call& call) {
    auto used = model_usage::of_call(call.used, call.cost);
    run.state.usage += used;
    json::object replied{{"upstream", call.upstream},
                         {"model", call.model},
                         {"usage", tokens_json(used)},
                         {"cost", !call.cost.priced     ? "unpriced"
                                  : call.cost.estimated ? "estimated"
                                                        : "priced"}};
    if (call.cost.priced) replied["cost_usd"] = cost_usd_json(used);
    auto b = journal_.begin(run);
    b.event(event::model_replied, std::move(replied));
    // Stored with whatever the run commits next (it always commits after a reply: the call it
    // opens, the re-ask, its end), in one transaction with the totals in its state.
    journal_.defer(run, std::move(b));
}

}  // namespace gateway::agent
