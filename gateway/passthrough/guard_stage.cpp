// The /v1 face's guardrails stage (docs/operations.md "Guardrails"): after the admission and
// before the cache and the attempt loop, the texts of a request a guardrail selects are checked
// before anything goes upstream. `mask` rewrites the body (the one time a passthrough body is
// not forwarded as it came), `block` answers 400 guardrail_blocked in the client's own error
// envelope (nothing upstream, nothing charged), `log` only counts. A request no guardrail
// selects is not read: no parse, no copy. The answer's stage over a whole answer (answer_guard.hpp)
// is here too: the same detectors and outside checks, stage `response`.
#include "gateway/passthrough/handler.hpp"

#include "gateway/guardrails/model_check.hpp"
#include "gateway/guardrails/request_scan.hpp"
#include "gateway/guardrails/webhook.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/answer_guard.hpp"
#include "gateway/passthrough/translator.hpp"

namespace gateway::passthrough {

namespace {

using stage = config::guardrail_stage;

// What a stage's outside checks are asked with.
struct outside_checks {
    guardrails::webhooks* hooks = nullptr;
    guardrails::model_caller* models = nullptr;
    config::guardrail_stage stage = config::guardrail_stage::request;
    std::string_view model;
    std::string_view key;
};

// The texts after the selected guardrails' webhooks and model checks: the first to block blocks
// (its reason is the webhook's or the model's, or its `fail: closed`), a webhook's mask masks its
// spans as `[REDACTED:<guardrail>]`. Each hit is counted under the stage.
net::awaitable<guardrails::body_check> ask_outside(const guardrails::selection& chosen,
                                                   const outside_checks& with,
                                                   guardrails::body_texts& texts,
                                                   std::string& reason) {
    guardrails::body_check found;
    for (const auto* g : chosen.items()) {
        guardrails::webhook_answer answer;
        std::string_view rule = "webhook";
        if (g->config.webhook && with.hooks) {
            answer = co_await with.hooks->ask(g->config, with.stage, texts.joined(), with.model,
                                              with.key);
        } else if (g->config.model_check) {
            answer = co_await guardrails::ask_model(with.models, g->config, texts.joined());
            rule = "model_check";
        } else {
            continue;
        }
        guardrails::outcome counted;
        guardrails::finding hit{g->config.name, rule, config::guardrail_action::log};
        if (answer.what == guardrails::webhook_answer::action::block) {
            hit.action = config::guardrail_action::block;
            counted.result = guardrails::verdict::blocked;
            counted.blocked_by = hit;
            counted.hits.push_back(hit);
            guardrails::record(counted, with.stage);
            found.result = guardrails::verdict::blocked;
            found.blocked_by = hit;
            reason = answer.reason;
            co_return found;
        }
        if (answer.what == guardrails::webhook_answer::action::mask && !answer.spans.empty()) {
            hit.action = config::guardrail_action::mask;
            counted.hits.push_back(hit);
            guardrails::record(counted, with.stage);
            texts.replace_joined(answer.spans, "[REDACTED:" + g->config.name + "]");
            found.result = guardrails::verdict::masked;
        }
    }
    co_return found;
}

// What a block tells the client and the log: the guardrail, the rule, an outside check's reason.
std::string blocked_text(const guardrails::finding& by, std::string_view what,
                         const std::string& reason) {
    auto message = guardrails::blocked_message(by, what);
    if (!reason.empty()) message += ": " + reason;
    return message;
}

// Checks one text of a stored answer; false when it blocked (`found` says by what).
template <class Text>
bool check_stored(Text& text, const exchange_state& state, guardrails::body_check& found) {
    auto out = state.guard_rules->check(*state.answer_guards, std::string_view(text));
    guardrails::record(out, stage::response);
    if (out.result == guardrails::verdict::blocked) {
        found.result = guardrails::verdict::blocked;
        found.blocked_by = out.blocked_by;
        return false;
    }
    if (out.result == guardrails::verdict::masked) {
        text = out.text;
        found.result = guardrails::verdict::masked;
    }
    return true;
}

}  // namespace

net::awaitable<void> handler::guard_then_forward(http::request_context& ctx, destination& where,
                                                 const caller* who, bool upgrade) {
    if (upgrade || !guards_.rules || guards_.rules->empty()) {
        co_await forward(ctx, where, upgrade);
        co_return;
    }
    guardrails::subject subject{who ? std::string_view(who->key_name) : std::string_view(),
                                who ? std::string_view(who->team) : std::string_view(),
                                where.model};
    where.answer_guards = guards_.rules->select(stage::response, subject);
    where.key = subject.key;
    auto chosen = guards_.rules->select(stage::request, subject);
    guardrails::body_texts texts;
    if (chosen.empty() || !texts.read(ctx.req.body(), guardrails::body_kind::request)) {
        co_await forward(ctx, where, upgrade);
        co_return;
    }
    auto found = guardrails::check_texts(texts, *guards_.rules, chosen, stage::request);
    std::string reason;
    if (found.result != guardrails::verdict::blocked && chosen.has_external_checks()) {
        outside_checks with{guards_.hooks, guards_.models, stage::request, where.model,
                            subject.key};
        auto asked = co_await ask_outside(chosen, with, texts, reason);
        if (asked.result != guardrails::verdict::pass) found = asked;
    }
    if (found.result == guardrails::verdict::masked) {
        ctx.req.body() = texts.write();
        observability::log_info("request " + ctx.request_id +
                                ": guardrails masked parts of the request");
    }
    if (found.result != guardrails::verdict::blocked) {
        co_await forward(ctx, where, upgrade);
        co_return;
    }
    auto message = blocked_text(*found.blocked_by, "request", reason);
    observability::log_info("request " + ctx.request_id + ": " + message);
    ctx.model = where.model;
    co_await write_blocked(ctx, where.call.dialect, message);
}

net::awaitable<guardrails::body_check> guard_json_answer(std::string& body,
                                                         const exchange_state& state,
                                                         std::string& message) {
    const auto& chosen = *state.answer_guards;
    auto found = guardrails::check_answer(body, *state.guard_rules, chosen);
    std::string reason;
    guardrails::body_texts texts;
    if (found.result != guardrails::verdict::blocked && chosen.has_external_checks() &&
        texts.read(body, guardrails::body_kind::answer)) {
        outside_checks with{state.guard_hooks, state.guard_models, stage::response,
                            state.guard_model, state.guard_key};
        auto asked = co_await ask_outside(chosen, with, texts, reason);
        if (asked.result == guardrails::verdict::masked) body = texts.write();
        if (asked.result != guardrails::verdict::pass) found = asked;
    }
    if (found.result == guardrails::verdict::blocked)
        message = blocked_text(*found.blocked_by, "answer", reason);
    co_return found;
}

guardrails::body_check guard_stored_answer(providers::reply& reply, const exchange_state& state,
                                           std::string& message) {
    using kind = providers::part::kind;
    guardrails::body_check found;
    for (auto& part : reply.content.parts) {
        bool go_on = true;
        if (part.what == kind::text || part.what == kind::reasoning) {
            go_on = check_stored(part.text, state, found);
        } else if (part.what == kind::tool_call) {
            boost::json::value arguments = std::move(part.call.arguments);
            guardrails::for_each_text(arguments, [&](boost::json::string& text) {
                if (go_on) go_on = check_stored(text, state, found);
            });
            part.call.arguments = std::move(arguments.as_object());
        }
        if (!go_on) break;
    }
    if (found.result == guardrails::verdict::blocked)
        message = blocked_text(*found.blocked_by, "answer", {});
    return found;
}

}  // namespace gateway::passthrough
