#pragma once

#include <string>
#include <vector>

namespace gateway::app {

// The command line: `serve`, `check-config`, `tool`, `mcp`, `prices`, `--help`, `--version`.
// Returns the exit status; usage errors print the usage to stderr and return 2.
int run_cli(const std::vector<std::string>& args);

}  // namespace gateway::app
