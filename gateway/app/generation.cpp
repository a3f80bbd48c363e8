#include "gateway/app/generation.hpp"

#include "gateway/guardrails/engine.hpp"
#include "gateway/guardrails/webhook.hpp"
#include "gateway/io/redis.hpp"
#include "gateway/upstream/aws_credentials.hpp"
#include "gateway/upstream/health_share.hpp"
#include "gateway/upstream/routes.hpp"
#include "gateway/upstream/tls.hpp"
#include "gateway/upstream/token_sources.hpp"

#include <algorithm>
#include <map>

namespace gateway::app {

generation::generation() = default;
generation::~generation() = default;

namespace {

bool caching(const config::gateway_config& config) {
    return std::any_of(config.upstreams.begin(), config.upstreams.end(),
                       [](const auto& u) { return u.cache.ttl.count() > 0; }) ||
           std::any_of(config.routes.begin(), config.routes.end(),
                       [](const auto& r) { return r.cache.ttl.count() > 0; });
}

// Each upstream's and target's health on `before`'s board, taken by `after`'s by upstream name:
// a cooldown or a refused key goes on until it would have ended, and the last error stays shown.
void carry_health(upstream::routing& before, upstream::routing& after,
                  const std::vector<config::upstream_config>& upstreams) {
    std::map<std::string, std::size_t, std::less<>> index;
    for (std::size_t i = 0; i < upstreams.size(); ++i) index.emplace(upstreams[i].name, i);
    const auto& old = before.health();
    for (std::size_t i = 0; i < before.table().upstreams().size(); ++i) {
        auto found = index.find(old.name_of(i));
        if (found == index.end()) continue;
        if (auto seen = old.upstream_of(i)) after.health().carry_upstream(found->second, *seen);
    }
    for (const auto& t : old.snapshot()) {
        auto found = index.find(old.name_of(t.upstream));
        if (found != index.end()) after.health().carry_target(found->second, t);
    }
}

// What a Bedrock upstream's credentials are looked for with: its `aws:` block and its region.
upstream::aws::settings aws_settings(const config::upstream_config& up) {
    upstream::aws::settings s;
    s.upstream = up.name;
    s.region = up.region;
    s.access_key_id = up.aws.access_key_id;
    s.secret_access_key = up.aws.secret_access_key;
    s.session_token = up.aws.session_token;
    s.bearer_token = up.aws.bearer_token;
    return s;
}

}  // namespace

config::parsed<std::shared_ptr<generation>> build_generation(config::gateway_config config,
                                                             const generation* before,
                                                             const std::string& replica) {
    using result = config::parsed<std::shared_ptr<generation>>;
    auto g = std::make_shared<generation>();
    g->number = before ? before->number + 1 : 1;
    g->config = std::move(config);
    const auto& c = g->config;
    for (const auto& up : c.upstreams) {
        if (!up.endpoint.tls) {
            g->tls_contexts.push_back(nullptr);
            continue;
        }
        auto context = upstream::make_client_context(up);
        if (!context) return result::fail(context.error);
        g->tls_contexts.push_back(*context.value);
    }
    for (const auto& up : c.upstreams) {
        g->aws_credentials.push_back(nullptr);
        if (up.provider != config::provider_kind::bedrock) continue;
        auto found =
            upstream::aws::find_source(aws_settings(up), upstream::aws::process_environment());
        if (!found) return result::fail(c.source + ": upstream `" + up.name + "`: " + found.error);
        g->aws_credentials.back() = std::make_shared<upstream::aws::credentials_provider>(
            std::move(*found.value), aws_settings(up));
    }
    for (const auto& up : c.upstreams) {
        auto tokens = upstream::make_token_source(up, upstream::process_environment());
        if (!tokens)
            return result::fail(c.source + ": upstream `" + up.name + "`: " + tokens.error);
        g->token_sources.push_back(std::move(*tokens.value));
    }
    auto prices = pricing::build_prices(c.pricing);
    if (!prices) return result::fail(prices.error);
    g->prices = std::move(*prices.value);
    g->guardrails = std::make_shared<const guardrails::engine>(c.guardrails);
    g->webhooks = std::make_shared<guardrails::webhooks>(c.guardrails);
    g->routing =
        std::make_unique<upstream::routing>(c.upstreams, c.routes, c.health, g->token_sources);
    if (before) carry_health(*before->routing, *g->routing, c.upstreams);
    if (caching(c)) {
        // The kept answers stay while the cache's own settings do.
        bool same = false;
        if (before && before->cache) {
            auto differ = config::differing_sections(before->config, c);
            same = std::find(differ.begin(), differ.end(), "cache") == differ.end();
        }
        g->cache =
            same ? before->cache
                 : std::shared_ptr<cache::response_cache>(cache::make_cache(c.cache, c.limits));
    }
    if (c.limits.backend == config::limits_backend::redis) {
        auto address = io::parse_redis_url(c.limits.redis_url);
        if (!address) return result::fail(c.source + ": limits.redis_url: " + address.error);
        // Replicas that share limits share the health of their routes' targets too.
        g->health_share = std::make_unique<upstream::health_share>(
            *address.value, g->routing->health(), c.upstreams, replica);
    }
    return {std::move(g), {}};
}

std::vector<std::string> keep_restart_sections(const config::gateway_config& running,
                                               config::gateway_config& next) {
    std::vector<std::string> kept;
    for (const auto& name : config::differing_sections(running, next)) {
        if (name == "upstreams" || name == "routes" || name == "health" || name == "cache" ||
            name == "admin" || name == "pricing")
            continue;
        kept.push_back(name);
    }
    auto keep = [&](std::string_view name, auto member) {
        if (std::find(kept.begin(), kept.end(), name) != kept.end()) next.*member = running.*member;
    };
    using c = config::gateway_config;
    keep("server", &c::server);
    keep("logging", &c::logging);
    keep("metrics", &c::metrics);
    keep("limits", &c::limits);
    keep("tracing", &c::tracing);
    keep("context", &c::context);
    keep("mcp_servers", &c::mcp_servers);
    keep("mcp", &c::mcp);
    keep("auth", &c::auth);  // sign-in's client and sessions are made once, at the start
    // The admin API is there or not from the start, with its key; the keys change live.
    if (next.admin.api_key != running.admin.api_key) {
        kept.push_back("admin.api_key");
        next.admin.api_key = running.admin.api_key;
    }
    return kept;
}

}  // namespace gateway::app
