#include "gateway/agent/system_prompts.hpp"

#include "gateway/agent/enhanced_prompt.hpp"

namespace gateway::agent {

namespace {

constexpr std::string_view schema_note =
    "\n\nYour replies are constrained to JSON. A tool call is the object described above; a final "
    "answer is {\"answer\": \"<your answer>\"}.";

}  // namespace

system_prompts::system_prompts(std::vector<prompts::prompt> prompts, const tools::registry& tools)
    : prompts_(std::move(prompts)), tools_(tools) {}

const prompts::prompt* system_prompts::find(std::string_view id) const {
    for (const auto& p : prompts_)
        if (p.id == id) return &p;
    return nullptr;
}

std::string system_prompts::build(std::string_view id, tools::role role, bool json_schema) const {
    const auto* base = find(id);
    prompts::prompt fallback{std::string(id), "", "", "", ""};
    auto text = enhanced_prompt(base ? *base : fallback, tools_, role);
    if (json_schema) text += schema_note;
    return text;
}

std::string system_prompts::build(std::string_view id, tools::role role,
                                  const config::upstream_config& upstream) const {
    if (upstream.tool_calling != config::tool_calling_mode::native)
        return build(id, role, upstream.json_schema);
    const auto* base = find(id);
    prompts::prompt fallback{std::string(id), "", "", "", ""};
    return native_prompt(base ? *base : fallback);
}

}  // namespace gateway::agent
