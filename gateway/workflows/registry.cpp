#include "gateway/workflows/registry.hpp"

#include <filesystem>

namespace gateway::workflows {

registry::registry(std::string folder, const tools::registry& tools, bool optional)
    : folder_(std::move(folder)), tools_(tools), optional_(optional) {}

std::string registry::reload() {
    std::error_code ec;
    if (optional_ && !std::filesystem::exists(folder_, ec)) return {};
    auto loaded = load_folder(folder_, tools_);
    if (!loaded) return loaded.error;
    auto next = std::make_shared<const std::vector<workflow>>(std::move(*loaded.value));
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
    return {};
}

registry::snapshot registry::all() const {
    std::lock_guard lock(mutex_);
    return current_;
}

const workflow* registry::find(const snapshot& in, std::string_view id) {
    for (const auto& w : *in)
        if (w.id == id) return &w;
    return nullptr;
}

}  // namespace gateway::workflows
