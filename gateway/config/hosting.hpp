#pragma once

#include "gateway/config/config.hpp"

#include <string_view>

namespace gateway::config {

// The dialect `up` speaks for `model` (the name it hears, after its model_map): its provider's,
// except that Vertex AI serves Claude (claude-*) in Anthropic's Messages dialect beside Gemini's.
// Every choice of adapter, translation or forwarding asks this, not `up.provider` alone.
inline provider_kind dialect_for(const upstream_config& up, std::string_view model) {
    if (up.host == hosting::vertex && model.starts_with("claude-")) return provider_kind::anthropic;
    return up.provider;
}

}  // namespace gateway::config
