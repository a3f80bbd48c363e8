#pragma once

#include "gateway/config/config.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// LiteLLM's price map (`model_prices_and_context_window.json`: per-token USD prices by model)
// made into a price table of ours (docs/operations.md "Prices and cost", "Importing LiteLLM's
// prices"), for `contextgate prices import`. Pure: text in, a price list and a report out.
namespace gateway::pricing {

// The LiteLLM providers taken when none are named: those whose own API a contextgate upstream
// speaks under the provider's own model names (OpenAI, Anthropic, Gemini's API). The others
// sell the same models at their own rates (Azure, Bedrock, Vertex AI, OpenRouter…), and a table
// holds one price per model name.
inline const std::vector<std::string> default_litellm_providers{"openai", "text-completion-openai",
                                                                "anthropic", "gemini"};

struct litellm_options {
    // The `litellm_provider`s whose entries are taken; where two give a price to the same name,
    // the one named first wins (and, within a provider, a key written without a provider prefix).
    std::vector<std::string> providers = default_litellm_providers;
    std::string date;  // the table's `date`
};

// What was left out of the map, and why; counts are of the map's entries.
struct litellm_report {
    std::size_t entries = 0;  // the map's top-level members
    std::size_t kept = 0;
    std::size_t not_models = 0;  // sample_spec, and members with no `litellm_provider`
    std::map<std::string, std::size_t> other_providers;  // by litellm_provider: not chosen
    // By mode ("" for none) among the chosen providers': no chat, completion or responses model.
    std::map<std::string, std::size_t> other_modes;
    std::size_t no_token_prices = 0;     // a text model without input_cost_per_token and output_…
    std::vector<std::string> unusable;   // "key: why" (a price not a number >= 0, a bad name)
    std::size_t duplicates = 0;          // names already kept (the first wins)
    std::vector<std::string> differing;  // the duplicates among them whose price differs
    std::size_t free = 0;                // kept with input and output at 0, as the file gives them
    std::size_t extra_tiers = 0;  // kept with more than one long-context tier: the lowest taken
    // Rates of kept entries the table has no field for (audio, images, batch, priority…), by
    // LiteLLM's field name: how many kept entries have one.
    std::map<std::string, std::size_t> not_carried;
};

struct litellm_import {
    config::price_list prices;  // sorted by model name
    litellm_report report;
};

// Reads LiteLLM's map from `json` (the file's text). Each kept entry: the key less a prefix that
// names its provider (`gemini/gemini-2.5-pro` -> `gemini-2.5-pro`; OpenAI's `ft:BASE` becomes
// the glob `ft:BASE:*`, the fine-tuned models of BASE); its rates per 1M tokens, converted
// exactly (3e-06 per token is 3); its long-context tier (`…_above_200k_tokens`) with the base
// rate of each kind the tier does not give, as LiteLLM charges it; `source` the map. Fails,
// naming the line and column, on text that is no JSON, and on JSON that is not LiteLLM's map
// (not an object, or no member with a `litellm_provider`).
config::parsed<litellm_import> import_litellm(std::string_view json,
                                              const litellm_options& options);

// `per_token` USD per token as USD per 1M tokens, exactly as decimals: the shortest decimal
// that reads back as `per_token`, its point moved six places. Nullopt when the result, printed
// in its shortest form and moved back, would not read as `per_token` again (never seen; checked).
std::optional<double> per_million(double per_token);

}  // namespace gateway::pricing
