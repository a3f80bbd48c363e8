#pragma once

// The /v1 face's side of the attempt loop, private to passthrough/: routed.cpp runs the loop for
// a request and decides how each target hears it (a translated attempt too), forwarded.cpp makes
// a forwarded attempt, stage by stage.

#include "gateway/error.hpp"
#include "gateway/observability/trace.hpp"
#include "gateway/passthrough/handler.hpp"
#include "gateway/passthrough/translator.hpp"
#include "gateway/upstream/attempt_loop.hpp"
#include "gateway/upstream/exchange.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::passthrough {

// The last failure, as the client gets it when no attempt held: the upstream's own error answer
// when there was one, else the gateway's error for the failed connection.
struct last_failure {
    unsigned status = 0;  // 0: no upstream answer
    std::string content_type;
    std::string body;
    upstream::failure transport;

    // The two kinds of failure, each clearing what the other kept.
    void answer(unsigned s, std::string_view type, std::string text) {
        status = s;
        content_type = type;
        body = std::move(text);
        transport = {};
    }
    void failed(upstream::failure why) {
        status = 0;
        content_type.clear();
        body.clear();
        transport = std::move(why);
    }
};

// The /v1 face's side of the attempt loop (upstream::run_attempts) for one request: an attempt
// is the client's request forwarded to a target of its dialect (only the model name changed) or
// translated to another; a JSON answer is committed once read whole, a stream at its first
// content event, and the last attempt at its head. What no attempt committed is kept for the
// client's answer (`last`).
class handler::routed_attempts final : public upstream::attempt_face {
public:
    routed_attempts(handler& h, http::request_context& ctx, const destination& where,
                    upstream::attempt_plan& plan, exchange_state& state, call_reading& reading)
        : h_(h), ctx_(ctx), where_(where), plan_(plan), state_(state), reading_(reading) {
        hooks_.in_use = [this](upstream::connection* c) { state_.upstream = c; };
        hooks_.abandoned = [this] { return stopped(); };
        hooks_.resend = [this] { return plan_.spend_resend(); };
    }
    routed_attempts(const routed_attempts&) = delete;
    routed_attempts& operator=(const routed_attempts&) = delete;

    bool stopped() const override { return state_.client_gone || state_.stopping; }

    net::awaitable<bool> again(const config::route_target& t, config::duration wait) override;

    net::awaitable<void> fall_back(const config::route_target&) override { co_return; }

    net::awaitable<upstream::attempt_outcome> attempt(
        const config::route_target& t, const upstream::attempt_terms& terms) override;

    // What the client gets when no attempt committed: the last failure.
    last_failure last;
    const config::upstream_config* answered = nullptr;  // the committed attempt's upstream
    std::unique_ptr<providers::reply> answer;           // its answer, read back when kept
    std::string original;  // the client's body, kept while a target hears another model name

private:
    using outcome = upstream::attempt_outcome;
    // A forwarded attempt's answer as its stages hand it on (forwarded.cpp).
    struct forwarded_answer;

    static upstream::failure failure_of(errc code, std::string detail) {
        return {make_error_code(code), std::move(detail)};
    }
    // What an upstream's failing status says on the Health page; nothing for a success.
    static std::string answered_with(unsigned status);
    // error.type for a failed connection or a broken answer: the gateway's error code name.
    static std::string failure_type(const upstream::failure& f);

    // The target cannot take this request (its dialect, its key): `why`, for the client when
    // nothing else answers.
    outcome skipped(upstream::failure why) {
        if (!last.status && !last.transport) last.failed(std::move(why));
        return {outcome::end::skipped};
    }
    // The attempt at `up` failed before any answer (`why`): on its span, in the log, kept as
    // the last failure; the loop may try another target.
    outcome failed_before_answer(const config::upstream_config& up, observability::span& span,
                                 upstream::failure why);
    // The attempt at `up` committed: its answer read back (when kept) and described on its span
    // (`sent`: when the request went), its usage and cost settled once.
    void committed(const config::upstream_config& up, observability::span& span,
                   std::chrono::steady_clock::time_point sent);
    // The committed answer's usage and cost, settled once, and the cost on its span.
    void settle(observability::span& span);
    // The attempt's upstream and count on the client's head and the access log.
    void count_attempts(const config::upstream_config& up);
    // The count again after the request was sent (a resend counts); only a configured route
    // shows it.
    void recount_attempts() {
        if (where_.route) ctx_.attempts = state_.fields.attempts = plan_.attempts();
    }

    // An outcome as an awaitable, for an attempt that ends before it begins (skipped).
    static net::awaitable<outcome> ready(outcome o);

    net::awaitable<outcome> translated(const config::upstream_config& up, upstream::pool& pool,
                                       std::string_view model, observability::span attempt,
                                       const upstream::attempt_terms& terms);
    // How a forwarded target hears the request where it is not as the client sent it: its path
    // below the base (else the client's), the model name after its model_map (else the one the
    // attempt names, `model_named`). The name the target hears goes in its path on Azure.
    struct heard_as {
        std::string target;
        std::string model;
    };
    net::awaitable<outcome> forwarded(const config::upstream_config& up, upstream::pool& pool,
                                      heard_as own, std::string_view model_named,
                                      observability::span attempt,
                                      const upstream::attempt_terms& terms);
    // The gateway's own credentials for `up` (a signature, an access token) into `head`; the
    // outcome when none can be had.
    net::awaitable<std::optional<outcome>> authorized(const config::upstream_config& up,
                                                      upstream::pool& pool, std::string_view target,
                                                      observability::span& span, std::string& head);
    // forwarded()'s stages after the request went (forwarded.cpp): what the head says, and
    // whether the answer is read whole before it is judged; the judgement (held back for the
    // next target, or nullopt: on to the commit).
    bool reads_whole(forwarded_answer& a, const upstream::attempt_terms& terms);
    std::optional<outcome> judge_head(forwarded_answer& a, const upstream::attempt_terms& terms);
    // The rest of an answer read whole that did not come with its head (into a.held; a failure
    // into a.broken).
    net::awaitable<void> read_rest(forwarded_answer& a);
    // Whether hold_stream has a stream to hold; it is awaited only then.
    static bool holds_stream(const forwarded_answer& a, const upstream::attempt_terms& terms);
    net::awaitable<std::optional<outcome>> hold_stream(forwarded_answer& a);
    // Awaited only for an answer the guardrails read (forwarded_answer::guarded).
    net::awaitable<std::optional<outcome>> guard_answer(forwarded_answer& a);

    handler& h_;
    http::request_context& ctx_;
    const destination& where_;
    upstream::attempt_plan& plan_;
    exchange_state& state_;
    call_reading& reading_;
    // A forwarded credential goes only to targets of the provider it was presented for: worked
    // out at the first translated attempt (a forwarded one needs neither).
    std::optional<config::provider_kind> key_provider_;
    // A forwarded attempt's exchange hooks (its first_byte_timeout set per attempt): made once
    // per request, and kept out of the attempt's frame.
    upstream::exchange_hooks hooks_;
};

}  // namespace gateway::passthrough
