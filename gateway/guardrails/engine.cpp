#include "gateway/guardrails/engine.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/observability/metrics.hpp"

#include <algorithm>
#include <stdexcept>

namespace gateway::guardrails {

namespace {

bool any_glob(const std::vector<std::string>& globs, std::string_view text) {
    return std::any_of(globs.begin(), globs.end(),
                       [&](const std::string& g) { return config::glob_match(g, text); });
}

}  // namespace

bool selection::has_detectors() const {
    return std::any_of(items_.begin(), items_.end(),
                       [](const guardrail* g) { return g->rules && !g->rules->empty(); });
}

bool selection::has_external_checks() const {
    return std::any_of(items_.begin(), items_.end(), [](const guardrail* g) {
        return g->config.webhook.has_value() || g->config.model_check.has_value();
    });
}

std::size_t selection::max_match_bytes() const {
    std::size_t most = 0;
    for (const auto* g : items_)
        if (g->rules) most = std::max(most, g->rules->max_match_bytes());
    return most;
}

engine::engine(const std::vector<config::guardrail_config>& guardrails) {
    guardrails_.reserve(guardrails.size());
    for (const auto& c : guardrails) {
        guardrail g{c, std::nullopt};
        if (!c.detect.empty() || !c.regex.empty()) {
            auto built = detection::detectors::make(c.detect, c.regex);
            if (!built) throw std::invalid_argument("guardrail `" + c.name + "`: " + built.error);
            g.rules = std::move(*built.value);
        }
        guardrails_.push_back(std::move(g));
    }
}

selection engine::select(config::guardrail_stage stage, const subject& who) const {
    selection chosen;
    for (const auto& g : guardrails_) {
        const auto& c = g.config;
        if (std::find(c.on.begin(), c.on.end(), stage) == c.on.end()) continue;
        if (!any_glob(c.keys, who.key) && (who.team.empty() || !any_glob(c.keys, who.team)))
            continue;
        if (!c.routes.empty() && !any_glob(c.routes, who.model)) continue;
        chosen.items_.push_back(&g);
    }
    return chosen;
}

outcome engine::check(const selection& chosen, std::string_view text) const {
    outcome out;
    std::vector<detection::hit> masked;
    for (const auto* g : chosen.items()) {
        if (!g->rules) continue;
        for (const auto& h : g->rules->scan(text)) {
            finding f{g->config.name, h.rule, g->config.action, h.begin, h.end};
            out.hits.push_back(f);
            if (f.action == config::guardrail_action::block && !out.blocked_by) out.blocked_by = f;
            if (f.action == config::guardrail_action::mask) masked.push_back(h);
        }
    }
    std::stable_sort(out.hits.begin(), out.hits.end(),
                     [](const finding& a, const finding& b) { return a.begin < b.begin; });
    if (out.blocked_by) {
        out.result = verdict::blocked;
        return out;
    }
    if (masked.empty()) return out;
    // Two guardrails may mask overlapping spans: the one that starts first is replaced, as
    // within one guardrail's scan.
    std::stable_sort(
        masked.begin(), masked.end(),
        [](const detection::hit& a, const detection::hit& b) { return a.begin < b.begin; });
    std::vector<detection::hit> replaced;
    for (const auto& h : masked)
        if (replaced.empty() || h.begin >= replaced.back().end) replaced.push_back(h);
    out.result = verdict::masked;
    out.text = detection::mask(text, replaced);
    return out;
}

outcome engine::check(config::guardrail_stage stage, std::string_view text,
                      const subject& who) const {
    auto chosen = select(stage, who);
    if (chosen.empty()) return {};
    return check(chosen, text);
}

void record(const outcome& result, config::guardrail_stage stage) {
    auto& m = observability::metrics();
    for (const auto& f : result.hits)
        m.guardrail_hits
            .with({f.guardrail, f.rule, config::guardrail_stage_name(stage),
                   config::guardrail_action_name(f.action)})
            .inc();
}

}  // namespace gateway::guardrails
