// The /v1 face's attempts (docs/routing.md): every forwarded request goes once through the one
// attempt loop (upstream::run_attempts), which this file gives what an attempt is. A model with a
// route goes to its targets in turn until one answers; a model without one has the default
// route, the upstream its globs pick, tried once. Nothing reaches the client before the gateway
// commits to an answer: a JSON answer once its body is read whole, a stream at its first content
// event (its head and what came before are held back); after that no other upstream is called.
// The last attempt a route allows (a default route's only one) commits at the head, but for a
// 2xx JSON answer to a model call, read whole first so that its head carries its cost. Here: the
// loop for one request and how each target hears it; a forwarded attempt in forwarded.cpp.
#include "gateway/passthrough/routed_attempts.hpp"

#include "gateway/config/hosting.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/relay.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/bedrock_invoke.hpp"
#include "gateway/providers/genai_trace.hpp"
#include "gateway/providers/usage_observer.hpp"
#include "gateway/providers/vertex.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/sigv4.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>

namespace gateway::passthrough {

namespace {

namespace bhttp = boost::beast::http;

// Waits `wait`, or less when the client hangs up meanwhile (the watch cancels the timer). A
// coroutine of its own: the timer stays out of the attempt loop's frame.
net::awaitable<void> pause(http::request_context& ctx, exchange_state& state,
                           config::duration wait) {
    net::steady_timer timer(ctx.stream.get_executor(), wait);
    state.backoff = &timer;
    [[maybe_unused]] auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    state.backoff = nullptr;
}

// The CLIENT span of one attempt, `{operation} {model}`, under the request's SERVER span, with
// the GenAI attributes known before the call and the route's: the target and attempt number.
observability::span attempt_span(const http::request_context& ctx, const client_call& call,
                                 const config::upstream_config& up, std::string_view model,
                                 const config::route_config* route, int attempt) {
    if (!ctx.trace.recording()) return {};
    auto op = call.operation;
    auto name = op.empty()      ? std::string(ctx.req.method_string())
                : model.empty() ? std::string(op)
                                : std::string(op) + " " + std::string(model);
    auto s = ctx.trace.child(std::move(name), observability::span_kind::client);
    if (!op.empty())
        providers::describe_call(s, op, up.provider, model, up.endpoint.host, up.endpoint.port);
    else
        s.set("server.address", up.endpoint.host);
    if (route) s.set("contextgate.route", route->model);
    s.set("contextgate.target", up.name);
    s.set("contextgate.attempt", attempt);
    if (!op.empty() && observability::capture_content()) {
        // What the client sent, in its API's shape: messages (Chat, Messages), input
        // (Responses), contents (Gemini).
        boost::system::error_code ec;
        auto body = boost::json::parse(ctx.req.body(), ec);
        if (!ec && body.is_object())
            for (auto member : {"messages", "input", "contents", "prompt"})
                if (const auto* v = body.as_object().if_contains(member)) {
                    providers::describe_input(s, *v);
                    break;
                }
    }
    return s;
}

// What the committed attempt's answer said, as its span ends with the last byte: the status,
// the time to the first chunk of a stream, the usage the upstream reported, the reply read back
// (response model, finish reasons) and how it ended when it did not end well.
void describe_answer(observability::span& s, const http::request_context& ctx,
                     const exchange_state& state, const providers::reply* answer,
                     std::chrono::steady_clock::time_point sent) {
    if (!s.recording()) return;
    s.set("http.response.status_code", static_cast<std::int64_t>(ctx.status));
    if (state.streamed && state.first_body != std::chrono::steady_clock::time_point{})
        s.set("gen_ai.response.time_to_first_chunk",
              std::chrono::duration<double>(state.first_body - sent).count());
    if (state.usage_source == "body" || state.usage_source == "stream")
        providers::describe_usage(s, state.used);
    if (answer) providers::describe_reply(s, *answer);
    if (state.client_gone)
        s.fail("client_gone", "the client went away");
    else if (ctx.status >= 400)
        s.fail(std::to_string(ctx.status), "upstream answered " + std::to_string(ctx.status));
    else if (state.answered && !state.complete)
        s.fail("stream_cut", "the answer broke off before its end");
}

// No attempt committed: the client gets the last failure as one answer, with the route's
// fields (the target tried last, the attempts made), in its own API's error envelope when the
// gateway makes it; a request the drain stopped gets the 503 that says so.
net::awaitable<void> answer_unanswered(http::request_context& ctx, const exchange_state& state,
                                       const last_failure& last, const providers::ingress* envelope,
                                       std::string_view model) {
    if (ctx.response_started) co_return;
    auto fields = state.fields.list();
    if (last.status && !state.stopping) {
        ctx.status = last.status;
        ctx.started();
        // Named first: GCC 12 destroys a conditional's temporary twice in a co_await.
        std::string type = last.content_type.empty() ? "application/json" : last.content_type;
        auto ec = co_await http::write_response(ctx, last.status, type, last.body, fields);
        if (ec) ctx.keep_alive = false;
        co_return;
    }
    upstream::failure failure = state.stopping ? stopped_by_shutdown()
                                : last.transport
                                    ? last.transport
                                    : upstream::failure{make_error_code(errc::upstream_unreachable),
                                                        "no target of the route for `" +
                                                            std::string(model) + "` can be used"};
    if (state.stopping) ctx.keep_alive = false;
    if (envelope)
        co_await write_error_as(ctx, *envelope, failure.ec, failure.detail, std::move(fields));
    else
        co_await http::write_error(ctx, failure.ec, failure.detail, fields);
}

}  // namespace

net::awaitable<upstream::attempt_outcome> handler::routed_attempts::ready(outcome o) {
    co_return o;
}

std::string handler::routed_attempts::answered_with(unsigned status) {
    return status / 100 == 2 ? std::string() : "answered " + std::to_string(status);
}

std::string handler::routed_attempts::failure_type(const upstream::failure& f) {
    if (f.ec.category() == gateway_category())
        return std::string(error_code_name(static_cast<errc>(f.ec.value())));
    return "transport";
}

net::awaitable<bool> handler::routed_attempts::again(const config::route_target&,
                                                     config::duration wait) {
    // The target that just failed, again (nothing else is left): after its backoff or
    // retry-after; a client that hangs up meanwhile ends the wait and the request.
    if (wait.count() > 0) co_await pause(ctx_, state_, wait);
    co_return !stopped();
}

upstream::attempt_outcome handler::routed_attempts::failed_before_answer(
    const config::upstream_config& up, observability::span& span, upstream::failure why) {
    span.fail(failure_type(why), why.detail);
    observability::log_warn("request " + ctx_.request_id + ": upstream `" + up.name +
                            "`: " + why.detail);
    auto detail = why.detail;
    last.failed(std::move(why));
    return {outcome::end::held, upstream::verdict::failed, {}, {}, std::move(detail)};
}

void handler::routed_attempts::committed(const config::upstream_config& up,
                                         observability::span& span,
                                         std::chrono::steady_clock::time_point sent) {
    answered = &up;
    if (auto kept = read_kept_answer(ctx_, state_, where_.call.dialect))
        answer = std::make_unique<providers::reply>(std::move(*kept));
    describe_answer(span, ctx_, state_, answer.get(), sent);
    settle(span);
}

void handler::routed_attempts::settle(observability::span& span) {
    finish_usage(ctx_, state_);
    settle_cost(ctx_, state_);
    if (ctx_.cost && ctx_.cost->priced) span.set("contextgate.cost_usd", ctx_.cost->usd);
}

void handler::routed_attempts::count_attempts(const config::upstream_config& up) {
    ctx_.upstream = up.name;
    if (!where_.route) return;
    ctx_.attempts = plan_.attempts();
    state_.fields.upstream = up.name;
    state_.fields.attempts = plan_.attempts();
}

net::awaitable<upstream::attempt_outcome> handler::routed_attempts::attempt(
    const config::route_target& t, const upstream::attempt_terms& terms) {
    // Not a coroutine: how the target hears the request is worked out here, and the attempt is
    // the forwarded or translated one's coroutine (one frame, not two; what it needs of this
    // function's names is moved into it).
    auto& pool = h_.pools_[t.index];
    const auto& up = pool.upstream();
    const auto& call = where_.call;
    auto spoken = call.dialect;
    bool renamed = !t.model.empty() && t.model != where_.model;
    std::string_view model = renamed ? std::string_view(t.model) : where_.model;
    // The name it hears (after its model_map), which also says the dialect it speaks there.
    std::string mapped;
    std::string_view heard = model;
    if (!up.model_map.empty()) heard = mapped = upstream::upstream_model(up, model);
    // A Messages client's body goes to Claude on Bedrock as it came, through InvokeModel: what
    // Converse would lose (thinking signatures, cache_control) stays in it.
    bool invoked = up.provider == config::provider_kind::bedrock &&
                   call.api == client_api::messages && providers::bedrock::invokes(heard);
    state_.messages_by_invoke = invoked;
    // Vertex AI's own paths go to a Vertex upstream only (the body names no model to translate).
    bool vertex = up.host == config::hosting::vertex;
    if (call.vertex && !vertex)
        return ready(skipped(failure_of(errc::bad_request,
                                        "upstream `" + up.name +
                                            "` is no Vertex AI upstream: the "
                                            "gateway forwards Vertex AI's own paths only to one")));
    bool translated_call = (config::dialect_for(up, heard) != spoken && !invoked) ||
                           (call.api == client_api::responses && up.translate_responses);
    if (translated_call && !reading_.api())
        return ready(skipped(failure_of(
            errc::bad_request, "upstream `" + up.name + "` cannot take `" + std::string(call.path) +
                                   "`: the gateway translates only POST /v1/chat/completions, "
                                   "/v1/responses, /v1/messages and Gemini's generateContent "
                                   "to another provider")));
    state_.forward_key = true;
    if (translated_call) {
        if (!key_provider_)
            key_provider_ = forwarded_provider(plan_.route(), h_.upstreams_, spoken);
        state_.forward_key = up.provider == *key_provider_;
        // Bedrock and Vertex are authorised by the gateway's own credentials: no client key ever
        // goes there.
        bool own_credentials = upstream::authorized_by_gateway(up);
        if (!state_.forward_key && !own_credentials &&
            !upstream_key_replaces_client(up, !ctx_.key_id.empty()) && up.api_key.empty() &&
            !http::presented_key_of(ctx_.req.base()).value.empty())
            return ready(skipped(failure_of(
                errc::bad_request, "upstream `" + up.name +
                                       "` has no api_key of its own, and the client's key was "
                                       "presented for " +
                                       std::string(providers::provider_name(*key_provider_)) +
                                       ": a forwarded key never goes to another provider")));
    }
    auto span = attempt_span(ctx_, call, up, model, where_.route, plan_.attempts());
    state_.trace = span.context();
    // Priced as this target serves it: its upstream, the model it hears (after its model_map;
    // counting tokens is free, and a request that names no model has no price).
    state_.price.reset();
    if (!call.counts_tokens()) state_.price = h_.price_of(t.index, heard);
    count_attempts(up);
    // The client's body as it came (an earlier target may have heard it changed).
    if (!original.empty()) ctx_.req.body() = original;
    // The request read once is encoded for each target, with the target's model.
    if (translated_call) return translated(up, pool, model, std::move(span), terms);
    // A forwarded target hears the client's body: only the model name may change (when the
    // target names another) and the usage request be added (stream_usage: inject).
    bool inject = up.inject_stream_usage && call.api == client_api::chat_completions;
    // A Messages client's body goes to Claude on Vertex as it came but for what rawPredict
    // names otherwise (the model, the version): thinking signatures and cache_control stay.
    // Messages itself only: rawPredict has nothing for count_tokens or Anthropic's other paths.
    bool raw_predict = vertex && call.api == client_api::messages && !call.vertex;
    if (original.empty() && (renamed || inject || invoked || raw_predict) && !terms.last)
        original = ctx_.req.body();
    // Bedrock names the model only in its path, encoded once (`:` as %3A); so does Vertex.
    bool bedrock = spoken == config::provider_kind::bedrock;
    if (renamed && !bedrock && !invoked && !vertex)
        upstream::replace_model(ctx_.req.body(), t.model);
    if (inject) providers::inject_include_usage(ctx_.req.body());
    // Gemini names the model in the path (…/models/{model}:{method}): renamed there.
    std::string renamed_target;
    if (invoked) {
        bool stream = false;
        std::string why;
        auto body = providers::bedrock::invoke_body(ctx_.req.body(), stream, why);
        if (body.empty()) return ready(skipped(failure_of(errc::bad_request, std::move(why))));
        ctx_.req.body() = std::move(body);
        renamed_target = providers::bedrock::invoke_target(heard, stream);
    } else if (bedrock) {
        renamed_target =
            "/model/" + upstream::aws::uri_encode(heard) + std::string(call.bedrock_operation);
    } else if (vertex) {
        // Below the target's project and location: Gemini's and Vertex's own paths name the
        // method, a Messages body its stream.
        if (!providers::vertex::valid_model(heard))
            return ready(skipped(failure_of(errc::bad_request,
                                            "`" + std::string(heard.substr(0, 64)) +
                                                "` is no model name Vertex AI's paths can hold")));
        std::string method;
        if (raw_predict) {
            method = providers::vertex::raw_predict_method(ctx_.req.body());
            providers::vertex::to_raw_predict(ctx_.req.body());
        } else {
            // Vertex's own path was read whole (its project or location may be "models"),
            // Gemini's names the method after the model (a route's name may hold a `:`); a path
            // that names none (a model's description, files) has nothing to forward.
            std::string_view target = where_.target;
            auto query = target.substr(std::min(target.find('?'), target.size()));
            std::string_view named = call.vertex_method;
            if (!call.vertex) {
                auto at = target.find("/models/");
                auto rest =
                    at == std::string_view::npos
                        ? std::string_view()
                        : target.substr(std::min(target.size(), at + 8 + call.path_model.size()));
                if (rest.starts_with(':')) named = rest.substr(1, rest.size() - 1 - query.size());
            }
            if (named.empty())
                return ready(skipped(
                    failure_of(errc::bad_request,
                               "upstream `" + up.name + "` (Vertex AI) cannot take `" +
                                   std::string(call.path) +
                                   "`: the gateway forwards only a model's methods there")));
            method = std::string(named) + std::string(query);
        }
        // Vertex's own paths ask the version the client asked (v1beta1 for Google's SDKs).
        renamed_target = providers::vertex::target(up, heard, method, call.vertex_version);
    } else if (renamed && !call.path_model.empty()) {
        std::string_view target = where_.target;
        auto at = target.find("/models/");
        renamed_target = std::string(target.substr(0, at + 8)) + t.model +
                         std::string(target.substr(at + 8 + call.path_model.size()));
    }
    heard_as own{std::move(renamed_target), std::move(mapped)};
    return forwarded(up, pool, std::move(own), model, std::move(span), terms);
}

net::awaitable<upstream::attempt_outcome> handler::routed_attempts::translated(
    const config::upstream_config& up, upstream::pool& pool, std::string_view model,
    observability::span span, const upstream::attempt_terms& terms) {
    // A failure before anything was written comes back (unless this is the last attempt), and
    // the next target is tried; once content came it is the client's.
    auto asked = std::chrono::steady_clock::now();
    auto held = co_await translate(
        ctx_, pool, state_, reading_, model, !terms.last,
        plan_.first_byte_timeout(up.first_byte_timeout), [this] { return plan_.spend_resend(); },
        terms.may_move);
    // Its connection is pooled or closed by now: nothing may close it on a disconnect or a stop.
    state_.upstream = nullptr;
    recount_attempts();
    if (state_.client_gone) {
        span.fail("client_gone", "the client went away");
        co_return outcome{outcome::end::stopped};
    }
    if (held) {
        auto said = held->upstream_status ? "answered " + std::to_string(held->upstream_status)
                                          : "failed: " + held->transport.detail;
        span.fail(held->upstream_status ? std::to_string(held->upstream_status)
                                        : failure_type(held->transport),
                  held->upstream_status ? said : held->transport.detail);
        observability::log_warn("request " + ctx_.request_id + ": upstream `" + up.name + "` " +
                                said + "; trying the route's next target");
        if (!held->upstream_status) {
            last.failed(held->transport);
            co_return outcome{
                outcome::end::held, upstream::verdict::failed, {}, {}, held->transport.detail};
        }
        last.answer(held->status, "application/json", std::move(held->body));
        co_return outcome{outcome::end::held, held->judged, held->retry_after, {}, said};
    }
    // Written: judged by the status the client got.
    auto judged = upstream::judge_status(ctx_.status, {}, state_.presented);
    committed(up, span, asked);
    co_return outcome{outcome::end::committed, judged, std::nullopt,
                      std::chrono::steady_clock::now() - asked, answered_with(ctx_.status)};
}

net::awaitable<void> handler::forward_routed(http::request_context& ctx, const destination& where,
                                             const config::route_config& route) {
    // A route of the configuration says so in the answer and the access log, and keeps its
    // targets' health; the default route (the upstream the model's globs pick, tried once) has
    // nothing to choose and leaves the answer as it was, and only tells its upstream's health.
    // One reading of the clock for the plan, its deadline and the request's duration (on this
    // VM a reading costs 25 to 50 ns, and the request path took twenty).
    auto planned = std::chrono::steady_clock::now();
    bool configured = where.route != nullptr;
    auto plan = configured ? upstream::attempt_plan(route, routing_.health(), planned)
                           : upstream::attempt_plan(route, routing_.health(),
                                                    upstream::attempt_plan::reporting{}, planned);
    ctx.model = where.model;
    const auto& call = where.call;
    auto spoken = call.dialect;
    if (!call.route.empty()) ctx.route = call.route;
    // Gateway errors in the client's envelope (Anthropic's for Messages, Google's for Gemini).
    const providers::ingress* envelope = nullptr;
    if (spoken == config::provider_kind::anthropic) envelope = &providers::messages();
    if (spoken == config::provider_kind::gemini) envelope = &providers::generate_content();
    const auto& first = pools_[*where.upstream].upstream();
    // Claude on Vertex counts no tokens at rawPredict's paths: estimated too.
    bool estimated =
        config::dialect_for(first, where.model) != spoken ||
        (first.host == config::hosting::vertex && call.api == client_api::messages_count_tokens);
    if (call.counts_tokens() && envelope && estimated) {
        // Not a model call on a translated route: the gateway's estimate answers it.
        co_await count_tokens(ctx, *envelope);
        co_return;
    }
    // The state and the attempts are allocated (each under 1 KiB, from malloc's per-thread
    // cache), not in this frame: a frame over 1 KiB is never recycled by Asio and costs
    // malloc's slow path on every request.
    auto owned_state = std::make_unique<exchange_state>();
    auto& state = *owned_state;
    // Registered for stop_waiting() while the loop runs (this worker's thread only).
    state.ctx = &ctx;
    in_flight_.push_front(state);
    if (auto rest = plan.left(planned)) state.hold_until = planned + *rest;
    // The body in the conversation model, read on first need (the cache's, a translation's).
    call_reading reading(ctx.req, ingress_of(call));
    if (!where.answer_guards.empty()) {
        state.guard_rules = guards_.rules;
        state.answer_guards = &where.answer_guards;
        state.guard_hooks = guards_.hooks;
        state.guard_models = guards_.models;
        state.guard_model = where.model;
        state.guard_key = where.key;
    }
    auto cached = plan_cache(ctx, where, route, reading);
    if (!cached.result.empty()) {
        if (co_await answer_from_cache(ctx, cached, state)) co_return;
        state.keep_answer = cached.write && !cached.key.empty();
        // The relayed bytes (an event stream) are several times the answer they hold.
        state.kept_limit = 16 * cache_.config->max_entry_bytes;
    }
    if (ctx.trace.recording() && !call.operation.empty() && !state.keep_answer) {
        // The answer is read back for its span (response model, finish reasons).
        state.keep_answer = true;
        state.kept_limit = 4 << 20;
    }
    auto owned_attempts =
        std::make_unique<routed_attempts>(*this, ctx, where, plan, state, reading);
    auto& attempts = *owned_attempts;
    // The attempts' duration, from here: after the cache's lookup when there was one.
    auto started = cached.result.empty() ? planned : std::chrono::steady_clock::now();
    {
        client_watch watch(ctx, state, watches_);
        co_await upstream::run_attempts(plan, attempts);
        if (watch.reading()) co_await watch.stop();
        state.trace = nullptr;
    }
    const auto* answered = attempts.answered;
    if (!attempts.original.empty()) ctx.req.body() = std::move(attempts.original);
    if (state.client_gone) {
        ctx.keep_alive = false;
        if (ctx.status == 0) ctx.status = 499;  // as nginx logs it: client closed the request
        observability::log_info("request " + ctx.request_id +
                                ": client went away; upstream request cancelled");
    } else if (!answered) {
        co_await answer_unanswered(ctx, state, attempts.last, envelope, where.model);
    }
    // Settled by the attempt that committed (routed_attempts::settle): usage, cost.
    if (answered) account(ctx, *answered, state, started);
    if (answered && !cached.key.empty())
        co_await keep_in_cache(cached, attempts.answer.get(), ctx.cost);
}

}  // namespace gateway::passthrough