#include "gateway/passthrough/handler.hpp"

#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/http/response.hpp"
#include "gateway/io/relay_buffer.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/relay.hpp"
#include "gateway/passthrough/request_models.hpp"
#include "gateway/passthrough/translator.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/usage_observer.hpp"
#include "gateway/secret_names.hpp"
#include "gateway/sse/boundary_tracker.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/model_router.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_cat.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>

#include <array>
#include <optional>

namespace gateway::passthrough {

namespace {

namespace bhttp = beast::http;
using boost::system::error_code;
using namespace net::experimental::awaitable_operators;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

// Whether the request goes through the guardrails' stage: none configured (or a tunnel), and it
// is forwarded straight away, without the stage's coroutine frame (issue 58: a passthrough
// request costs nothing extra while no guardrail is configured).
bool guarded(const guard_setup& guards, bool upgrade) {
    return !upgrade && guards.rules && !guards.rules->empty();
}

// Pumps raw bytes one way until either side closes; for tunnelled (101) connections.
net::awaitable<void> pump_client_to_upstream(http::request_context& ctx, upstream::connection& conn,
                                             config::duration idle) {
    co_await net::this_coro::throw_if_cancelled(false);
    io::relay_buffer buffer;
    for (;;) {
        std::size_t n = 0;
        if (ctx.buffer.size() > 0) {
            n = net::buffer_copy(buffer.buffer(), ctx.buffer.data());
            ctx.buffer.consume(n);
        } else {
            ctx.deadline.arm(idle);
            auto [ec, got] = co_await ctx.stream.async_read_some(buffer.buffer(), use_ec);
            if (ec) break;
            n = got;
        }
        auto ec = co_await conn.write_raw(net::buffer(buffer.data(), n), idle);
        if (ec) break;
    }
    conn.close();
    error_code ignored;
    ctx.stream.close(ignored);
}

net::awaitable<void> pump_upstream_to_client(http::request_context& ctx, upstream::connection& conn,
                                             config::duration idle) {
    co_await net::this_coro::throw_if_cancelled(false);
    io::relay_buffer buffer;
    for (;;) {
        auto [ec, n] = co_await conn.read_raw(buffer.buffer(), idle);
        if (ec) break;
        auto write_ec = co_await write_client(ctx, net::buffer(buffer.data(), n));
        if (write_ec) break;
    }
    conn.close();
    error_code ignored;
    ctx.stream.close(ignored);
}

// A WebSocket upgrade: the request, then, once the upstream switched protocols, bytes both ways
// until one side closes. Errors are answered to the client.
net::awaitable<void> tunnel(http::request_context& ctx, upstream::pool& pool,
                            const std::string& head, exchange_state& state) {
    // Cancellation (the client went away) shows up as I/O errors, which are handled as values.
    co_await net::this_coro::throw_if_cancelled(false);
    const auto& up = pool.upstream();
    std::optional<upstream::response_parser> parser;
    upstream::exchange_hooks hooks{[&state](upstream::connection* c) { state.upstream = c; },
                                   [&state] { return state.client_gone; }};
    auto started = co_await upstream::start_exchange(
        pool, ctx.stream.get_executor(), head, ctx.req.body(), parser,
        ctx.req.method() == bhttp::verb::head, true, hooks);
    if (!started.conn) {
        observability::log_warn("request " + ctx.request_id + ": upstream `" + up.name +
                                "`: " + started.failed.detail);
        co_await http::write_error(ctx, started.failed.ec, started.failed.detail);
        co_return;
    }
    auto& conn = *started.conn;
    state.upstream = &conn;
    if (parser->get().result() == bhttp::status::switching_protocols) {
        auto upgrade_line = "Upgrade: " + std::string(parser->get()[bhttp::field::upgrade]);
        auto response = response_head(parser->get(), ctx, upgrade_line, "Upgrade");
        ctx.status = 101;
        ctx.started();
        ctx.keep_alive = false;
        if (auto ec = co_await write_client(ctx, net::buffer(response)); ec) co_return;
        co_await (pump_client_to_upstream(ctx, conn, up.idle_timeout) &&
                  pump_upstream_to_client(ctx, conn, up.idle_timeout));
        co_return;
    }
    // Refused: the answer is relayed, and the connection (asked for an upgrade) not kept.
    co_await relay_response(ctx, conn, *parser, up, state);
}

}  // namespace

namespace {

std::string too_long_model_name() {
    return "The model name is longer than " + std::to_string(providers::max_model_name_bytes) +
           " bytes; no model has such a name.";
}

// For a vendor's own API (Anthropic's Messages, Gemini's): the model's route, else the upstream
// whose globs take it, else the first upstream of that vendor (the default for its own client),
// else the default upstream. True when a route was chosen.
bool pick_for_native_api(destination& d, const upstream::routing& routing,
                         const std::optional<std::string>& model,
                         const upstream::route_table::takers& takers) {
    if (takers.route && d.call.post) {
        d.route = takers.route;
        d.upstream = takers.route->targets.front().index;
        return true;
    }
    const auto& router = routing.router();
    if (model) d.upstream = routing.table().matching_upstream(takers, *model);
    if (!d.upstream) d.upstream = router.route(model, d.call.dialect);
    if (!d.upstream) d.upstream = router.route(model);
    return false;
}

// `path` is not available for the model: its upstream speaks another dialect, and the gateway
// translates only `what` to it.
std::string untranslatable(std::string_view path, std::string_view model,
                           const config::upstream_config& up, std::string_view what) {
    return "`" + std::string(path) + "` is not available for model `" + std::string(model) +
           "`: its upstream `" + up.name + "` speaks " +
           std::string(providers::provider_name(up.provider)) +
           ", and the gateway translates only " + std::string(what) + " to it.";
}

destination choose(const http::request_context& ctx,
                   const std::vector<config::upstream_config>& upstreams,
                   const upstream::routing& routing, const client_call& call) {
    destination d;
    d.call = call;
    std::optional<std::string> model;
    if (call.vertex) {
        if (call.vertex_method.empty()) {
            d.refusal = "`" + std::string(call.path) +
                        "` is no Vertex AI path this gateway serves: it forwards POST "
                        "/vertex/v1/projects/{project}/locations/{location}/publishers/anthropic/"
                        "models/{model}:rawPredict and :streamRawPredict, and "
                        "…/publishers/google/models/{model}:generateContent, "
                        ":streamGenerateContent and :countTokens (v1beta1 too).";
            return d;
        }
        model = std::string(call.path_model);
    } else if (call.dialect == config::provider_kind::gemini) {
        // Gemini's native paths name the model: /v1beta/models/{model}:{method}, and its stable
        // API's /v1/models/{model}:{method}.
        if (call.path.starts_with("/v1beta/models/") || call.gemini_stable)
            model = std::string(call.path_model);
    } else if (call.dialect == config::provider_kind::bedrock) {
        // Bedrock's path names the model percent-encoded once (`:` as %3A): matched decoded.
        if (call.bedrock_operation.empty()) {
            d.refusal = "`" + std::string(call.path) +
                        "` is no Bedrock runtime path this gateway serves: it forwards POST "
                        "/bedrock/model/{modelId}/converse, /converse-stream, /invoke and "
                        "/invoke-with-response-stream.";
            return d;
        }
        model = percent_decoded(call.path_model);
    } else if (!ctx.req.body().empty()) {
        model = upstream::read_model(ctx.req.body());
    }
    if (model && model->size() > providers::max_model_name_bytes) {
        d.refusal = too_long_model_name();
        return d;
    }
    d.model = model.value_or("");
    upstream::route_table::takers takers;
    if (model) takers = routing.table().takers_of(*model);
    if (model && !takers.found()) {
        // No route and no upstream takes it: nothing goes upstream (it went to the first one).
        d.unknown_model = true;
        return d;
    }
    if (call.vertex) {
        // Vertex AI's API, for a Vertex upstream only: the body goes as it came, the path is
        // written per attempt for the target's project, location and model.
        d.target = call.target;
        if (pick_for_native_api(d, routing, model, takers)) return d;
        const auto& up = upstreams[*d.upstream];
        if (up.host != config::hosting::vertex)
            d.refusal = "`" + std::string(call.path) + "` is not available for model `" + d.model +
                        "`: its upstream `" + up.name +
                        "` is no Vertex AI upstream, and the gateway forwards Vertex AI's paths "
                        "only to one.";
        return d;
    }
    if (call.dialect == config::provider_kind::gemini) {
        // Gemini's API, for whatever model its path names; a target of another provider is
        // translated (generateContent, streamGenerateContent, countTokens). Below the Gemini
        // upstream's base (…/v1beta): a /v1/ request is asked of the same API.
        d.target = call.target.substr(call.gemini_stable ? 3 : 7);
        if (pick_for_native_api(d, routing, model, takers)) return d;
        const auto& up = upstreams[*d.upstream];
        bool translatable = model && (call.model_call() || call.counts_tokens());
        if (up.provider != config::provider_kind::gemini && !translatable)
            d.refusal = untranslatable(call.path, d.model, up,
                                       "POST generateContent, streamGenerateContent and "
                                       "countTokens");
        return d;
    }
    if (call.dialect == config::provider_kind::bedrock) {
        // Bedrock's runtime API, for a Bedrock upstream only: the body goes as it came, signed
        // by the gateway. The target is written per attempt, from the model the target hears.
        if (pick_for_native_api(d, routing, model, takers)) return d;
        const auto& up = upstreams[*d.upstream];
        if (up.provider != config::provider_kind::bedrock)
            d.refusal = "`" + std::string(call.path) + "` is not available for model `" + d.model +
                        "`: its upstream `" + up.name + "` speaks " +
                        std::string(providers::provider_name(up.provider)) +
                        ", and the gateway forwards Bedrock's paths only to a Bedrock upstream.";
        return d;
    }
    if (call.dialect == config::provider_kind::anthropic) {
        // Anthropic's API, for whatever model it names; a target of another provider is
        // translated (Anthropic's base URL has no /v1: the client's path is its path).
        d.target = call.target;
        if (pick_for_native_api(d, routing, model, takers)) return d;
        const auto& up = upstreams[*d.upstream];
        bool translatable = call.model_call() || call.counts_tokens();
        if (up.provider == config::provider_kind::openai && !translatable) {
            // Anthropic's other paths (batches, …) go as they came: some OpenAI-compatible
            // servers serve them.
            d.call.dialect = config::provider_kind::openai;
            d.target = call.target.substr(3);
        } else if (up.provider != config::provider_kind::anthropic && !translatable) {
            d.refusal = untranslatable(call.path, d.model, up,
                                       "POST /v1/messages and /v1/messages/count_tokens");
        }
        return d;
    }
    d.target = call.target.substr(3);  // after "/v1": the router only sends /v1/... here
    if (takers.route && call.post) {
        d.route = takers.route;
        d.upstream = takers.route->targets.front().index;
        return d;
    }
    // The model's upstream by its globs, else the default (the first).
    d.upstream = model ? routing.table().matching_upstream(takers, *model).value_or(0) : 0;
    const auto& up = upstreams[*d.upstream];
    if (up.provider != config::provider_kind::openai) {
        // Translated by the attempt loop; any other path cannot be.
        if (!call.model_call())
            d.refusal =
                untranslatable(call.path, d.model, up, "/v1/chat/completions and /v1/responses");
    } else if (up.translate_responses && call.path == "/v1/responses" && call.upgrade) {
        d.refusal = "Upstream `" + up.name +
                    "` has `responses: translate`: /v1/responses over WebSocket is tunnelled "
                    "only to an upstream that serves it; use HTTP.";
    }
    return d;
}

}  // namespace

// The usage to charge for a 2xx answer to a request that names a model (providers::settled_usage:
// the upstream's count, or an estimate never below what the client received), on the context for
// the access log, the key's limits and the ledger. A listing or a file uses no model.
void finish_usage(http::request_context& ctx, exchange_state& state) {
    if (state.answered && ctx.status / 100 == 2 && !ctx.model.empty()) {
        auto settled = providers::settled_usage(state.used, state.delivered_bytes,
                                                ctx.req.body().size(), state.complete);
        state.used = settled.used;
        if (settled.estimated) state.usage_source = "estimate";
    }
    if (!state.used.known) return;
    if (state.used.unreadable)
        observability::log_warn("request " + ctx.request_id + ": upstream `" + ctx.upstream +
                                "` reported a token figure that is no count (negative, not "
                                "finite, or past 2^40); it counted 0");
    ctx.input_tokens = state.used.input;
    ctx.output_tokens = state.used.output;
}

handler::handler(
    const config::server_config& server, const std::vector<config::upstream_config>& upstreams,
    upstream::routing& routing, const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
    const std::vector<std::shared_ptr<upstream::aws::credentials_provider>>& aws_credentials,
    const std::vector<std::shared_ptr<upstream::token_source>>& token_sources, admission* gate,
    upstream::usage_sink* ledger, cache_setup cache, const pricing::price_table* prices,
    guard_setup guards)
    : server_(server),
      upstreams_(upstreams),
      router_(routing.router()),
      routing_(routing),
      gate_(gate),
      ledger_(ledger),
      cache_(cache),
      guards_(guards),
      prices_(prices) {
    series_.resize(upstreams.size());
    priced_.resize(upstreams.size());
    pools_.reserve(upstreams.size());
    for (std::size_t i = 0; i < upstreams.size(); ++i) {
        pools_.emplace_back(upstreams[i], tls_contexts[i], aws_credentials[i], token_sources[i]);
        config::route_config alone;
        alone.max_attempts = 1;
        alone.targets.push_back({upstreams[i].name, "", 1, i});
        default_routes_.push_back(std::move(alone));
    }
}

void handler::close_idle() {
    for (auto& p : pools_) p.close_all();
}

void handler::stop_waiting() {
    for (auto& state : in_flight_) {
        if (state.ctx->response_started) continue;
        state.stopping = true;
        if (state.upstream) state.upstream->close();
        if (state.backoff) state.backoff->cancel();
    }
}

destination handler::route(const http::request_context& ctx, bool upgrade) const {
    auto call = classify(ctx.req.method(), ctx.req.target(), upgrade);
    if (ctx.req.method() == bhttp::verb::get &&
        (call.path == "/v1/models" || call.path == "/v1beta/models")) {
        destination listing;
        listing.call = call;
        listing.listing = true;
        // Claude Code's model picker (and the Anthropic SDK) ask /v1/models with Anthropic's
        // headers, a Gemini client with its key's: each gets its own provider's page.
        if (call.path == "/v1/models" &&
            (!ctx.req["anthropic-version"].empty() || !ctx.req["x-api-key"].empty()))
            listing.call.dialect = config::provider_kind::anthropic;
        else if (call.path == "/v1/models" && !ctx.req["x-goog-api-key"].empty())
            listing.call.dialect = config::provider_kind::gemini;
        return listing;
    }
    if (ctx.req.method() == bhttp::verb::get && call.path == "/bedrock/inference-profiles") {
        // Bedrock's control plane's ListInferenceProfiles (Claude Code in Bedrock mode asks it).
        destination listing;
        listing.call = call;
        listing.listing = true;
        return listing;
    }
    return choose(ctx, upstreams_, routing_, call);
}

net::awaitable<void> handler::operator()(http::request_context& ctx, std::shared_ptr<const void>) {
    bool upgrade = is_websocket_upgrade(ctx.req);
    if (upgrade && !server_.websocket_tunnel) {
        co_await http::write_error(ctx, errc::websocket_refused);
        co_return;
    }
    if (gate_ && gate_->active()) {
        co_await serve_with_key(ctx, upgrade);
        co_return;
    }
    auto where = route(ctx, upgrade);
    if (!where.refusal.empty())
        co_await http::write_error(ctx, errc::bad_request, where.refusal);
    else if (where.unknown_model)
        co_await refuse_unknown_model(ctx, where, {});
    else if (where.listing)
        co_await list_models(ctx, where, {});
    else if (!guarded(guards_, upgrade))
        co_await forward(ctx, where, upgrade);
    else
        co_await guard_then_forward(ctx, where, nullptr, upgrade);
}

// With virtual keys: the key is checked before anything else is looked at, admitted against its
// limits once the destination is known, and settled with what the answer used. Apart from
// operator(), whose frame every proxied request allocates, so that it stays small.
net::awaitable<void> handler::serve_with_key(http::request_context& ctx, bool upgrade) {
    auto identified = gate_->identify(ctx.req, now_ms());
    if (auto* refused = std::get_if<http::reply>(&identified)) {
        // Not let in: its traceparent's sampled flag no longer decides whether it is traced.
        ctx.trace.caller_refused();
        co_await http::write_reply(ctx, std::move(*refused));
        co_return;
    }
    auto who = std::get<0>(std::move(identified));
    ctx.key_id = who.key_id;
    auto where = route(ctx, upgrade);
    if (!where.refusal.empty()) {
        co_await http::write_error(ctx, errc::bad_request, where.refusal);
        co_return;
    }
    if (where.unknown_model) {
        co_await refuse_unknown_model(ctx, where, who.models);
        co_return;
    }
    // Routing read the JSON body's model already (where.model, "" when it found none).
    auto asked = models_of(
        ctx.req, upgrade,
        where.model.empty() ? std::nullopt : std::optional<std::string_view>(where.model));
    auto admitted = co_await gate_->admit(std::move(who), ctx.req, asked,
                                          [this, &where] { return prices_of(where); });
    if (auto* refused = std::get_if<http::reply>(&admitted)) {
        // A key not allowed what it asks for is refused for its credentials, as above; one over
        // its limits was let in (authenticated) and keeps its caller's sampling.
        if (refused->status == to_error_response(errc::model_not_allowed).status)
            ctx.trace.caller_refused();
        co_await http::write_reply(ctx, std::move(*refused));
        co_return;
    }
    auto ticket = std::get<0>(std::move(admitted));
    if (where.listing)
        co_await list_models(ctx, where, ticket.who.models);
    else if (!guarded(guards_, upgrade))
        co_await forward(ctx, where, upgrade);
    else
        co_await guard_then_forward(ctx, where, &ticket.who, upgrade);
    co_await settle(ctx, std::move(ticket));
}

std::vector<target_price> handler::prices_of(const destination& where) {
    std::vector<target_price> out;
    if (where.listing || where.call.counts_tokens()) return out;
    // As settlement prices an attempt: its upstream, the model it hears (after its model_map).
    auto add = [&](std::size_t index, std::string_view model) {
        const auto& up = upstreams_[index];
        auto heard =
            up.model_map.empty() ? std::string(model) : upstream::upstream_model(up, model);
        auto price = price_of(index, heard);
        out.push_back({up.name, std::move(heard), price ? price->price : nullptr});
    };
    if (where.route) {
        for (const auto* list : {&where.route->targets, &where.route->on_context_window})
            for (const auto& t : *list) add(t.index, upstream::target_model(t, where.model));
    } else if (where.upstream) {
        add(*where.upstream, where.model);
    }
    return out;
}

net::awaitable<void> handler::settle(const http::request_context& ctx, ticket admitted) {
    request_usage used;
    // Refused or failed before the model ran: nothing was used.
    bool nothing = !ctx.response_started || ctx.status >= 400;
    if (ctx.input_tokens >= 0 || ctx.output_tokens >= 0)
        used.tokens = static_cast<std::uint64_t>(std::max<std::int64_t>(ctx.input_tokens, 0) +
                                                 std::max<std::int64_t>(ctx.output_tokens, 0));
    else if (nothing)
        used.tokens = 0;
    if (ctx.cost && ctx.cost->priced)
        used.usd = ctx.cost->usd;
    else if (nothing)
        used.usd = 0;
    auto& m = observability::metrics();
    if (m.key_labels) {
        const auto& name = admitted.who.key_name;
        m.key_requests.with({name}).inc();
        m.key_tokens.with({name, "input"})
            .inc(static_cast<double>(std::max<std::int64_t>(ctx.input_tokens, 0)));
        m.key_tokens.with({name, "output"})
            .inc(static_cast<double>(std::max<std::int64_t>(ctx.output_tokens, 0)));
    }
    co_await gate_->settle(std::move(admitted), used);
}

handler::model_series& handler::series_of(std::size_t upstream, const std::string& model) {
    auto& known = series_[upstream];
    if (auto it = known.find(model); it != known.end()) return it->second;
    const auto& up = upstreams_[upstream];
    auto provider = providers::provider_name(up.provider);
    auto& m = observability::metrics();
    model_series s{&m.operation_duration.with({up.name, provider, model}),
                   &m.time_to_first_token.with({up.name, provider, model}),
                   &m.token_usage.with({up.name, provider, model, "input"}),
                   &m.token_usage.with({up.name, provider, model, "output"}),
                   &m.usage_reports.with({up.name, "body"}),
                   &m.usage_reports.with({up.name, "stream"}),
                   &m.usage_reports.with({up.name, "estimate"}),
                   &m.usage_reports.with({up.name, "none"})};
    // Model names come from clients: past a bound, series are looked up each time instead.
    if (known.size() >= 1000) {
        thread_local model_series uncached;
        uncached = s;
        return uncached;
    }
    return known.emplace(model, s).first->second;
}

void handler::account(const http::request_context& ctx, const config::upstream_config& up,
                      const exchange_state& state, std::chrono::steady_clock::time_point started) {
    if (!state.answered) return;
    auto index = static_cast<std::size_t>(&up - upstreams_.data());
    if (observability::metrics().on) {
        auto& s = series_of(index, ctx.model);
        auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
        s.duration->observe(seconds(std::chrono::steady_clock::now() - started));
        if (state.streamed && state.first_body != std::chrono::steady_clock::time_point{})
            s.first_token->observe(seconds(state.first_body - started));
        if (ctx.status / 100 == 2)
            (state.usage_source == "body"       ? s.from_body
             : state.usage_source == "stream"   ? s.from_stream
             : state.usage_source == "estimate" ? s.from_estimate
                                                : s.from_none)
                ->inc();
        // The GenAI token histograms hold what providers reported; the gateway's estimates are
        // counted apart (source="estimate") and charged, not mixed in.
        if (state.used.known && state.usage_source != "estimate") {
            s.input->observe(static_cast<double>(state.used.input));
            s.output->observe(static_cast<double>(state.used.output));
        }
    }
    if (ledger_ && ctx.status / 100 == 2)
        ledger_->record(upstream::usage_record_of(ctx.key_id, ctx.model, up.name, state.used,
                                                  ctx.cost, now_ms()));
}

net::awaitable<void> handler::forward(http::request_context& ctx, const destination& where,
                                      bool upgrade) {
    // Not a coroutine: the request's way is forward_routed's frame, not one more around it.
    if (!upgrade)
        return forward_routed(ctx, where,
                              where.route ? *where.route : default_routes_[*where.upstream]);
    return forward_tunnel(ctx, where);
}

net::awaitable<void> handler::forward_tunnel(http::request_context& ctx, const destination& where) {
    // A tunnel (101): one upstream, once; the pumps read the client themselves, no watcher.
    auto& pool = pools_[*where.upstream];
    const auto& up = pool.upstream();
    ctx.upstream = up.name;
    ctx.model = where.model;
    exchange_state state;
    auto head =
        upstream_request_head(ctx, up, where.target, upstream::upstream_model(up, where.model),
                              true, !ctx.key_id.empty());
    co_await tunnel(ctx, pool, head, state);
}

}  // namespace gateway::passthrough
