#pragma once

#include "gateway/cache/response_cache.hpp"
#include "gateway/config/config.hpp"
#include "gateway/pricing/price_table.hpp"

#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gateway::upstream {
class health_share;
class routing;
namespace aws {
class credentials_provider;
}
class token_source;
}  // namespace gateway::upstream

namespace gateway::guardrails {
class engine;
class webhooks;
}  // namespace gateway::guardrails

namespace gateway::app {

// What one configuration builds to serve model requests: its upstreams' TLS contexts, the routes
// and their health, the response cache, the prices, and the health shared with other replicas. A
// reload (server::reload) builds the next one, and each /v1 worker, the agent's model calls and the
// admin API switch to it for what starts from then on; a request in flight holds the one it
// started with, which ends when the last such request does. Immutable once built, but for the
// health its requests report.
struct generation {
    std::uint64_t number = 0;  // 1 at start, one more per reload
    config::gateway_config config;
    std::vector<std::shared_ptr<boost::asio::ssl::context>>
        tls_contexts;  // per upstream; null: plain
    // Per upstream: a Bedrock upstream's AWS credentials, fetched and refreshed on a thread of
    // their own; null for the others. Stopped (their thread joined) when the last of the
    // generation's users lets go of them.
    std::vector<std::shared_ptr<upstream::aws::credentials_provider>> aws_credentials;
    // Per upstream: a Vertex AI or Entra ID Azure upstream's access tokens, fetched and refreshed
    // the same way; null for the others. Stopped as the AWS credentials are.
    std::vector<std::shared_ptr<upstream::token_source>> token_sources;
    std::unique_ptr<upstream::routing> routing;
    std::shared_ptr<cache::response_cache> cache;  // null: no upstream or route caches
    // The shipped table or pricing.file, with pricing.overrides: read again at each reload.
    std::shared_ptr<const pricing::price_table> prices;
    // The configured guardrails (empty without `guardrails:`) and their webhooks' circuit
    // breakers, which a reload starts afresh.
    std::shared_ptr<const guardrails::engine> guardrails;
    std::shared_ptr<guardrails::webhooks> webhooks;
    // limits.backend: redis. Declared after `routing`, so it stops before the board it tells goes.
    std::unique_ptr<upstream::health_share> health_share;

    generation();
    ~generation();
    generation(const generation&) = delete;
    generation& operator=(const generation&) = delete;
};

// Builds the generation of `config`. `before` (the running one, or null at start) gives what
// carries over: each target's health, by upstream name and model, and the cache when its section
// is unchanged. `replica`: this process's name on the shared health channel. The error names
// what failed (a TLS file, a cloud upstream's credentials or key file, the Redis URL, the price
// table's file and line).
config::parsed<std::shared_ptr<generation>> build_generation(config::gateway_config config,
                                                             const generation* before,
                                                             const std::string& replica);

// The sections a reload cannot change in a running process (listen address, workers, the store,
// MCP, tracing, …), named as the file names them, where `next` differs from `running`; `next`
// takes the running values of those, so that a reload changes only what it can.
std::vector<std::string> keep_restart_sections(const config::gateway_config& running,
                                               config::gateway_config& next);

}  // namespace gateway::app
