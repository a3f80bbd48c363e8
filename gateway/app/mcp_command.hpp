#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::app {

// `contextgate mcp tools (--url URL | --command "CMD ARGS")` prints the server's tools (its
// tools/list answer, all pages) as JSON; `contextgate mcp call (--url URL | --command "CMD ARGS")
// --tool NAME [--params JSON]` calls one and prints its CallToolResult as JSON. Both take
// `--header "Name: value"` (HTTP, repeatable) and `--timeout DURATION` (default 60s). Exit
// status: 0 on success, 1 when the server could not be used or the call failed (isError, a
// JSON-RPC error, a timeout), 2 on usage errors. `args` excludes the leading "mcp".
int run_mcp_command(const std::vector<std::string>& args);

// "cmd 'a b' \"c\" d\\ e" as words, the way a POSIX shell splits them (quotes and backslashes,
// no expansion). nullopt when a quote is not closed.
std::optional<std::vector<std::string>> split_command(std::string_view text);

}  // namespace gateway::app
