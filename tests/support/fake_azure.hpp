#pragma once

// The fake upstream's Azure OpenAI resource: OpenAI's API below /openai, as the deployments API
// (/openai/deployments/{deployment}/{operation}?api-version=…) and the v1 API (/openai/v1/…),
// with Azure's key header, its deployments and its error shapes. Written from Azure OpenAI's
// REST reference; a request it takes is answered as the OpenAI fake answers the same call.

#include "tests/support/fake_providers.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::testing::fake_azure {

// The resource's key (sent as `api-key`), the api-versions it knows, and its deployments, each
// serving one model.
inline constexpr std::string_view api_key = "fake-azure-openai-key-0123456789";
inline constexpr std::string_view api_versions[] = {"2024-10-21", "2025-04-01-preview"};
struct deployment {
    std::string_view name;
    std::string_view model;
};
inline constexpr deployment deployments[] = {
    {"prod-gpt4o", "gpt-4o"}, {"gpt-4o-mini", "gpt-4o-mini"}, {"embed", "text-embedding-3-small"}};

// Text that makes the resource's content filter refuse the prompt (400 code content_filter),
// and text that makes it cut the answer (finish_reason content_filter).
inline constexpr std::string_view filtered_prompt = "fake-azure-filter-prompt";
inline constexpr std::string_view filtered_answer = "fake-azure-filter-answer";

// Whether an Entra ID access token is good: "" when it is, else why not. Null in fake_options:
// no Bearer token is taken.
using token_check = std::function<std::string(std::string_view token)>;

// A request the resource takes: the OpenAI path it stands for (`/v1/chat/completions`, with the
// client's query less api-version), the deployment's model (empty for a call that names none).
struct accepted {
    std::string openai_target;
    std::string model;
};

// Reads an /openai/… request: its refusal as Azure words it (an `api-key` that is not the
// resource's, or no credential: 401; `Authorization: Bearer` that `check` does not take, a key
// among them: 401; the deployments API without api-version or with one it does not know: 400;
// an unknown deployment: 404 DeploymentNotFound; a prompt its filter refuses: 400
// content_filter), else what it stands for.
struct read_result {
    std::optional<fake_providers::answer> refusal;
    accepted call;
};
read_result read(const received_request& r, const token_check& check);

// Azure's 429: its error body with retry-after-ms (1500) and retry-after (2).
fake_providers::answer throttled();

}  // namespace gateway::testing::fake_azure
