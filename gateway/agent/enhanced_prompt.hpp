#pragma once

#include "gateway/tools/tool.hpp"

#include <string>

namespace gateway::prompts {
struct prompt;
}
namespace gateway::tools {
class registry;
}

namespace gateway::agent {

// The system prompt the agent loop sends: the base prompt, the tool catalogue for `role` grouped
// by category (deterministic), the reply protocol with one example and what `terminate` means,
// and short working guidance. The same inputs always give the same bytes.
std::string enhanced_prompt(const prompts::prompt& base, const tools::registry& tools,
                            tools::role role);

// The system prompt for native tool calling: the base prompt, how to work with the tools the
// provider hands the model (no catalogue and no JSON protocol: the tools travel with the
// request), and the same working guidance.
std::string native_prompt(const prompts::prompt& base);

}  // namespace gateway::agent
