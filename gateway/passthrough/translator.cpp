#include "gateway/passthrough/translator.hpp"

#include "gateway/error.hpp"
#include "gateway/guardrails/request_scan.hpp"
#include "gateway/guardrails/stream_guard.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/answer_guard.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/relay.hpp"
#include "gateway/passthrough/translated_answer.hpp"
#include "gateway/providers/openai.hpp"
#include "gateway/sse/event_parser.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/model_router.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <chrono>

namespace gateway::passthrough {

namespace {

namespace bhttp = boost::beast::http;
namespace json = boost::json;
namespace providers = gateway::providers;

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// `fields`: what authorises it (adapter::auth_fields, or a Bedrock upstream's signature).
std::string request_head(const http::request_context& ctx, const config::upstream_config& up,
                         const providers::adapter& adapter, const providers::request& r,
                         std::size_t body_size, const observability::trace_context* attempt,
                         std::string fields) {
    // The client's own x-* fields (tracing, tenancy), its W3C trace context (traceparent,
    // tracestate: the provider's spans join the client's trace, as through the passthrough) and
    // anthropic-beta go along; its key, OpenAI's fields and the framing do not.
    for (const auto& f : ctx.req) {
        auto name = f.name_string();
        bool custom = name.size() > 2 && boost::beast::iequals(name.substr(0, 2), "x-") &&
                      !boost::beast::iequals(name, "x-api-key") &&
                      !boost::beast::iequals(name, "x-goog-api-key") &&
                      !boost::beast::iequals(name, "x-request-id");
        bool beta = adapter.kind() == providers::provider::anthropic &&
                    boost::beast::iequals(name, "anthropic-beta");
        bool trace =
            boost::beast::iequals(name, "traceparent") || boost::beast::iequals(name, "tracestate");
        if (custom || beta || (trace && !attempt))
            fields += std::string(name) + ": " + std::string(f.value()) + "\r\n";
    }
    if (attempt) fields += observability::trace_fields(*attempt);
    return upstream::json_post_head(up, adapter.target(r), r.model, r.stream, fields,
                                    ctx.request_id, body_size);
}

net::awaitable<void> write_json(http::request_context& ctx, unsigned status, std::string body,
                                std::vector<std::pair<std::string, std::string>> extra = {}) {
    ctx.status = status;
    ctx.started();
    auto ec = co_await http::write_response(ctx, status, "application/json", body, extra);
    if (ec) ctx.keep_alive = false;
}

// A 400 naming the field that cannot be translated.
net::awaitable<void> refuse(http::request_context& ctx, const providers::ingress& in,
                            providers::parse_failure failure) {
    co_await write_json(ctx, 400, in.refusal(failure));
}

// The answer's guardrails over the stream a client of `in` reads; none when nothing selects them.
std::optional<guardrails::stream_guard> answer_guard(const providers::ingress& in,
                                                     const exchange_state& state) {
    if (!state.answer_guards) return std::nullopt;
    return std::optional<guardrails::stream_guard>(std::in_place, stream_api_of(in),
                                                   *state.guard_rules, *state.answer_guards);
}

config::provider_kind dialect_of(const providers::ingress& in) {
    if (&in == &providers::messages()) return config::provider_kind::anthropic;
    if (&in == &providers::generate_content()) return config::provider_kind::gemini;
    return config::provider_kind::openai;
}

// What the provider's error answer said, in the conversation model (Bedrock's names its error in
// the x-amzn-ErrorType field of `answer`). A refusal of a request the gateway sent without any
// key says so and names the setting: the provider's own words ("invalid x-api-key") say neither.
providers::provider_error provider_refusal(const config::upstream_config& up,
                                           const providers::adapter& adapter,
                                           const upstream::response_parser& answer,
                                           std::string_view body, upstream::credential whose) {
    auto status = answer.get().result_int();
    auto said = providers::error_of(adapter, status, answer.get()["x-amzn-ErrorType"], body);
    if ((status == 401 || status == 403) && whose == upstream::credential::none)
        said.message =
            "Upstream `" + up.name + "` (" + std::string(providers::provider_name(up.provider)) +
            ") refused the request, and the gateway sent it no key: set `api_key` on "
            "upstream `" +
            up.name +
            "` (a client's key is never sent to another provider). It said: " + said.message;
    return said;
}

// The header fields that authorise one attempt, and whose credential they present. An upstream
// whose credentials the gateway holds (Bedrock's signature over the final body, Vertex's and Entra
// ID's access tokens) is authorised with them for this attempt (failing to get them fails the
// attempt: nothing is sent); another's carry the key translated_key chose.
struct attempt_auth {
    std::string fields;
    upstream::credential whose = upstream::credential::none;
    upstream::failure failed;
};

net::awaitable<attempt_auth> authorize_attempt(const http::request_context& ctx,
                                               upstream::pool& pool,
                                               const providers::adapter& adapter,
                                               const providers::request& r, std::string_view body,
                                               bool forward_key) {
    const auto& up = pool.upstream();
    attempt_auth out;
    if (pool.holds_credentials()) {
        out.whose = upstream::credential::gateway;
        auto signed_fields = co_await upstream::authorize(pool, adapter.target(r), body);
        out.fields = std::move(signed_fields.fields);
        if (!signed_fields.error.empty())
            out.failed = {make_error_code(errc::upstream_credentials),
                          std::move(signed_fields.error)};
        co_return out;
    }
    auto key = translated_key(ctx.req, !ctx.key_id.empty(), up, forward_key);
    out.whose = key.whose;
    out.fields = providers::auth_fields_of(up, adapter, key.value);
    co_return out;
}

// An error answer (status >= 400), read whole as `body`: held for the attempt loop when it may
// try another target for it (or move on at a context window), else written to the client in its
// own dialect (nullopt).
net::awaitable<std::optional<translate_failure>> refused_attempt(
    http::request_context& ctx, const exchange_state& state, const config::upstream_config& up,
    const providers::adapter& adapter, const providers::ingress& in,
    const upstream::response_parser& answer, std::string body, upstream::credential whose,
    bool hold_failures, bool hold_context_window) {
    auto status = answer.get().result_int();
    auto said = provider_refusal(up, adapter, answer, body, whose);
    auto envelope = in.error_body(said);
    // Bedrock's status misleads a route (a model's failure is its 424): judged by what its error
    // type says.
    auto judged = upstream::judge_status(
        up.provider == config::provider_kind::bedrock ? said.status : status, body, whose);
    bool moves = judged == upstream::verdict::context_window && hold_context_window;
    if (hold_failures && (upstream::tries_another(judged) || moves)) {
        translate_failure held;
        held.upstream_status = status;
        held.judged = judged;
        held.status = said.status;
        held.body = std::move(envelope);
        held.retry_after =
            upstream::retry_after(answer.get()["retry-after-ms"], answer.get()["retry-after"]);
        co_return held;
    }
    co_await write_json(ctx, said.status, std::move(envelope), kept_fields(answer, state));
    co_return std::nullopt;
}

}  // namespace

const providers::request* call_reading::request() {
    if (!api_) return nullptr;
    if (!read_) {
        read_ = std::make_unique<reading>();
        providers::request r;
        if (api_->parse(req_.body(), r, read_->failure)) {
            if (api_->from_target(req_.target(), r))
                read_->request = std::move(r);
            else
                read_->failure = {"", "The request's path names no model."};
        }
    }
    return read_->request ? &*read_->request : nullptr;
}

const providers::parse_failure& call_reading::failure() const {
    static const providers::parse_failure none;
    return read_ ? read_->failure : none;
}

net::awaitable<std::optional<translate_failure>> translate(
    http::request_context& ctx, upstream::pool& pool, exchange_state& state, call_reading& asked,
    std::string_view model, bool hold_failures, config::duration first_byte,
    std::function<bool()> resend, bool hold_context_window) {
    co_await net::this_coro::throw_if_cancelled(false);
    const auto& up = pool.upstream();
    const auto& in = *asked.api();
    const auto* read = asked.request();
    if (!read) {
        co_await refuse(ctx, in, asked.failure());
        co_return std::nullopt;
    }
    // A copy: each attempt encodes it for its own target.
    providers::request r = *read;
    if (!model.empty()) r.model = std::string(model);
    providers::answer_names names{std::string(in.id_prefix()) + ctx.request_id, r.model,
                                  now_seconds(), ctx.req.target()};
    r.model = upstream::upstream_model(up, r.model);
    const auto& adapter = providers::adapter_for(up, r.model);
    std::string why;
    auto body = adapter.encode(r, why);
    if (body.empty()) {
        providers::parse_failure unsaid{"", std::move(why)};
        co_await refuse(ctx, in, std::move(unsaid));
        co_return std::nullopt;
    }
    auto auth = co_await authorize_attempt(ctx, pool, adapter, r, body, state.forward_key);
    state.presented = auth.whose;
    auto head = request_head(ctx, up, adapter, r, body.size(), state.trace, std::move(auth.fields));

    std::optional<upstream::response_parser> parser;
    upstream::exchange_hooks hooks{[&state](upstream::connection* c) { state.upstream = c; },
                                   [&state] { return state.client_gone || state.stopping; },
                                   first_byte, std::move(resend)};
    upstream::started_exchange started;
    if (auth.failed)
        started.failed = std::move(auth.failed);
    else
        started = co_await upstream::start_exchange(pool, ctx.stream.get_executor(), head, body,
                                                    parser, false, false, hooks);
    if (state.client_gone) co_return std::nullopt;
    if (!started.conn && hold_failures) {
        translate_failure held;
        held.transport = started.failed;
        co_return held;
    }
    if (!started.conn) {
        observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                "`: " + started.failed.detail);
        if (state.stopping) started.failed = stopped_by_shutdown();
        co_await write_error_as(ctx, in, started.failed.ec, started.failed.detail,
                                state.fields.list());
        co_return std::nullopt;
    }
    auto& conn = *started.conn;
    state.upstream = &conn;
    state.answered = true;
    state.streamed = r.stream;
    auto status = parser->get().result_int();
    // What came back is what its Content-Type says: a provider (or a proxy before it) may answer
    // a streamed request with one whole JSON reply.
    bool event_stream = adapter.streams_as(parser->get()[bhttp::field::content_type]);

    if (status >= 400 || !r.stream || !event_stream) {
        std::string reply_body;
        auto failed =
            co_await upstream::read_body(conn, *parser, reply_body, reply_limit, up.idle_timeout,
                                         hold_failures ? state.hold_until : std::nullopt);
        if (state.client_gone) co_return std::nullopt;
        if (failed && hold_failures) {
            translate_failure held;
            held.transport = failed;
            state.answered = false;
            co_return held;
        }
        if (failed) {
            if (state.stopping) failed = stopped_by_shutdown();
            co_await write_error_as(ctx, in, failed.ec, failed.detail, state.fields.list());
            co_return std::nullopt;
        }
        bool reusable = parser->get().keep_alive();
        if (status >= 400) {
            auto held = co_await refused_attempt(ctx, state, up, adapter, in, *parser,
                                                 std::move(reply_body), auth.whose, hold_failures,
                                                 hold_context_window);
            if (held) {
                state.upstream = nullptr;
                state.answered = false;
                if (reusable) pool.give_back(std::move(started.conn));
                co_return held;
            }
        } else {
            providers::reply reply;
            std::string error;
            if (!adapter.decode(reply_body, reply, error)) {
                co_await write_error_as(ctx, in, make_error_code(errc::upstream_bad_response),
                                        error);
                co_return std::nullopt;
            }
            if (reply.used.known) {
                state.used = reply.used;
                state.usage_source = "body";
            }
            state.delivered_bytes = reply.content.text().size();
            for (const auto* call : reply.content.calls())
                state.delivered_bytes += json::serialize(call->arguments).size();
            state.complete = true;
            cost_in_head(ctx, state, state.used, state.delivered_bytes);
            if (state.keep_answer)
                state.translated_reply = std::make_unique<providers::reply>(reply);
            if (r.stream) {
                auto writer = in.writer(names, r);
                auto guard = answer_guard(in, state);
                co_await write_reply_as_stream(ctx, reply, *writer, kept_fields(*parser, state),
                                               guard ? &*guard : nullptr);
            } else {
                auto body = in.answer(reply, names, r);
                guardrails::body_check found;
                std::string message;
                if (state.answer_guards) found = co_await guard_json_answer(body, state, message);
                if (found.result == guardrails::verdict::blocked) {
                    observability::log_info("request " + ctx.request_id + ": " + message);
                    co_await write_blocked(ctx, dialect_of(in), message);
                } else {
                    co_await write_json(ctx, 200, std::move(body), kept_fields(*parser, state));
                }
            }
        }
        state.upstream = nullptr;
        if (reusable) pool.give_back(std::move(started.conn));
        co_return std::nullopt;
    }

    auto writer = in.writer(names, r);
    auto guard = answer_guard(in, state);
    auto relayed = co_await relay_stream(ctx, conn, *parser, up, adapter, *writer, hold_failures,
                                         state, guard ? &*guard : nullptr);
    state.upstream = nullptr;
    if (relayed.before_content) {
        conn.close();
        state.answered = false;
        translate_failure held;
        held.transport = std::move(*relayed.before_content);
        co_return held;
    }
    if (relayed.reusable && !state.client_gone) pool.give_back(std::move(started.conn));
    co_return std::nullopt;
}

net::awaitable<void> answer_stored(http::request_context& ctx, const providers::ingress& in,
                                   const providers::request& asked, const providers::reply& stored,
                                   std::vector<std::pair<std::string, std::string>> fields) {
    providers::answer_names names{std::string(in.id_prefix()) + ctx.request_id, asked.model,
                                  now_seconds(), ctx.req.target()};
    if (asked.stream) {
        auto writer = in.writer(names, asked);
        co_await write_reply_as_stream(ctx, stored, *writer, fields);
    } else {
        co_await write_json(ctx, 200, in.answer(stored, names, asked), std::move(fields));
    }
}

net::awaitable<void> write_error_as(http::request_context& ctx, const providers::ingress& in,
                                    boost::system::error_code ec, std::string_view detail,
                                    std::vector<std::pair<std::string, std::string>> fields) {
    auto [status, ignored] = to_error_response(ec, detail);
    providers::provider_error said;
    said.status = status;
    said.type = providers::detail::error_type_for(status);
    said.message = detail.empty() ? ec.message() : std::string(detail);
    co_await write_json(ctx, status, in.error_body(said), std::move(fields));
}

net::awaitable<void> write_blocked(http::request_context& ctx, config::provider_kind dialect,
                                   std::string_view message) {
    auto code = make_error_code(errc::guardrail_blocked);
    if (dialect == config::provider_kind::anthropic)
        co_await write_error_as(ctx, providers::messages(), code, message);
    else if (dialect == config::provider_kind::gemini)
        co_await write_error_as(ctx, providers::generate_content(), code, message);
    else
        co_await http::write_error(ctx, code, message);
}

net::awaitable<void> count_tokens(http::request_context& ctx, const providers::ingress& in) {
    providers::request r;
    providers::parse_failure refused;
    if (!in.parse(ctx.req.body(), r, refused)) {
        co_await refuse(ctx, in, std::move(refused));
        co_return;
    }
    auto tokens = providers::estimate_input_tokens(r);
    // Anthropic's answer, or Gemini's.
    auto body =
        json::serialize(&in == &providers::messages() ? json::object{{"input_tokens", tokens}}
                                                      : json::object{{"totalTokens", tokens}});
    // Named first: GCC 12 cannot copy a braced list into a coroutine's frame.
    std::vector<std::pair<std::string, std::string>> fields{{"x-contextgate-estimate", "true"}};
    co_await write_json(ctx, 200, std::move(body), std::move(fields));
}

}  // namespace gateway::passthrough
