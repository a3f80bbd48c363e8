#pragma once

// The stable error codes of tool results (tool_result::error_code) and of the sandbox. Models,
// the API and tests branch on them: never rename one. docs/tools.md describes each.
namespace gateway::tools::code {

inline constexpr const char* path_outside_workspace = "PATH_OUTSIDE_WORKSPACE";
inline constexpr const char* not_found = "NOT_FOUND";
inline constexpr const char* not_a_regular_file = "NOT_A_REGULAR_FILE";
inline constexpr const char* not_a_directory = "NOT_A_DIRECTORY";
inline constexpr const char* io_error = "IO_ERROR";
inline constexpr const char* file_too_large = "FILE_TOO_LARGE";
inline constexpr const char* binary_file = "BINARY_FILE";
inline constexpr const char* file_exists = "FILE_EXISTS";
inline constexpr const char* no_match = "NO_MATCH";
inline constexpr const char* ambiguous_match = "AMBIGUOUS_MATCH";
inline constexpr const char* no_change = "NO_CHANGE";
inline constexpr const char* invalid_range = "INVALID_RANGE";
inline constexpr const char* stale_lines = "STALE_LINES";
inline constexpr const char* invalid_regex = "INVALID_REGEX";
inline constexpr const char* invalid_pattern = "INVALID_PATTERN";
inline constexpr const char* invalid_parameters = "INVALID_PARAMETERS";
inline constexpr const char* unknown_tool = "UNKNOWN_TOOL";
inline constexpr const char* permission_denied = "PERMISSION_DENIED";
inline constexpr const char* no_workspace = "NO_WORKSPACE";
inline constexpr const char* no_document = "NO_DOCUMENT";
inline constexpr const char* nothing_to_undo = "NOTHING_TO_UNDO";
// Set by the agent loop, not by a tool: the human rejected the call.
inline constexpr const char* denied_by_user = "DENIED_BY_USER";
// Set by the agent loop: a guardrail withheld the tool's result from the model.
inline constexpr const char* guardrail_blocked = "GUARDRAIL_BLOCKED";
// The chat's document changed while an agent edit to it was being made: nothing was written.
inline constexpr const char* document_changed = "DOCUMENT_CHANGED";
// doc_edit named a document that is not the chat's open document.
inline constexpr const char* doc_not_found = "DOC_NOT_FOUND";
// Review mode: the edit session an edit was recorded into was resolved (accepted or rejected by
// the user) or removed meanwhile; nothing was recorded.
inline constexpr const char* session_not_found = "SESSION_NOT_FOUND";

// MCP tools (mcp__<server>__<tool>): the server answered with isError, is not connected now,
// did not answer within its call_timeout (the call was cancelled), or answered with a JSON-RPC
// error.
inline constexpr const char* mcp_tool_error = "MCP_TOOL_ERROR";
inline constexpr const char* mcp_unavailable = "MCP_UNAVAILABLE";
inline constexpr const char* mcp_timeout = "MCP_TIMEOUT";
inline constexpr const char* mcp_error = "MCP_ERROR";

}  // namespace gateway::tools::code
