#include "gateway/upstream/environment.hpp"

#include <cstdlib>

namespace gateway::upstream {

environment process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
}

}  // namespace gateway::upstream
