#pragma once

#include <functional>
#include <optional>
#include <string>

namespace gateway::upstream {

// The environment as the cloud credential chains read it: a variable's value, or nullopt when it
// is unset. Injected, so that tests never read the machine's own variables, ~/.aws or a key file
// GOOGLE_APPLICATION_CREDENTIALS names.
using environment = std::function<std::optional<std::string>(const std::string& name)>;

// The process's own environment (std::getenv).
environment process_environment();

}  // namespace gateway::upstream
