#pragma once

#include <string>
#include <string_view>

namespace gateway::mcp {

// What every MCP tool's name starts with in the catalogue; no built-in tool does.
inline constexpr std::string_view tool_prefix = "mcp__";

// The name the model sees for `tool` of MCP server `server`: "mcp__<server>__<tool>" with only
// [A-Za-z0-9_-] and at most 64 characters, which every provider's tool calling accepts. A tool
// name that had to change (other characters replaced by `_`, or cut to fit) gets `_` and eight
// hex digits of the SHA-256 of the original appended: stable across restarts, and two tools
// that differ only in the replaced characters stay apart. `server` is a configured name (already
// within the alphabet).
std::string exposed_name(std::string_view server, std::string_view tool);

}  // namespace gateway::mcp
