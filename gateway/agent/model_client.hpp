#pragma once

#include "gateway/agent/model_port.hpp"
#include "gateway/config/config.hpp"
#include "gateway/pricing/price_table.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/routes.hpp"
#include "gateway/upstream/usage_sink.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gateway::agent {

namespace net = boost::asio;

// The model port over HTTP: model turns through the same upstream connections, routes and
// authentication as the passthrough (upstream::start_exchange). A model's route (docs/routing.md)
// gives the targets: a failed attempt (a failed connection, 408, 429, 5xx) goes to the next
// target at once, or, when only the same one is left, after an exponential backoff from 0.5 s or
// the upstream's `retry-after-ms` / `retry-after` (at most 60 s); a model without a route is
// tried once and retried `model_retries` times on its upstream. The attempts go through the one
// attempt loop (upstream::run_attempts) that /v1 uses too: a 401 to the gateway's key leaves a
// route's target out for health.max_cooldown; another 4xx is the request's own failure, except a
// context-window refusal, which moves to the route's on_context_window. Every attempt is said in
// its target's dialect. The answer is settled as /v1 settles one: its usage (or the estimate of
// it) priced at the answering upstream's price for the model it heard, counted in the metrics
// and the usage ledger (key "context").
// One client per executor: its pools are not thread-safe.
class model_client final : public model_port {
public:
    // `upstreams`, `routing` and `prices` as the /v1 face has them, from one configuration
    // generation that outlives the client (null `prices`: every model is unpriced);
    // `model_retries`: context.model_retries.
    model_client(
        const std::vector<config::upstream_config>& upstreams, unsigned model_retries,
        upstream::routing& routing, const pricing::price_table* prices,
        const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
        const std::vector<std::shared_ptr<upstream::aws::credentials_provider>>& aws_credentials,
        const std::vector<std::shared_ptr<upstream::token_source>>& token_sources,
        net::any_io_executor executor, upstream::usage_sink* ledger = nullptr);

    // The request in the dialect of the upstream `request.model` is routed to (OpenAI Chat
    // Completions, Anthropic Messages or Gemini), the reply decoded by its adapter: read by its
    // Content-Type, so that a whole JSON answer to a streamed request is taken as it is.
    // `request_id` goes out as x-request-id.
    net::awaitable<model_result<model_answer>> converse(
        providers::request request, std::string request_id, call_canceller& cancel,
        retry_hook on_retry, text_hook on_text = {},
        const observability::trace_context* trace = nullptr) override;

    config::upstream_config upstream_for(std::string_view model) const override;

    // Closes the pooled connections and pools none from now on (the engine is stopping).
    void shutdown() override;

private:
    // One call's side of the attempt loop (model_client.cpp).
    class call_attempts;
    struct attempt_result;
    // How an answer is read: its dialect's decoder, and who is told its text (nobody: the
    // request was not streamed).
    struct streaming {
        const providers::adapter* adapter = nullptr;
        text_hook on_text;
    };
    net::awaitable<attempt_result> attempt(upstream::pool& pool, const std::string& head,
                                           const std::string& body, call_canceller& cancel,
                                           const streaming& stream, config::duration first_byte,
                                           std::function<bool()> resend);

    // Settles a model call that succeeded: what it is charged (`request_bytes`: the request's
    // body, for the estimate when the upstream reported no usage), then the metrics and the
    // usage ledger (key "context").
    settled_call account(const config::upstream_config& up, const std::string& model,
                         const providers::reply& reply, std::size_t request_bytes,
                         std::chrono::steady_clock::time_point started);

    const std::vector<config::upstream_config>& upstreams_;
    unsigned model_retries_;
    upstream::routing& routing_;
    const pricing::price_table* prices_;
    net::any_io_executor executor_;
    upstream::usage_sink* ledger_;
    std::vector<upstream::pool> pools_;
};

}  // namespace gateway::agent
