#pragma once

#include "gateway/cache/response_cache.hpp"
#include "gateway/config/config.hpp"
#include "gateway/guardrails/engine.hpp"
#include "gateway/http/context.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/passthrough/admission.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/passthrough/client_call.hpp"
#include "gateway/pricing/price_table.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/routes.hpp"
#include "gateway/upstream/usage_sink.hpp"

#include <map>
#include <string>
#include <vector>

namespace gateway::guardrails {
class model_caller;
class webhooks;
}  // namespace gateway::guardrails

namespace gateway::passthrough {

struct exchange_state;
class call_reading;

// Where a request goes: the upstream, the target below its base path, and whether the gateway
// translates it (Chat Completions to an Anthropic or Gemini upstream).
struct destination {
    std::optional<std::size_t> upstream;
    std::string model;  // as the client named it ("" when none)
    std::string_view target;
    // What the request is (classify). Its dialect is the one the targets hear it in: a target
    // of another provider is translated, or cannot take the request. (Anthropic's paths other
    // than Messages go to an OpenAI-compatible upstream as they came, in its dialect.)
    client_call call;
    // GET /v1/models (or Gemini's /v1beta/models): answered by the gateway from its catalogue,
    // in the dialect `call.dialect` names (Anthropic's for a client that sends its headers).
    bool listing = false;
    std::string refusal;         // set: answer 400 with it
    bool unknown_model = false;  // no route and no upstream takes `model`: answer 404
    // A route of the configuration matched the model (a /v1 POST with a JSON body): `upstream`
    // is then its first target. Without one, the attempt loop takes `upstream`'s default route.
    const config::route_config* route = nullptr;
    // The guardrails of the answer (the response stage's, for this caller and model; chosen by
    // the request stage, guard_then_forward): empty, the answer is relayed unread. `key`: the
    // caller's virtual key's name, as a webhook is told it.
    guardrails::selection answer_guards;
    std::string key;
};

namespace net = boost::asio;
namespace beast = boost::beast;

// The response cache and its settings; a null `store` when no upstream or route caches.
struct cache_setup {
    cache::response_cache* store = nullptr;
    const config::cache_config* config = nullptr;
};

// The guardrails a worker's requests are checked with: the generation's engine (null or empty:
// none), its webhooks and what its model checks call.
struct guard_setup {
    const guardrails::engine* rules = nullptr;
    guardrails::webhooks* hooks = nullptr;
    guardrails::model_caller* models = nullptr;
};

// The answer kept while it was relayed (exchange_state::keep_answer), read into the conversation
// model in `dialect` (the client's: a forwarded answer is in the dialect the client spoke), or the
// reply a translation read: for the response cache and the attempt's span. Only a complete 200
// answer to a client still there; nullopt when it is none or cannot be read whole.
std::optional<providers::reply> read_kept_answer(const http::request_context& ctx,
                                                 exchange_state& state,
                                                 config::provider_kind dialect);

// What the response cache does for one request (handler::plan_cache, cached.cpp).
struct cache_plan {
    std::string_view result;  // x-contextgate-cache: hit | miss | skip; "": the cache is not used
    bool read = false;        // look it up (not `Cache-Control: no-cache`)
    bool write = false;       // store the answer (not `no-store`)
    std::string key;
    config::duration ttl{0};
    const providers::ingress* api = nullptr;    // the client's, to write a hit in
    const providers::request* asked = nullptr;  // the request as that API reads it
    config::provider_kind dialect = config::provider_kind::openai;  // the client's: its errors
};

// Forwards /v1/* to an upstream, per the design's passthrough contract: the request body goes
// upstream byte for byte (only `model` is read, to pick the upstream), hop-by-hop headers are
// dropped and the rest kept both ways, the response is relayed as each upstream read completes,
// a client that goes away cancels the upstream exchange (noticed within client_watch's delay), an
// upstream that dies mid-SSE ends the stream with `event: error`. Token usage is read from a copy
// of the answer (see providers::usage_observer) for metrics, limits and the usage ledger; with
// virtual keys configured the gatekeeper admits each request first. One handler per worker: it owns
// that worker's pools and is used from that worker's thread only.
class handler {
public:
    // `tls_contexts`, `aws_credentials` and `token_sources`: per upstream, null where it has none.
    // `gate` (virtual keys and limits), `ledger` (token usage) and `prices` (what requests cost)
    // may be null.
    handler(
        const config::server_config& server, const std::vector<config::upstream_config>& upstreams,
        upstream::routing& routing,
        const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
        const std::vector<std::shared_ptr<upstream::aws::credentials_provider>>& aws_credentials,
        const std::vector<std::shared_ptr<upstream::token_source>>& token_sources,
        admission* gate = nullptr, upstream::usage_sink* ledger = nullptr, cache_setup cache = {},
        const pricing::price_table* prices = nullptr, guard_setup guards = {});

    // `hold`: kept until the request ends (what owns this handler and the configuration it reads).
    net::awaitable<void> operator()(http::request_context& ctx,
                                    std::shared_ptr<const void> hold = {});

    // Closes every pooled connection; used when the worker drains. Connections finishing their
    // response while draining are not pooled again.
    void close_idle();
    // Stops the requests whose answer has not started (in a backoff, or waiting on an upstream)
    // when the drain time is over: each answers 503 (stopped_by_shutdown) instead of being cut.
    void stop_waiting();

private:
    // One request's side of the attempt loop (routed.cpp).
    class routed_attempts;

    destination route(const http::request_context& ctx, bool upgrade) const;
    net::awaitable<void> serve_with_key(http::request_context& ctx, bool upgrade);
    // The stages after the admission (guard_stage.cpp): the guardrails' request stage — the
    // request's texts checked before anything goes upstream, masked in its body or the request
    // refused, and the answer's guardrails chosen into `where` — then forward(). `who`: the
    // caller the admission let in (null without virtual keys). A tunnel's frames are not read:
    // it is forwarded unchecked.
    net::awaitable<void> guard_then_forward(http::request_context& ctx, destination& where,
                                            const caller* who, bool upgrade);
    // `allowed`: the caller's key's model globs (empty: every model).
    net::awaitable<void> list_models(http::request_context& ctx, const destination& where,
                                     const std::vector<std::string>& allowed);
    // The 404 for a model no route and no upstream takes, in the client's dialect, with the
    // names nearest to it that `allowed` takes.
    net::awaitable<void> refuse_unknown_model(http::request_context& ctx, const destination& where,
                                              const std::vector<std::string>& allowed);
    // The exchange with the upstream `where` names (chosen and admitted by operator()).
    net::awaitable<void> forward(http::request_context& ctx, const destination& where,
                                 bool upgrade);
    // A WebSocket upgrade's tunnel to the upstream `where` names.
    net::awaitable<void> forward_tunnel(http::request_context& ctx, const destination& where);
    // Attempts at `route`'s targets until one answers, nothing sent to the client before the
    // gateway commits to an answer (routed.cpp).
    net::awaitable<void> forward_routed(http::request_context& ctx, const destination& where,
                                        const config::route_config& route);
    // The response cache's part in a model call: whether it is looked up and stored, and under
    // which key. Answers a hit (true) with no upstream call; stores a complete answer.
    cache_plan plan_cache(const http::request_context& ctx, const destination& where,
                          const config::route_config& route, call_reading& reading);
    net::awaitable<bool> answer_from_cache(http::request_context& ctx, cache_plan& plan,
                                           exchange_state& state);
    // `cost`: what the answer cost, kept with it as what a hit on it saves.
    net::awaitable<void> keep_in_cache(const cache_plan& plan, const providers::reply* answer,
                                       const std::optional<request_cost>& cost);
    // What `where` may cost per token, for the admission: the price of each target it may
    // reach (a route's, those for a passed context window included; or the one upstream), as
    // settlement prices the one that answers; none for a listing or for counting tokens.
    std::vector<target_price> prices_of(const destination& where);
    // The key's claim settled with the usage and cost settlement found.
    net::awaitable<void> settle(const http::request_context& ctx, ticket admitted);
    // Metrics and the usage ledger for a finished model request.
    void account(const http::request_context& ctx, const config::upstream_config& up,
                 const exchange_state& state, std::chrono::steady_clock::time_point started);

    const config::server_config& server_;
    const std::vector<config::upstream_config>& upstreams_;
    const upstream::model_router& router_;
    upstream::routing& routing_;
    std::vector<upstream::pool> pools_;
    // Each upstream's default route: itself, tried once (a model its globs pick, without a route
    // of the configuration). Its health is kept under the model name "".
    std::vector<config::route_config> default_routes_;
    watch_list watches_;  // client watches not yet reading
    // The requests in the attempt loop, for stop_waiting(); each leaves as it ends.
    boost::intrusive::list<exchange_state, boost::intrusive::constant_time_size<false>> in_flight_;
    admission* gate_;
    upstream::usage_sink* ledger_;
    cache_setup cache_;
    guard_setup guards_;
    // The metric series of each (upstream, requested model), found once per worker.
    struct model_series {
        observability::histogram* duration;
        observability::histogram* first_token;
        observability::histogram* input;
        observability::histogram* output;
        observability::counter* from_body;
        observability::counter* from_stream;
        observability::counter* from_estimate;
        observability::counter* from_none;
    };
    model_series& series_of(std::size_t upstream, const std::string& model);
    std::vector<std::map<std::string, model_series, std::less<>>> series_;
    // The price of each (upstream, model it hears), found once per worker (settlement.cpp);
    // nullopt without a price table or a model.
    std::optional<model_price> price_of(std::size_t upstream, std::string_view model);
    const pricing::price_table* prices_;
    std::vector<std::map<std::string, model_price, std::less<>>> priced_;
};

}  // namespace gateway::passthrough
