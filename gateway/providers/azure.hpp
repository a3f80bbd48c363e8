#pragma once

#include "gateway/config/config.hpp"

#include <string>
#include <string_view>
#include <utility>

// Azure OpenAI: OpenAI's dialect under Azure's URLs and key header. The deployments API names a
// deployment in the path and needs an `api-version` in the query; the v1 API (`api_version: v1`)
// is OpenAI's paths below /openai/v1 with the model in the body.
namespace gateway::providers::azure {

// The field an Azure upstream's key goes in, and what precedes the key there.
inline constexpr std::pair<std::string_view, std::string_view> key_field{"api-key", ""};

// The deployment that serves `model` on `up`: its `deployments` entry, else the model's own name.
std::string_view deployment_of(const config::upstream_config& up, std::string_view model);

// The request target `up` is sent below its base path for `target`, a path of OpenAI's API below
// /v1 with its query (`/chat/completions`, `/embeddings?x=1`), asking for `model` (the name the
// upstream hears):
// - the v1 API: /openai/v1{target};
// - the deployments API: /openai/deployments/{deployment}{path}?api-version={v} for a call that
//   names a model, /openai{path}?api-version={v} for the rest and for
//   /responses (Azure's Responses API is not below a deployment: the body names it). The client's
//   own api-version, if any, gives way to the upstream's; the rest of its query is kept.
// Pure.
std::string target(const config::upstream_config& up, std::string_view model,
                   std::string_view target);

}  // namespace gateway::providers::azure
