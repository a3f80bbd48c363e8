// The /v1 attempt loop (docs/routing.md): every forwarded request goes through it once. A model
// with a route goes to its targets in turn until one answers; a model without one has the
// default route, the upstream its globs pick, tried once. Nothing reaches the client before the
// gateway commits to an answer: a JSON answer once its body is read whole, a stream at its first
// content event (its head and what came before are held back); after that no other upstream is
// called. The last attempt a route allows (a default route's only one) commits at the head.
#include "gateway/passthrough/handler.hpp"

#include "gateway/error.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/http/response.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/relay.hpp"
#include "gateway/passthrough/translator.hpp"
#include "gateway/providers/genai_trace.hpp"
#include "gateway/providers/stream_probe.hpp"
#include "gateway/providers/usage_observer.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>

namespace gateway::passthrough {

namespace {

namespace bhttp = boost::beast::http;

// A whole JSON answer (or an error answer) the loop reads before it commits to it.
constexpr std::size_t answer_limit = 64 * 1024 * 1024;
// What a stream may send before its first content event; past it the stream is committed to.
constexpr std::size_t preamble_limit = 1024 * 1024;

// Reads a stream into `held` until its first content event; what the first event that is not a
// preamble said (content, error, done), or `done` when the body ended (or broke) before one.
// No read waits past `until` (the route's deadline).
net::awaitable<providers::stream_event> hold_until_content(
    upstream::connection& conn, upstream::response_parser& parser, config::duration idle,
    std::optional<std::chrono::steady_clock::time_point> until, std::string& held) {
    sse::event_parser events(preamble_limit);
    std::vector<sse::event> got;
    io::relay_buffer buffer;
    while (!parser.is_done()) {
        auto [n, failed] = co_await upstream::read_piece(conn, parser, buffer.buffer(),
                                                         upstream::within(idle, until));
        held.append(buffer.data(), n);
        got.clear();
        events.feed({buffer.data(), n}, got);
        for (const auto& e : got)
            if (auto kind = providers::probe_event(e); kind != providers::stream_event::preamble)
                co_return kind;
        if (failed) co_return providers::stream_event::done;
        if (held.size() > preamble_limit || events.failed())
            co_return providers::stream_event::content;
    }
    co_return providers::stream_event::done;
}

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

upstream::failure failure_of(errc code, std::string detail) {
    return {make_error_code(code), std::move(detail)};
}

// Waits `wait`, or less when the client hangs up meanwhile (the watch cancels the timer). A
// coroutine of its own: the timer stays out of the attempt loop's frame.
net::awaitable<void> pause(http::request_context& ctx, exchange_state& state,
                           config::duration wait) {
    net::steady_timer timer(ctx.stream.get_executor(), wait);
    state.backoff = &timer;
    [[maybe_unused]] auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    state.backoff = nullptr;
}

// The GenAI operation a model API's path names (gen_ai.operation.name; "" for other paths), and
// the route the request's SERVER span is named by (a static string; "" keeps the router's).
struct api_operation {
    std::string_view name;
    std::string_view route;
};

api_operation operation_of(std::string_view path) {
    static constexpr std::pair<std::string_view, api_operation> exact[] = {
        {"/v1/chat/completions", {"chat", "/v1/chat/completions"}},
        {"/v1/responses", {"chat", "/v1/responses"}},
        {"/v1/messages", {"chat", "/v1/messages"}},
        {"/v1/completions", {"text_completion", "/v1/completions"}},
        {"/v1/embeddings", {"embeddings", "/v1/embeddings"}},
        {"/v1/messages/count_tokens", {"", "/v1/messages/count_tokens"}},
    };
    for (const auto& [p, op] : exact)
        if (path == p) return op;
    // Gemini's: /v1beta/models/{model}:{method}, and its stable API's /v1/models/… (which
    // @google/genai calls).
    struct gemini_method {
        std::string_view suffix;
        api_operation beta;
        api_operation stable;
    };
    static constexpr gemini_method methods[] = {
        {":generateContent",
         {"generate_content", "/v1beta/models/{model}:generateContent"},
         {"generate_content", "/v1/models/{model}:generateContent"}},
        {":streamGenerateContent",
         {"generate_content", "/v1beta/models/{model}:streamGenerateContent"},
         {"generate_content", "/v1/models/{model}:streamGenerateContent"}},
        {":embedContent",
         {"embeddings", "/v1beta/models/{model}:embedContent"},
         {"embeddings", "/v1/models/{model}:embedContent"}},
        {":countTokens",
         {"", "/v1beta/models/{model}:countTokens"},
         {"", "/v1/models/{model}:countTokens"}},
    };
    bool beta = path.starts_with("/v1beta/models/");
    if (beta || path.starts_with("/v1/models/"))
        for (const auto& m : methods)
            if (path.ends_with(m.suffix)) return beta ? m.beta : m.stable;
    return {};
}

// error.type for a failed connection or a broken answer: the gateway's error code name.
std::string failure_type(const upstream::failure& f) {
    if (f.ec.category() == gateway_category())
        return std::string(error_code_name(static_cast<errc>(f.ec.value())));
    return "transport";
}

// The CLIENT span of one attempt, `{operation} {model}`, under the request's SERVER span, with
// the GenAI attributes known before the call and the route's: the target and attempt number.
observability::span attempt_span(const http::request_context& ctx, api_operation op,
                                 const config::upstream_config& up, std::string_view model,
                                 const config::route_config* route, int attempt) {
    if (!ctx.trace.recording()) return {};
    auto name = op.name.empty() ? std::string(ctx.req.method_string())
                : model.empty() ? std::string(op.name)
                                : std::string(op.name) + " " + std::string(model);
    auto s = ctx.trace.child(std::move(name), observability::span_kind::client);
    if (!op.name.empty())
        providers::describe_call(s, op.name, up.provider, model, up.endpoint.host,
                                 up.endpoint.port);
    else
        s.set("server.address", up.endpoint.host);
    if (route) s.set("contextgate.route", route->model);
    s.set("contextgate.target", up.name);
    s.set("contextgate.attempt", attempt);
    if (!op.name.empty() && observability::capture_content()) {
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

}  // namespace

net::awaitable<void> handler::forward_routed(http::request_context& ctx, const destination& where,
                                             const config::route_config& route) {
    // A route of the configuration says so in the answer and the access log, and keeps its
    // targets' health; the default route (the upstream the model's globs pick, tried once) has
    // nothing to choose and leaves the answer as it was.
    bool configured = where.route != nullptr;
    auto plan = configured ? upstream::attempt_plan(route, routing_.health())
                           : upstream::attempt_plan(route);
    ctx.model = where.model;
    std::string_view target = ctx.req.target();
    std::string_view path = target.substr(0, target.find('?'));
    bool post = ctx.req.method() == bhttp::verb::post;
    bool chat = post && path == "/v1/chat/completions";
    bool responses = post && path == "/v1/responses";
    bool head_request = ctx.req.method() == bhttp::verb::head;
    auto spoken = where.dialect;
    // What the spans say of the call; nothing to work out for a request that is not traced.
    auto op = ctx.trace.recording() ? operation_of(path) : api_operation{};
    if (!op.route.empty()) ctx.route = op.route;
    // Gateway errors in the client's envelope (Anthropic's for Messages, Google's for Gemini).
    const providers::ingress* envelope = nullptr;
    if (spoken == config::provider_kind::anthropic) envelope = &providers::messages();
    if (spoken == config::provider_kind::gemini) envelope = &providers::generate_content();
    bool counting =
        post && (path == "/v1/messages/count_tokens" ||
                 (spoken == config::provider_kind::gemini && path.ends_with(":countTokens")));
    if (counting && envelope && pools_[*where.upstream].upstream().provider != spoken) {
        // Not a model call on a translated route: the gateway's estimate answers it.
        co_await count_tokens(ctx, *envelope);
        co_return;
    }
    exchange_state state;
    // Registered for stop_waiting() while the loop runs (this worker's thread only).
    in_flight_.emplace_front(&ctx, &state);
    struct leave_list {
        std::list<std::pair<http::request_context*, exchange_state*>>& list;
        std::list<std::pair<http::request_context*, exchange_state*>>::iterator entry;
        ~leave_list() { list.erase(entry); }
    } registered{in_flight_, in_flight_.begin()};
    if (auto rest = plan.left()) state.hold_until = std::chrono::steady_clock::now() + *rest;
    // A forwarded credential goes only to targets of the provider it was presented for.
    auto key_provider = forwarded_provider(route, upstreams_, spoken);
    bool presents_key = !http::presented_key_of(ctx.req.base()).value.empty();
    auto cached = plan_cache(ctx, where, route, path, post);
    if (!cached.result.empty()) {
        if (co_await answer_from_cache(ctx, cached, state)) co_return;
        state.keep_answer = cached.write && !cached.key.empty();
        // The relayed bytes (an event stream) are several times the answer they hold.
        state.kept_limit = 16 * cache_.config->max_entry_bytes;
    }
    if (ctx.trace.recording() && !op.name.empty() && !state.keep_answer) {
        // The answer is read back for its span (response model, finish reasons).
        state.keep_answer = true;
        state.kept_limit = 4 << 20;
    }
    std::optional<providers::reply> answer;  // the committed answer, read back when kept
    last_failure last;                       // none yet: no target could be tried
    std::string original;  // the client's body, kept while a target hears another model name
    const config::upstream_config* answered = nullptr;
    bool moved = false;
    auto started = std::chrono::steady_clock::now();
    {
        client_watch watch(ctx, state, watches_);
        std::vector<const config::route_target*> unsupported;  // cannot take this path
        for (;;) {
            if (state.stopping) break;
            const auto* t = plan.next();
            if (!t) break;
            if (std::find(unsupported.begin(), unsupported.end(), t) != unsupported.end()) {
                plan.abandoned();
                break;  // what is left cannot take it either
            }
            if (auto wait = plan.backoff(); wait.count() > 0) {
                // The target that just failed, again (nothing else is left): after its backoff
                // or retry-after; a client that hangs up meanwhile ends the wait and the request.
                co_await pause(ctx, state, wait);
                if (state.client_gone || state.stopping) {
                    plan.abandoned();
                    break;
                }
            }
            // The last attempt the plan allows commits at the response head, as a request
            // without a route always did: nothing is left to fall back to, so nothing is held.
            bool last_attempt = plan.attempts() >= static_cast<int>(route.max_attempts);
            auto& pool = pools_[t->index];
            const auto& up = pool.upstream();
            bool translated = up.provider != spoken || (responses && up.translate_responses);
            const auto* in = translated ? model_call_api(spoken, path, post) : nullptr;
            if (translated && !in) {
                plan.abandoned();
                unsupported.push_back(t);
                last.failed(failure_of(errc::bad_request,
                                       "upstream `" + up.name + "` cannot take `" +
                                           std::string(path) +
                                           "`: the gateway translates only POST "
                                           "/v1/chat/completions, /v1/responses, /v1/messages and "
                                           "Gemini's generateContent to another provider"));
                continue;
            }
            state.forward_key = up.provider == key_provider;
            if (translated && !state.forward_key && presents_key &&
                !upstream_key_replaces_client(up, !ctx.key_id.empty()) && up.api_key.empty()) {
                // Skipped; the reason is the client's answer only when no target answered.
                plan.abandoned();
                unsupported.push_back(t);
                if (!last.status && !last.transport)
                    last.failed(failure_of(errc::bad_request,
                                           "upstream `" + up.name +
                                               "` has no api_key of its own, and the client's key "
                                               "was presented for " +
                                               std::string(providers::provider_name(key_provider)) +
                                               ": a forwarded key never goes to another provider"));
                continue;
            }
            // Each target hears the client's body: only the model name may change (when the
            // target names another) and the usage request be added (stream_usage: inject).
            bool renamed = !t->model.empty() && t->model != where.model;
            bool inject = up.inject_stream_usage && chat && !translated;
            if (!original.empty())
                ctx.req.body() = original;
            else if ((renamed || inject) && !last_attempt)
                original = ctx.req.body();
            if (renamed) upstream::replace_model(ctx.req.body(), t->model);
            if (inject) providers::inject_include_usage(ctx.req.body());
            auto attempt = attempt_span(ctx, op, up, renamed ? t->model : where.model, where.route,
                                        plan.attempts());
            state.trace = attempt.context();
            ctx.upstream = up.name;
            if (configured) {
                ctx.attempts = plan.attempts();
                state.fields.upstream = up.name;
                state.fields.attempts = plan.attempts();
            }
            if (translated) {
                // A failure before anything was written comes back (unless this is the last
                // attempt), and the next target is tried; once content came it is the client's.
                auto asked = std::chrono::steady_clock::now();
                auto whose = translated_key(ctx, up, state.forward_key).whose;
                bool may_move = !moved && !route.on_context_window.empty();
                auto held = co_await translate(
                    ctx, pool, state, *in, !last_attempt,
                    plan.first_byte_timeout(up.first_byte_timeout),
                    [&plan] { return plan.spend_resend(); }, may_move);
                if (configured) {
                    ctx.attempts = plan.attempts();
                    state.fields.attempts = plan.attempts();
                }
                if (state.client_gone) {
                    attempt.fail("client_gone", "the client went away");
                    plan.abandoned();
                    break;
                }
                if (held) {
                    attempt.fail(held->upstream_status ? std::to_string(held->upstream_status)
                                                       : failure_type(held->transport),
                                 held->upstream_status
                                     ? "answered " + std::to_string(held->upstream_status)
                                     : held->transport.detail);
                    observability::log_warn(
                        "request " + ctx.request_id + ": upstream `" + up.name + "` " +
                        (held->upstream_status ? "answered " + std::to_string(held->upstream_status)
                                               : "failed: " + held->transport.detail) +
                        "; trying the route's next target");
                    bool context_window =
                        held->upstream_status && held->judged == upstream::verdict::context_window;
                    if (context_window)
                        plan.abandoned();
                    else if (held->upstream_status)
                        plan.judged(held->judged, held->retry_after);
                    else
                        plan.failed();
                    if (held->upstream_status)
                        last.answer(held->status, "application/json", std::move(held->body));
                    else
                        last.failed(held->transport);
                    if (context_window) {
                        // Too long for this model: the route's on_context_window targets take it.
                        moved = true;
                        plan.to_context_window_targets();
                    }
                    continue;
                }
                // Written on the last attempt: judged by the status the client got.
                auto judged = upstream::judge_status(ctx.status, {}, whose);
                if (judged == upstream::verdict::success)
                    plan.succeeded(std::chrono::steady_clock::now() - asked);
                else
                    plan.judged(judged);
                answered = &up;
                answer = read_kept_answer(ctx, state, up);
                describe_answer(attempt, ctx, state, answer ? &*answer : nullptr, asked);
                break;
            }
            auto head = upstream_request_head(ctx, up, where.target, false, !ctx.key_id.empty(),
                                              state.trace);
            std::optional<upstream::response_parser> parser;
            upstream::exchange_hooks hooks{
                [&state](upstream::connection* c) { state.upstream = c; },
                [&state] { return state.client_gone || state.stopping; },
                plan.first_byte_timeout(up.first_byte_timeout),
                [&plan] { return plan.spend_resend(); }};
            auto sent = upstream::clock::now();
            auto exchange = co_await upstream::start_exchange(pool, ctx.stream.get_executor(), head,
                                                              ctx.req.body(), parser, head_request,
                                                              false, hooks);
            if (configured) {
                ctx.attempts = plan.attempts();  // a request sent again counts
                state.fields.attempts = plan.attempts();
            }
            if (state.client_gone) {
                attempt.fail("client_gone", "the client went away");
                plan.abandoned();
                break;
            }
            if (!exchange.conn) {
                attempt.fail(failure_type(exchange.failed), exchange.failed.detail);
                observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                        "`: " + exchange.failed.detail);
                plan.failed();
                last.failed(exchange.failed);
                continue;
            }
            auto first_byte = upstream::clock::now() - sent;
            auto& conn = exchange.conn;
            state.upstream = conn.get();
            auto& res = parser->get();
            unsigned status = res.result_int();
            std::string held;
            upstream::failure broken;
            // Before the last attempt a JSON answer (or an error) is read whole, to judge it.
            if (!last_attempt && !parser->is_done() && !is_event_stream(res))
                broken = co_await upstream::read_body(*conn, *parser, held, answer_limit,
                                                      up.idle_timeout, state.hold_until);
            auto whose = forwarded_credential(ctx, up, !ctx.key_id.empty());
            auto judged = upstream::judge_status(status, held, whose);
            if (broken) judged = upstream::verdict::failed;
            bool context_window = judged == upstream::verdict::context_window && !moved &&
                                  !route.on_context_window.empty() && !last_attempt;
            bool fails = upstream::tries_another(judged);
            if ((fails && !last_attempt) || context_window) {
                observability::log_warn(
                    "request " + ctx.request_id + ": upstream `" + up.name + "` " +
                    (broken ? "failed: " + broken.detail : "answered " + std::to_string(status)) +
                    "; trying the route's next target");
                attempt.fail(broken           ? failure_type(broken)
                             : context_window ? std::string("context_window")
                                              : std::to_string(status),
                             broken ? broken.detail : "answered " + std::to_string(status));
                if (context_window)
                    plan.abandoned();
                else
                    plan.judged(judged,
                                upstream::retry_after(res["retry-after-ms"], res["retry-after"]));
                if (broken)
                    last.failed(broken);
                else
                    last.answer(status, res[bhttp::field::content_type], std::move(held));
                if (!broken && parser->is_done() && res.keep_alive())
                    pool.give_back(std::move(conn));
                if (context_window) {
                    moved = true;
                    plan.to_context_window_targets();
                }
                continue;
            }
            if (!last_attempt && judged == upstream::verdict::success && !parser->is_done()) {
                // A stream: held back until its first content event.
                auto kind = co_await hold_until_content(*conn, *parser, up.idle_timeout,
                                                        state.hold_until, held);
                if (state.client_gone) {
                    attempt.fail("client_gone", "the client went away");
                    plan.abandoned();
                    break;
                }
                if (kind != providers::stream_event::content) {
                    bool late = kind == providers::stream_event::done && state.hold_until &&
                                std::chrono::steady_clock::now() >= *state.hold_until;
                    auto why = kind == providers::stream_event::error
                                   ? "its stream began with an error"
                               : late ? "the route's deadline passed before its first content"
                                      : "its stream ended before any content";
                    attempt.fail(kind == providers::stream_event::error ? "stream_error"
                                 : late                                 ? "deadline"
                                                                        : "stream_empty",
                                 why);
                    observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                            "`: " + why + "; trying the route's next target");
                    plan.failed();
                    last.failed(
                        failure_of(late ? errc::upstream_idle_timeout : errc::upstream_bad_response,
                                   "upstream `" + up.name + "`: " + why));
                    conn->close();
                    continue;
                }
            }
            // Committed: this answer is the client's (on the last attempt, a failure too).
            if (judged == upstream::verdict::success)
                plan.succeeded(first_byte);
            else
                plan.judged(judged,
                            upstream::retry_after(res["retry-after-ms"], res["retry-after"]));
            if (state.first_body == std::chrono::steady_clock::time_point{} && !held.empty())
                state.first_body = std::chrono::steady_clock::now();
            bool reusable = co_await relay_response(ctx, *conn, *parser, up, state, held);
            if (reusable && !state.client_gone) pool.give_back(std::move(conn));
            answered = &up;
            answer = read_kept_answer(ctx, state, up);
            describe_answer(attempt, ctx, state, answer ? &*answer : nullptr, sent);
            break;
        }
        if (watch.reading()) co_await watch.stop();
        state.trace = nullptr;
    }
    if (!original.empty()) ctx.req.body() = std::move(original);
    if (state.client_gone) {
        ctx.keep_alive = false;
        if (ctx.status == 0) ctx.status = 499;  // as nginx logs it: client closed the request
        observability::log_info("request " + ctx.request_id +
                                ": client went away; upstream request cancelled");
    } else if (!answered && state.stopping && !ctx.response_started) {
        auto stopped = stopped_by_shutdown();
        ctx.keep_alive = false;
        if (envelope)
            co_await write_error_as(ctx, *envelope, stopped.ec, stopped.detail);
        else
            co_await http::write_error(ctx, stopped.ec, stopped.detail);
    } else if (!answered) {
        // No attempt held: the client gets the last failure, as one answer.
        if (last.status) {
            ctx.status = last.status;
            ctx.started();
            // Named first: GCC 12 destroys a conditional's temporary twice in a co_await.
            std::string type = last.content_type.empty() ? "application/json" : last.content_type;
            auto ec = co_await http::write_response(ctx, last.status, type, last.body,
                                                    state.fields.list());
            if (ec) ctx.keep_alive = false;
        } else {
            auto failure =
                last.transport
                    ? last.transport
                    : failure_of(errc::upstream_unreachable,
                                 "no target of the route for `" + where.model + "` can be used");
            if (envelope)
                co_await write_error_as(ctx, *envelope, failure.ec, failure.detail);
            else
                co_await http::write_error(ctx, failure.ec, failure.detail);
        }
    }
    finish_usage(ctx, state);
    if (answered) account(ctx, *answered, state, started);
    if (answered && !cached.key.empty()) co_await keep_in_cache(cached, answer);
}

}  // namespace gateway::passthrough
