#include "gateway/agent/approval_gate.hpp"

#include "gateway/clock.hpp"
#include "gateway/mcp/remote_tool.hpp"
#include "gateway/observability/failpoint.hpp"
#include "gateway/run_events.hpp"
#include "gateway/tools/error_codes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::agent {

namespace json = boost::json;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);

decision decision_of(const store::approval_record& stored) {
    decision d;
    d.approve = stored.decision == "approve";
    d.feedback = stored.feedback;
    d.whole_run = stored.scope == "run";
    if (!stored.parameters.empty()) {
        json::error_code ec;
        auto edited = json::parse(stored.parameters, ec);
        if (!ec && edited.is_object()) d.parameters = edited.as_object();
    }
    return d;
}

std::string diff_of(const tools::tool_result& r) {
    auto* d = r.data.if_contains("diff");
    return d && d->is_string() ? std::string(d->as_string()) : std::string();
}

// The execute_tool span of the call `p` under the run's span (GenAI conventions).
observability::span tool_span(const live_run& run, const pending_call& p) {
    auto s = run.trace.child("execute_tool " + p.tool, observability::span_kind::internal);
    if (!s.recording()) return s;
    s.set("gen_ai.operation.name", "execute_tool");
    s.set("gen_ai.tool.name", p.tool);
    s.set("gen_ai.tool.type", "function");
    s.set("gen_ai.tool.call.id", p.native_id.empty() ? p.call_id : p.native_id);
    if (!p.workflow_step.empty()) s.set("contextgate.workflow_step", p.workflow_step);
    if (observability::capture_content())
        s.set("gen_ai.tool.call.arguments",
              observability::bounded_content(json::serialize(p.parameters)));
    return s;
}

}  // namespace

approval_gate::approval_gate(const config::context_config& limits, const tools::registry& tools,
                             run_journal& journal, tool_runner& runner)
    : limits_(limits), tools_(tools), journal_(journal), runner_(runner) {}

config::approval_policy approval_gate::policy_for(const std::string& tool,
                                                  const json::object& parameters) const {
    std::optional<config::approval_policy> configured;
    for (const auto& [name, policy] : limits_.approvals)
        if (name == tool) configured = policy;
    // An MCP tool: the configured policy, else its server's; its annotations only tighten it.
    if (const auto* t = tools_.find(tool); t && t->remote()) {
        const auto& remote = static_cast<const mcp::remote_tool&>(*t);
        return remote.policy(configured.value_or(remote.policy()));
    }
    if (configured) return *configured;
    return runner_.writes(tool, parameters) ? config::approval_policy::ask
                                            : config::approval_policy::always;
}

net::awaitable<std::optional<tools::tool_result>> approval_gate::settle(live_run& run) {
    auto span = tool_span(run, *run.state.pending);
    run.approval_waited_ms = -1;
    auto result = co_await settle_call(run);
    if (run.approval_waited_ms >= 0)
        span.set("contextgate.approval_wait_seconds",
                 static_cast<double>(run.approval_waited_ms) / 1000.0);
    if (!result) {
        span.set("contextgate.tool.outcome", run.stopping ? "stopped" : "not_run");
        if (run.ended && run.ended->status != run_status::completed)
            span.fail("run_ended", run.ended->error);
        co_return result;
    }
    bool denied = result->error_code == tools::code::denied_by_user;
    span.set("contextgate.tool.outcome", result->ok ? "ok" : denied ? "rejected" : "error");
    if (!result->ok && !denied) span.fail(result->error_code, result->text);
    if (observability::capture_content())
        span.set("gen_ai.tool.call.result", observability::bounded_content(result->text));
    co_return result;
}

net::awaitable<std::optional<tools::tool_result>> approval_gate::settle_call(live_run& run) {
    auto& p = *run.state.pending;
    if (p.executing) {
        // Resumed after a crash in the middle of this write: the target says what happened.
        auto intent = *p.executing;
        p.executing.reset();
        auto verdict = co_await runner_.judge(run, intent);
        if (verdict == tool_runner::verdict::happened) {
            auto name =
                intent.path.empty() ? std::string("the document") : tools::quoted(intent.path);
            json::object data{{"applied", true}, {"interrupted", true}};
            if (!intent.path.empty()) data["path"] = intent.path;
            if (run.call && !run.call->preview.empty()) data["diff"] = run.call->preview;
            co_return tools::tool_result::success(
                "`" + p.tool + "` on " + name +
                    " completed; the gateway restarted before it could report it.",
                std::move(data));
        }
        if (verdict == tool_runner::verdict::not_happened) {
            auto result = co_await execute(run);
            co_return result;
        }
        // Neither as it was nor as the write would leave it: only the human can say.
        p.asked = false;
        p.reason = "interrupted";
        run.decided.reset();
    }
    if (!p.asked && p.reason.empty() && runner_.writes(p.tool, p.parameters)) {
        // The chat's edit mode may have changed since the run started (PATCH /context/chats).
        auto chat = co_await journal_.store().chat(run.chat.id);
        if (chat) run.chat.edits = chat->edits;
        if (run.chat.edits == edit_mode::review &&
            policy_for(p.tool, p.parameters) != config::approval_policy::never) {
            // Review mode: the write is recorded as a suggestion, nothing to approve now.
            auto result = co_await runner_.run(run, p.tool, p.parameters, tools::mode::execute);
            co_return result;
        }
    }
    if (!p.asked && p.reason.empty()) {
        bool approved_for_run =
            std::find(run.state.approved_tools.begin(), run.state.approved_tools.end(), p.tool) !=
            run.state.approved_tools.end();
        auto policy = policy_for(p.tool, p.parameters);
        if (policy == config::approval_policy::never)
            co_return tools::tool_result::failure(
                tools::code::permission_denied,
                "`" + p.tool +
                    "` is switched off on this gateway. Use another tool, or give your final "
                    "answer.");
        if (policy == config::approval_policy::always || approved_for_run) {
            auto result = co_await execute(run);
            co_return result;
        }
    }
    auto outcome = co_await ask_and_wait(run);
    co_return outcome;
}

// Asks the human (unless the run was asked before a restart) and waits for the decision; then
// runs the call or reports the rejection.
net::awaitable<std::optional<tools::tool_result>> approval_gate::ask_and_wait(live_run& run) {
    auto& p = *run.state.pending;
    if (!p.asked) {
        std::optional<std::int64_t> version;
        auto preview =
            co_await runner_.run(run, p.tool, p.parameters, tools::mode::preview, {}, &version);
        // A document edit runs only on the version the human saw.
        p.document_version = version;
        // A write that would fail anyway is reported at once: no human needed to learn that.
        if (!preview.ok) co_return preview;
        p.asked = true;
        p.requested_at = now_ms();
        run.decided.reset();
        run.record.status = run_status::awaiting_approval;
        auto diff = diff_of(preview);
        if (run.call) {
            run.call->status = tool_call_status::awaiting_approval;
            run.call->preview = diff;
        }
        json::object asked{{"call_id", p.call_id},
                           {"tool", p.tool},
                           {"parameters", p.parameters},
                           {"preview", diff},
                           {"summary", preview.text}};
        if (!p.reason.empty()) asked["reason"] = p.reason;
        auto b = journal_.begin(run);
        b.call();
        b.event(event::approval_required, std::move(asked));
        co_await journal_.checkpoint(run, std::move(b));
    } else if (!run.decided) {
        // Resumed: the decision may have been stored before the gateway stopped.
        auto stored = co_await journal_.store().approval(p.call_id);
        if (stored) run.decided = decision_of(*stored);
    }

    // Time awaiting approval does not count against the wall-time limit.
    run.bank_time();
    auto deadline =
        p.requested_at +
        std::chrono::duration_cast<std::chrono::milliseconds>(limits_.approval_timeout).count();
    while (!run.decided) {
        if (run.stopping) co_return std::nullopt;
        if (run.cancel_requested) {
            if (run.call) run.call->status = tool_call_status::cancelled;
            run.end(run_status::cancelled, "", "");
            co_return std::nullopt;
        }
        auto left = deadline - now_ms();
        if (left <= 0) {
            if (run.call) run.call->status = tool_call_status::expired;
            run.end(run_status::failed, "",
                    "No decision on `" + p.tool + "` (" + p.call_id + ") within " +
                        duration_text(limits_.approval_timeout) + "; nothing was changed.");
            co_return std::nullopt;
        }
        run.wake.expires_after(std::chrono::milliseconds(left));
        [[maybe_unused]] auto [ec] = co_await run.wake.async_wait(use_ec);
    }
    if (run.stopping) co_return std::nullopt;
    auto decided = std::move(*run.decided);
    run.decided.reset();
    run.approval_waited_ms = std::max<std::int64_t>(0, now_ms() - p.requested_at);
    run.segment_started = std::chrono::steady_clock::now();
    run.record.status = run_status::running;
    if (decided.parameters) p.parameters = *decided.parameters;
    if (decided.approve && decided.whole_run) run.state.approved_tools.push_back(p.tool);
    json::object resolved{{"call_id", p.call_id},
                          {"tool", p.tool},
                          {"decision", decided.approve ? "approve" : "reject"},
                          {"scope", decided.whole_run ? "run" : "once"}};
    if (!decided.feedback.empty()) resolved["feedback"] = decided.feedback;
    if (decided.parameters) resolved["parameters"] = *decided.parameters;
    if (run.call) {
        run.call->status =
            decided.approve ? tool_call_status::approved : tool_call_status::rejected;
        if (decided.parameters) run.call->parameters = json::serialize(*decided.parameters);
    }
    auto b = journal_.begin(run);
    b.call();
    b.event(event::approval_resolved, std::move(resolved));
    co_await journal_.checkpoint(run, std::move(b));
    if (decided.approve) {
        auto result = co_await execute(run);
        co_return result;
    }
    std::string denial = "The user denied this operation.";
    if (!decided.feedback.empty()) denial += " Their feedback: " + decided.feedback;
    co_return tools::tool_result::failure(tools::code::denied_by_user, denial);
}

net::awaitable<tools::tool_result> approval_gate::execute(live_run& run) {
    auto& p = *run.state.pending;
    if (runner_.writes(p.tool, p.parameters)) {
        // The write's plan is stored before it runs: a crash in between is recognised on resume.
        auto preview = co_await runner_.run(run, p.tool, p.parameters, tools::mode::preview,
                                            p.document_version);
        if (!preview.ok) co_return preview;
        auto plan = co_await runner_.plan_write(run, p.tool, p.parameters, preview);
        if (plan) {
            p.executing = plan->intent;
            auto b = journal_.begin(run);
            if (run.call) {
                run.call->status = tool_call_status::executing;
                if (run.call->preview.empty()) run.call->preview = diff_of(preview);
                b.call();
            }
            b.backup({p.call_id, run.record.id, plan->intent.path, plan->intent.existed,
                      std::move(plan->previous), plan->intent.after_sha256, 0, 0});
            co_await journal_.checkpoint(run, std::move(b));
        }
        observability::failpoint("write.before_execute");
        auto result = co_await runner_.run(run, p.tool, p.parameters, tools::mode::execute,
                                           p.document_version);
        observability::failpoint("write.after_execute");
        co_return result;
    }
    auto result = co_await runner_.run(run, p.tool, p.parameters, tools::mode::execute);
    co_return result;
}

void approval_gate::record_result(live_run& run, run_journal::batch& b,
                                  const tools::tool_result& result) {
    auto& p = *run.state.pending;
    bool denied = result.error_code == tools::code::denied_by_user;
    if (run.call) {
        run.call->status = denied      ? tool_call_status::rejected
                           : result.ok ? tool_call_status::done
                                       : tool_call_status::failed;
        run.call->result = json::serialize(json::object{{"ok", result.ok},
                                                        {"error_code", result.error_code},
                                                        {"text", result.text},
                                                        {"data", result.data}});
        b.call();
    }
    if (p.executing && !result.ok) {
        // A marked write that failed changed nothing: its backup must not be undone.
        b.backup({p.call_id, run.record.id, p.executing->path, p.executing->existed, "",
                  p.executing->after_sha256, now_ms(), 0});
    }
    p.executing.reset();
    b.event(event::tool_result, {{"call_id", p.call_id},
                                 {"tool", p.tool},
                                 {"ok", result.ok},
                                 {"error_code", result.error_code},
                                 {"text", result.text},
                                 {"data", result.data}});
}

net::awaitable<std::optional<refusal>> approval_gate::decide(live_run& run, std::string call_id,
                                                             decision d) {
    // Decided and not yet taken up by the run (which no longer reads as awaiting it).
    if (run.decided && run.state.pending && run.state.pending->call_id == call_id)
        co_return refusal{errc::conflict, "Call " + call_id + " has been decided already."};
    if (!run.awaiting(call_id))
        co_return refusal{errc::call_not_pending,
                          "Call " + call_id + " is not awaiting approval (the run is " +
                              std::string(status_name(run.record.status)) + ")."};
    const auto& tool = run.state.pending->tool;
    if (d.parameters)
        if (auto problem = tools_.validate(tool, *d.parameters); !problem.empty())
            co_return refusal{errc::invalid_parameters,
                              "Invalid parameters for `" + tool + "` at " + problem};
    // Claimed before the store is awaited: a second decision meanwhile is refused above.
    run.decided = d;
    // Read-your-writes: a client that reads the run once this answers (on any replica) finds
    // the call decided and the run going on, never the call still awaiting approval, so the
    // call's and the run's statuses go in the decision's own commit. The run, once it wakes,
    // records approval.resolved (ask_and_wait).
    run.record.status = run_status::running;
    if (run.call) {
        run.call->status = d.approve ? tool_call_status::approved : tool_call_status::rejected;
        if (d.parameters) run.call->parameters = json::serialize(*d.parameters);
    }
    auto b = journal_.begin(run);
    b.approval({call_id, run.record.id, d.approve ? "approve" : "reject",
                d.parameters ? json::serialize(*d.parameters) : "", d.feedback,
                d.whole_run ? "run" : "once", now_ms()});
    b.call();
    b.run_status();
    co_await journal_.record(run, std::move(b));
    run.wake.cancel();
    co_return std::nullopt;
}

}  // namespace gateway::agent
