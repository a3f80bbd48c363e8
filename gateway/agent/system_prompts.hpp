#pragma once

#include "gateway/config/config.hpp"
#include "gateway/prompts/prompt_library.hpp"
#include "gateway/tools/registry.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gateway::agent {

// The base system prompts (prompts/*.md) and what the agent loop sends built from them: the
// base prompt enhanced with the tool catalogue for a role and the reply protocol, plus a note on
// JSON replies for upstreams that constrain them. Immutable, so shared freely between threads.
class system_prompts {
public:
    system_prompts(std::vector<prompts::prompt> prompts, const tools::registry& tools);

    const std::vector<prompts::prompt>& all() const { return prompts_; }
    const prompts::prompt* find(std::string_view id) const;

    // The system prompt for prompt `id` (an unknown id: the catalogue and protocol alone), the
    // `role`'s tools, and an upstream that does (`json_schema`) or not constrain replies to JSON.
    std::string build(std::string_view id, tools::role role, bool json_schema) const;
    // What the agent loop sends to `upstream`: the above for the JSON protocol, or, with native
    // tool calling, the base prompt and how to work with tools (agent::native_prompt).
    std::string build(std::string_view id, tools::role role,
                      const config::upstream_config& upstream) const;

private:
    std::vector<prompts::prompt> prompts_;
    const tools::registry& tools_;
};

}  // namespace gateway::agent
