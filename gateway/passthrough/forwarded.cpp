// One forwarded attempt of the /v1 face (docs/routing.md), in the stages it runs: the request
// sent (signed or authorised per attempt), the answer's head judged (read whole first when
// judging, pricing, rewording or guarding it takes that), a stream held back until its first
// content event, the answer's guardrails, and the relay. Each stage before the relay may end
// the attempt: held back for another target, or committed to the client.
#include "gateway/passthrough/routed_attempts.hpp"

#include "gateway/guardrails/request_scan.hpp"
#include "gateway/guardrails/stream_guard.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/answer_guard.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/relay.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/stream_probe.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/beast/http/field.hpp>

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

}  // namespace

struct handler::routed_attempts::forwarded_answer {
    forwarded_answer(const config::upstream_config& u, upstream::pool& p, observability::span& s)
        : up(u), pool(p), span(s) {}

    const config::upstream_config& up;
    upstream::pool& pool;
    observability::span& span;
    upstream::clock::time_point sent{};      // when the request went
    upstream::clock::duration first_byte{};  // request sent -> the answer's head
    std::optional<upstream::response_parser> parser;
    std::unique_ptr<upstream::connection> conn;
    unsigned status = 0;  // the client's: Bedrock's refusal reworded for a Messages client
    std::optional<config::duration> asked;  // the answer's retry-after
    std::string held;                       // what was read of the body before the commit
    upstream::failure broken;               // reading it failed
    upstream::verdict judged = upstream::verdict::failed;
    bool aws_stream = false;  // Bedrock's binary event stream
    bool reworded = false;    // Bedrock's refusal, read whole for a Messages client
    bool guarded = false;     // the answer's guardrails read it before the client does
    std::unique_ptr<guardrails::stream_guard> guard;  // (not inline: a guarded stream's only)
};

net::awaitable<upstream::attempt_outcome> handler::routed_attempts::forwarded(
    const config::upstream_config& up, upstream::pool& pool, heard_as own,
    std::string_view model_named, observability::span span, const upstream::attempt_terms& terms) {
    std::string_view target = own.target.empty() ? where_.target : std::string_view(own.target);
    std::string_view model = own.model.empty() ? model_named : std::string_view(own.model);
    // The connection is pooled or closed when this attempt ends: from then on nothing may close
    // it on a disconnect or a stop (a backoff may follow).
    struct forget_connection {
        exchange_state& state;
        ~forget_connection() { state.upstream = nullptr; }
    } forget{state_};
    auto head =
        upstream_request_head(ctx_, up, target, model, false, !ctx_.key_id.empty(), state_.trace);
    // Every local of a coroutine is in its frame (GCC keeps no two in one place): the stages'
    // outcomes share one, and what only some attempts need is in the stages' own frames.
    std::optional<outcome> ended;
    if (pool.holds_credentials())
        if ((ended = co_await authorized(up, pool, target, span, head))) co_return *ended;
    // Allocated (tcache-sized) rather than in this frame, which would then be over the 1 KiB
    // Asio recycles and go to malloc's slow path on every request.
    auto answer = std::make_unique<forwarded_answer>(up, pool, span);
    auto& a = *answer;
    a.sent = upstream::clock::now();
    hooks_.first_byte_timeout = plan_.first_byte_timeout(up.first_byte_timeout, a.sent);
    bool head_request = ctx_.req.method() == bhttp::verb::head;
    auto exchange =
        co_await upstream::start_exchange(pool, ctx_.stream.get_executor(), head, ctx_.req.body(),
                                          a.parser, head_request, false, hooks_);
    recount_attempts();  // a request sent again counts
    if (state_.client_gone) {
        span.fail("client_gone", "the client went away");
        co_return outcome{outcome::end::stopped};
    }
    if (!exchange.conn) co_return failed_before_answer(up, span, std::move(exchange.failed));
    a.first_byte = upstream::clock::now() - a.sent;
    a.conn = std::move(exchange.conn);
    state_.upstream = a.conn.get();
    // The stages after the head are coroutines awaited only when they have work (each is a
    // frame, and the plain request needs none but the relay); the rest are plain functions.
    if (reads_whole(a, terms) &&
        !upstream::read_buffered_body(*a.conn, *a.parser, a.held, answer_limit, a.broken))
        co_await read_rest(a);
    if ((ended = judge_head(a, terms))) co_return *ended;
    if (holds_stream(a, terms))
        if ((ended = co_await hold_stream(a))) co_return *ended;
    // Committed: this answer is the client's (on the last attempt, a failure too).
    if (a.guarded)
        if ((ended = co_await guard_answer(a))) co_return *ended;
    bool reusable =
        co_await relay_response(ctx_, *a.conn, *a.parser, a.up, state_, a.held, a.guard.get());
    if (reusable && !state_.client_gone) a.pool.give_back(std::move(a.conn));
    committed(a.up, a.span, a.sent);
    co_return outcome{outcome::end::committed, a.judged, a.asked, a.first_byte,
                      answered_with(a.status)};
}

net::awaitable<std::optional<upstream::attempt_outcome>> handler::routed_attempts::authorized(
    const config::upstream_config& up, upstream::pool& pool, std::string_view target,
    observability::span& span, std::string& head) {
    // Bedrock hears the gateway's signature over this body and target, made per attempt;
    // Vertex and Entra ID Azure the gateway's access token.
    auto signed_fields = co_await upstream::authorize(pool, target, ctx_.req.body());
    if (!signed_fields.error.empty())
        co_return failed_before_answer(
            up, span, failure_of(errc::upstream_credentials, std::move(signed_fields.error)));
    head.insert(head.size() - 2, signed_fields.fields);
    co_return std::nullopt;
}

net::awaitable<void> handler::routed_attempts::read_rest(forwarded_answer& a) {
    a.broken = co_await upstream::read_body(*a.conn, *a.parser, a.held, answer_limit,
                                            a.up.idle_timeout, state_.hold_until);
}

bool handler::routed_attempts::reads_whole(forwarded_answer& a,
                                           const upstream::attempt_terms& terms) {
    auto& res = a.parser->get();
    a.status = res.result_int();
    // What a refusal asks of the next attempt at this target (a success asks nothing: two
    // lookups by name in its head not made).
    if (a.status >= 400) a.asked = upstream::retry_after(res["retry-after-ms"], res["retry-after"]);
    // Before the last attempt a JSON answer (or an error) is read whole, to judge it; a model
    // call's answer on the last too, so that its head can carry its cost (x-contextgate-cost-usd;
    // not other APIs': an embeddings answer may be tens of megabytes).
    bool priced = state_.price && a.status / 100 == 2 && where_.call.model_call();
    // Bedrock's binary event stream is relayed from its head on any attempt: the probe that
    // holds a stream back until its first content reads text/event-stream only.
    a.aws_stream = a.up.provider == config::provider_kind::bedrock && is_aws_event_stream(res);
    // Bedrock's refusal reaches a Messages client in Anthropic's envelope: read whole.
    a.reworded = state_.messages_by_invoke && a.status >= 400;
    // The answer's guardrails read a model call's answer before the client sees it: a JSON one
    // whole, a stream through the hold-back.
    a.guarded = state_.answer_guards && a.status / 100 == 2 && reading_.api();
    return (!terms.last || priced || a.reworded || a.guarded) && !a.parser->is_done() &&
           !is_event_stream(res) && !a.aws_stream;
}

std::optional<upstream::attempt_outcome> handler::routed_attempts::judge_head(
    forwarded_answer& a, const upstream::attempt_terms& terms) {
    auto& res = a.parser->get();
    if (a.reworded && !a.broken) {
        // With the status its type gives (a model's failure is Bedrock's 424), as translated.
        auto said = providers::bedrock::read_error(a.status, res["x-amzn-ErrorType"], a.held);
        a.held = providers::messages().error_body(said);
        a.status = said.status;
        res.result(a.status);
        res.set(bhttp::field::content_type, "application/json");
    }
    // Whose key it heard matters only to a refusal: not worked out for an answer that is none.
    auto whose = a.status >= 400 ? forwarded_credential(ctx_.req, a.up, !ctx_.key_id.empty())
                                 : upstream::credential::gateway;
    a.judged = upstream::judge_status(a.status, a.held, whose);
    if (a.broken) a.judged = upstream::verdict::failed;
    bool context_window = a.judged == upstream::verdict::context_window && terms.may_move;
    if ((!upstream::tries_another(a.judged) || terms.last) && !context_window) return std::nullopt;
    // Held back: the route's next target is tried.
    auto said = a.broken ? "failed: " + a.broken.detail : "answered " + std::to_string(a.status);
    observability::log_warn("request " + ctx_.request_id + ": upstream `" + a.up.name + "` " +
                            said + "; trying the route's next target");
    a.span.fail(a.broken         ? failure_type(a.broken)
                : context_window ? std::string("context_window")
                                 : std::to_string(a.status),
                a.broken ? a.broken.detail : "answered " + std::to_string(a.status));
    if (a.broken)
        last.failed(a.broken);
    else
        last.answer(a.status, res[bhttp::field::content_type], std::move(a.held));
    if (!a.broken && a.parser->is_done() && res.keep_alive()) a.pool.give_back(std::move(a.conn));
    return outcome{outcome::end::held,
                   a.judged,
                   a.asked,
                   {},
                   a.broken ? a.broken.detail : answered_with(a.status)};
}

bool handler::routed_attempts::holds_stream(const forwarded_answer& a,
                                            const upstream::attempt_terms& terms) {
    // Only a stream that may still be given up for another target (not Bedrock's, relayed from
    // its head) is held back until its first content event.
    return !terms.last && a.judged == upstream::verdict::success && !a.parser->is_done() &&
           !a.aws_stream;
}

net::awaitable<std::optional<upstream::attempt_outcome>> handler::routed_attempts::hold_stream(
    forwarded_answer& a) {
    auto kind = co_await hold_until_content(*a.conn, *a.parser, a.up.idle_timeout,
                                            state_.hold_until, a.held);
    if (state_.client_gone) {
        a.span.fail("client_gone", "the client went away");
        co_return outcome{outcome::end::stopped};
    }
    if (kind == providers::stream_event::content) {
        // The stream's first chunk (its time to first token): it came while it was held.
        state_.first_body = std::chrono::steady_clock::now();
        co_return std::nullopt;
    }
    bool late = kind == providers::stream_event::done && state_.hold_until &&
                std::chrono::steady_clock::now() >= *state_.hold_until;
    auto why = kind == providers::stream_event::error ? "its stream began with an error"
               : late ? "the route's deadline passed before its first content"
                      : "its stream ended before any content";
    a.span.fail(kind == providers::stream_event::error ? "stream_error"
                : late                                 ? "deadline"
                                                       : "stream_empty",
                why);
    observability::log_warn("request " + ctx_.request_id + ": upstream `" + a.up.name +
                            "`: " + why + "; trying the route's next target");
    last.failed(failure_of(late ? errc::upstream_idle_timeout : errc::upstream_bad_response,
                           "upstream `" + a.up.name + "`: " + why));
    a.conn->close();
    co_return outcome{outcome::end::held, upstream::verdict::failed, {}, {}, why};
}

net::awaitable<std::optional<upstream::attempt_outcome>> handler::routed_attempts::guard_answer(
    forwarded_answer& a) {
    auto& res = a.parser->get();
    // InvokeModel's stream reaches a /v1/messages client as Anthropic's SSE (the relay rewrites
    // its frames), so it is guarded as one.
    bool invoke_stream = state_.messages_by_invoke && is_aws_event_stream(res);
    if (is_event_stream(res) || invoke_stream) {
        a.guard = std::make_unique<guardrails::stream_guard>(
            stream_api_of(*reading_.api()), *state_.guard_rules, *state_.answer_guards);
        co_return std::nullopt;
    }
    if (a.broken || !a.parser->is_done()) co_return std::nullopt;
    std::string message;
    auto found = co_await guard_json_answer(a.held, state_, message);
    if (found.result != guardrails::verdict::blocked) co_return std::nullopt;
    // Refused as a request would be: the client gets the error, not the answer.
    observability::log_info("request " + ctx_.request_id + ": " + message);
    state_.answered = true;
    co_await write_blocked(ctx_, where_.call.dialect, message);
    if (res.keep_alive()) a.pool.give_back(std::move(a.conn));
    answered = &a.up;
    settle(a.span);
    co_return outcome{outcome::end::committed, a.judged, a.asked, a.first_byte,
                      answered_with(a.status)};
}

}  // namespace gateway::passthrough
