#pragma once

// The opt-in model-based check (docs/operations.md "Guardrails"): a guardrail with
// `model_check: {model, prompt, timeout, fail}` puts the text to a model the gateway serves (a
// route's or an upstream's, through the same attempt loop as every model call) with a moderation
// prompt, and the model answers `allow` or `block`. Anything else it says, no answer within
// `timeout`, or a failed call is decided by `fail`: open allows, closed blocks. The verdict comes
// back in the webhooks' shape, so the stages treat both external checks alike.
#include "gateway/config/config.hpp"
#include "gateway/guardrails/webhook.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gateway::guardrails {

// The moderation instructions when a model_check gives no `prompt`.
extern const std::string_view default_moderation_prompt;

// What a model said, or why it said nothing.
struct model_said {
    std::string text;
    std::string failure;  // not empty: no answer (the call failed, timed out, was refused)
};

// What a model check needs of the gateway's model calls: one answer to `instructions` (the
// system prompt) and `text` (the user's message) from `model`, within `timeout`. The composition
// root implements it over the agent's model port (app/moderation.hpp); tests may script it.
// Thread-safe: the /v1 workers call it at once.
class model_caller {
public:
    virtual ~model_caller() = default;
    virtual net::awaitable<model_said> answer(std::string model, std::string instructions,
                                              std::string text, config::duration timeout) = 0;
};

// allow or block from a model's answer, read strictly: the one word, in any case, with
// surrounding whitespace or a final period; nullopt for anything else.
std::optional<webhook_answer::action> read_model_verdict(std::string_view said);

// Asks `g.model_check`'s model (which must be set) about `text`. `models` null (no model calls
// in this process) is a failure that `fail` decides, as a garbled or late answer is.
net::awaitable<webhook_answer> ask_model(model_caller* models, const config::guardrail_config& g,
                                         std::string_view text);

}  // namespace gateway::guardrails
