#pragma once

// The configured guardrails of one configuration generation (docs/operations.md "Guardrails"):
// which apply to a request, and the synchronous check of a text with their detectors. The
// request path, the answer's relay (stream_guard), the agent's tool results and the webhook
// (webhook.hpp) call it; it does no I/O. A gateway without `guardrails:` has an empty engine,
// and a caller that sees empty() (or an empty selection) does nothing more per request: no copy,
// no scan.
#include "gateway/config/config.hpp"
#include "gateway/detection/detectors.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::guardrails {

// Who a text belongs to, as selection reads it. Empty views are fine (no virtual key: the key
// globs are matched against "", which only `*` matches).
struct subject {
    std::string_view key;    // the virtual key's name
    std::string_view team;   // its team's name
    std::string_view model;  // the route's model: the name the client asked for
};

// One configured guardrail, built: its settings and its detectors (none when it is only a
// webhook).
struct guardrail {
    config::guardrail_config config;
    std::optional<detection::detectors> rules;
};

// A hit of one guardrail, by name only: what metrics, logs and traces may carry.
struct finding {
    std::string_view guardrail;
    std::string_view rule;
    config::guardrail_action action;
    std::size_t begin = 0;  // the span in the checked text
    std::size_t end = 0;
};

enum class verdict {
    pass,     // nothing to change (no hit, or `log` hits only)
    masked,   // `text` is the text to send on
    blocked,  // refuse: `blocked_by` says which guardrail and rule
};

struct outcome {
    verdict result = verdict::pass;
    std::string text;  // masked: the text with `[REDACTED:<rule>]` in place of each mask hit
    std::optional<finding> blocked_by;  // blocked: the hit that blocked
    std::vector<finding> hits;          // every hit of every guardrail that ran, in order
};

// The guardrails that apply to one stage of one request, in configuration order: those with
// detectors run in check(); those with a webhook or a model check are asked by the stage.
class selection {
public:
    bool empty() const { return items_.empty(); }
    const std::vector<const guardrail*>& items() const { return items_; }
    // Whether any selected guardrail has detectors (check() has work), or a webhook or a model
    // check to ask.
    bool has_detectors() const;
    bool has_external_checks() const;
    // The longest match any selected detector can report: a stream's hold-back bound.
    std::size_t max_match_bytes() const;

private:
    friend class engine;
    std::vector<const guardrail*> items_;
};

// Immutable once built; every const member is safe from any thread.
class engine {
public:
    engine() = default;  // no guardrails
    // Builds each guardrail's detectors. The configuration loader has already checked the
    // sets and patterns, so a failure here is a bug: std::invalid_argument naming the rule.
    explicit engine(const std::vector<config::guardrail_config>& guardrails);

    bool empty() const { return guardrails_.empty(); }

    // The guardrails whose `on` holds `stage`, whose `keys` globs match the key's name or its
    // team's, and whose `routes` globs (none: every route) match the model.
    selection select(config::guardrail_stage stage, const subject& who) const;

    // Scans `text` with every selected guardrail's detectors. Any `block` hit blocks (the first
    // in configuration order, then in the text); otherwise the `mask` hits are masked, one
    // replacement per span where guardrails overlap; `log` hits only appear in `hits`.
    // Counts nothing: record() does, once the caller knows the hits are final. `text` is what
    // the model or the client reads (a message's text decoded from its JSON string), not raw
    // JSON: a span may start right after a backslash of an escape.
    outcome check(const selection& chosen, std::string_view text) const;
    // select() and check() in one call.
    outcome check(config::guardrail_stage stage, std::string_view text, const subject& who) const;

private:
    std::vector<guardrail> guardrails_;
};

// Counts each hit in contextgate_guardrail_hits_total{guardrail, rule, stage, action}. Never
// logs or counts the matched text.
void record(const outcome& result, config::guardrail_stage stage);

}  // namespace gateway::guardrails
