// The sections of routes, their targets, the response cache and health, declared once.
#include "gateway/config/field_kinds.hpp"

namespace gateway::config {

// The field kinds, and through them the schema's own (field_kinds uses schema).
using namespace field_kinds;

const fields<route_target>& route_target_fields() {
    using S = route_target;
    static const fields<S> all{
        text_field("upstream", &S::upstream, "an upstream's name"),
        text_field("model", &S::model, "the name that upstream hears; empty: the client's"),
        count_field("weight", &S::weight, 1, 1'000'000, "its share with strategy: weighted"),
    };
    return all;
}

namespace {

// A list of route targets, each read through route_target_fields(); `upstream` is required.
template <class S>
field<S> targets_field(std::string_view name, std::vector<route_target> S::*m,
                       std::string_view about, bool required) {
    return {name, about,
            [name, m, required](const yaml_reader& r, const YAML::Node& n, std::string_view section,
                                S& s) {
                auto label = std::string(section) + "." + std::string(name);
                if (!n.IsSequence() || (required && n.size() == 0))
                    r.fail(n, "`" + label + "` must be a " + (required ? "non-empty " : "") +
                                  "list of {upstream, model, weight}");
                for (std::size_t i = 0; i < n.size(); ++i) {
                    auto at = label + "[" + std::to_string(i) + "]";
                    if (n[i].IsMap() && !n[i]["upstream"])
                        r.fail(n[i], at + ": `upstream` is required");
                    route_target t;
                    read(r, n[i], at, route_target_fields(), t);
                    (s.*m).push_back(std::move(t));
                }
            },
            [m](const S& s) {
                std::string out = "[";
                for (const auto& t : s.*m)
                    out += (out.size() > 1 ? ", " : "") + flow(t, route_target_fields());
                return out + "]";
            }};
}

}  // namespace

const fields<route_config>& route_fields() {
    using S = route_config;
    static const fields<S> all{
        text_field("model", &S::model, "the client's model name, or a glob"),
        choice_field<S, route_strategy>(
            "strategy", &S::strategy,
            {{route_strategy_name(route_strategy::priority), route_strategy::priority},
             {route_strategy_name(route_strategy::weighted), route_strategy::weighted},
             {route_strategy_name(route_strategy::least_busy), route_strategy::least_busy},
             {route_strategy_name(route_strategy::latency), route_strategy::latency}},
            "priority | weighted | least_busy | latency"),
        targets_field("targets", &S::targets, "where its requests may go", true),
        count_field("max_attempts", &S::max_attempts, 1, 20,
                    "retries and fallbacks together, never more"),
        duration_field("first_byte_timeout", &S::first_byte_timeout,
                       "per attempt: request sent -> response head (0: the upstream's)"),
        duration_field("deadline", &S::deadline, "the whole request, across attempts (0: none)"),
        targets_field("on_context_window", &S::on_context_window,
                      "targets for a request refused as too long for the context window", false),
        cache_policy_field(&S::cache),
    };
    return all;
}

const fields<cache_policy>& cache_policy_fields() {
    using S = cache_policy;
    static const fields<S> all{
        duration_field("ttl", &S::ttl, "how long an answer is served from the cache", true),
    };
    return all;
}

const fields<cache_config>& cache_fields() {
    using S = cache_config;
    static const fields<S> all{
        choice_field<S, cache_backend>(
            "backend", &S::backend,
            {{"memory", cache_backend::memory}, {"redis", cache_backend::redis}},
            "memory (one process) | redis (shared)", "cache.backend"),
        size_field("max_bytes", &S::max_bytes, "memory: the least recently used go past this"),
        size_field("max_entry_bytes", &S::max_entry_bytes, "a larger answer is not stored"),
        text_field("redis_url", &S::redis_url, "redis: \"\" takes limits.redis_url",
                   mask_url_password),
        bool_field("shared", &S::shared, "one namespace for every caller"),
    };
    return all;
}

const fields<health_config>& health_fields() {
    using S = health_config;
    static const fields<S> all{
        duration_field("cooldown", &S::cooldown, "a target that failed is skipped this long", true),
        duration_field("max_cooldown", &S::max_cooldown,
                       "the cooldown doubles while a target keeps failing, up to this", true),
        duration_field("probe_interval", &S::probe_interval,
                       "every upstream is asked for its model list this often (0: no probes)"),
        duration_field("probe_timeout", &S::probe_timeout, "a probe's answer head within this",
                       true),
    };
    return all;
}

}  // namespace gateway::config
