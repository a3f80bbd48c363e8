#pragma once

#include <string_view>

namespace gateway::observability {

// A named point where a test of crash recovery can kill the process: when the environment
// variable CONTEXTGATE_FAILPOINT equals `point` at start, the process sends itself SIGKILL there,
// as an OOM kill or a power cut would, with nothing flushed or unwound. Costs one comparison
// otherwise. The points are listed in docs/architecture.md.
void failpoint(std::string_view point);

}  // namespace gateway::observability
