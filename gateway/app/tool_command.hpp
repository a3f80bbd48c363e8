#pragma once

#include <string>
#include <vector>

namespace gateway::app {

// `contextgate tool list [--role reader|editor]` prints the catalogue as the model sees it.
// `contextgate tool run NAME --workspace DIR --params JSON [--json] [--preview]` runs one tool
// with no approval step (the person at the shell approves) and prints the model-facing text, or
// with --json the whole result. Exit status: 0 when the tool succeeded, 1 when it failed, 2 on
// usage errors. `args` excludes the leading "tool".
int run_tool_command(const std::vector<std::string>& args);

}  // namespace gateway::app
