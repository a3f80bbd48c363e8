#pragma once

#include "gateway/tools/sandbox.hpp"
#include "gateway/tools/tool.hpp"
#include "gateway/tools/workspace.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gateway::tools {

// The file tools' shared write path. load_text reads a workspace file for editing (up to
// limits.max_file_bytes, text only); commit_change turns "before -> after" into a unified diff
// and, in mode::execute, an atomic, undoable write. Every write tool ends in commit_change, so
// previews and real writes produce the same diff.

// The file at `path` as the agent sees it: its pending content in review mode (see
// pending_edits), else the disk's (workspace::read).
file_content read_view(const tool_context& context, std::string_view path, std::size_t limit);

// The file's text, or a failed result in `failure` (NOT_FOUND, BINARY_FILE, …).
std::optional<std::string> load_text(tool_context& context, std::string_view path,
                                     tool_result& failure);

// `summary` opens the model's text (e.g. "Replaced 2 occurrences in `a.txt`."); after a
// successful write `detail` follows it (a snippet), or the diff when `detail` is nullopt. Data:
// path, diff, added, removed, applied. `before` nullopt means the file is being created.
tool_result commit_change(tool_context& context, std::string_view path,
                          const std::optional<std::string>& before, const std::string& after,
                          overwrite policy, mode how, const std::string& summary,
                          const std::optional<std::string>& detail = std::nullopt);

// Creates `path` with `content` (create_file, doc_edit's create): FILE_EXISTS when anything is
// there already, decided again atomically by the write itself.
tool_result create_new_file(tool_context& context, std::string_view path,
                            const std::string& content, mode how);

}  // namespace gateway::tools
