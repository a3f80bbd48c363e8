#pragma once

#include "gateway/providers/adapter.hpp"

namespace gateway::providers::anthropic {

// Anthropic Messages (`<base>/v1/messages`, key in x-api-key, anthropic-version 2023-06-01).
// The encoder keeps the API's rules: the system prompt is a top-level field; roles alternate
// (same-role turns are merged); every tool_use is answered by its tool_result at the start of
// the very next user message, all results of a turn in one message; `tools` goes with every
// request whose history holds tool blocks (declared from the calls when the client sent none);
// `max_tokens` is always set (`default_max_tokens` when the request has none).
const providers::adapter& adapter();

constexpr std::int64_t default_max_tokens = 8192;

}  // namespace gateway::providers::anthropic
