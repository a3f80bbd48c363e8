#pragma once

#include <string>

namespace gateway::detection {

// A custom detector: a name (shown in `[REDACTED:<name>]`, metrics and logs) and an RE2 pattern.
struct custom_rule {
    std::string name;
    std::string pattern;
};

}  // namespace gateway::detection
