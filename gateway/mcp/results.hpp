#pragma once

#include "gateway/tools/tool.hpp"

#include <boost/json/value.hpp>

#include <cstddef>

namespace gateway::mcp {

// An MCP `CallToolResult` as a tool result. Text content goes to the model as it is; images,
// audio, resource links and embedded binary resources are described (type, MIME type, size,
// URI), embedded text resources given with their URI. `isError: true` is the tool error
// MCP_TOOL_ERROR with the server's text. `structuredContent` is kept under data.structured (and
// given to the model when there is no text). The model's text is capped at `max_bytes`, and so
// is the structured copy (left out when larger). A result that is not an object is MCP_ERROR.
tools::tool_result to_tool_result(const boost::json::value& result, std::size_t max_bytes);

}  // namespace gateway::mcp
