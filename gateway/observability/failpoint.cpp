#include "gateway/observability/failpoint.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace gateway::observability {

void failpoint(std::string_view point) {
    static const std::string armed = [] {
        const char* value = std::getenv("CONTEXTGATE_FAILPOINT");
        return std::string(value ? value : "");
    }();
    if (!armed.empty() && armed == point) ::kill(::getpid(), SIGKILL);
}

}  // namespace gateway::observability
