// The /v1 face's guardrails stage (docs/operations.md "Guardrails"): after the admission and
// before the cache and the attempt loop, the texts of a request a guardrail selects are checked
// before anything goes upstream. `mask` rewrites the body (the one time a passthrough body is
// not forwarded as it came), `block` answers 400 guardrail_blocked in the client's own error
// envelope (nothing upstream, nothing charged), `log` only counts. A request no guardrail
// selects is not read: no parse, no copy.
#include "gateway/passthrough/handler.hpp"

#include "gateway/guardrails/model_check.hpp"
#include "gateway/guardrails/request_scan.hpp"
#include "gateway/guardrails/webhook.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/translator.hpp"

namespace gateway::passthrough {

namespace {

using stage = config::guardrail_stage;

// The request's texts after the selected guardrails' webhooks and model checks: the first to
// block blocks (its reason is the webhook's or the model's, or its `fail: closed`), a webhook's
// mask masks its spans as `[REDACTED:<guardrail>]`.
net::awaitable<guardrails::body_check> ask_external(const guardrails::selection& chosen,
                                                    const guard_setup& guards,
                                                    guardrails::body_texts& texts,
                                                    std::string_view model, std::string_view key,
                                                    std::string& reason) {
    guardrails::body_check found;
    for (const auto* g : chosen.items()) {
        guardrails::webhook_answer answer;
        std::string_view rule = "webhook";
        if (g->config.webhook && guards.hooks) {
            answer =
                co_await guards.hooks->ask(g->config, stage::request, texts.joined(), model, key);
        } else if (g->config.model_check) {
            answer = co_await guardrails::ask_model(guards.models, g->config, texts.joined());
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
            guardrails::record(counted, stage::request);
            found.result = guardrails::verdict::blocked;
            found.blocked_by = hit;
            reason = answer.reason;
            co_return found;
        }
        if (answer.what == guardrails::webhook_answer::action::mask && !answer.spans.empty()) {
            hit.action = config::guardrail_action::mask;
            counted.hits.push_back(hit);
            guardrails::record(counted, stage::request);
            texts.replace_joined(answer.spans, "[REDACTED:" + g->config.name + "]");
            found.result = guardrails::verdict::masked;
        }
    }
    co_return found;
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
    auto chosen = guards_.rules->select(stage::request, subject);
    guardrails::body_texts texts;
    if (chosen.empty() || !texts.read(ctx.req.body(), guardrails::body_kind::request)) {
        co_await forward(ctx, where, upgrade);
        co_return;
    }
    auto found = guardrails::check_texts(texts, *guards_.rules, chosen, stage::request);
    std::string reason;
    if (found.result != guardrails::verdict::blocked && chosen.has_external_checks()) {
        auto asked =
            co_await ask_external(chosen, guards_, texts, where.model, subject.key, reason);
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
    auto message = guardrails::blocked_message(*found.blocked_by, "request");
    if (!reason.empty()) message += ": " + reason;
    observability::log_info("request " + ctx.request_id + ": " + message);
    ctx.model = where.model;
    co_await write_blocked(ctx, where.call.dialect, message);
}

}  // namespace gateway::passthrough
