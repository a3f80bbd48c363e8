#pragma once

#include "gateway/tools/sandbox.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace gateway::tools {

enum class entry_type { file, directory, symlink, other };

// One entry met by walk(). `path` is relative to the workspace root ("src/main.cpp"); `dir_fd`
// is its open parent folder and `name` its last component, so the entry can be opened or
// inspected with *at() calls and O_NOFOLLOW without resolving a path again. Valid during the
// callback only.
struct walk_entry {
    const std::string& path;
    int dir_fd;
    const char* name;
    entry_type type;
};

enum class walk_action { next, skip, stop };  // skip: do not descend into this folder

struct walk_options {
    bool recursive = true;
    // Honour .gitignore files (those of the start folder's ancestors too) and skip the folders
    // that never hold sources (see is_skipped_folder).
    bool honour_ignores = true;
};

// `.git`, `node_modules`, build output and caches: folders walks never enter.
bool is_skipped_folder(std::string_view name);

// Visits what lies beneath `start` (a folder, or a single file), depth first, each folder's
// entries in byte order so results are deterministic. Symlinks are reported, never followed;
// write temporaries (see is_write_temporary) are never reported.
// Folders are opened one component at a time with O_NOFOLLOW beneath the sandbox root. Returns
// the sandbox's error when `start` cannot be opened.
fs_status walk(const sandbox& root, std::string_view start, const walk_options& options,
               const std::function<walk_action(const walk_entry&)>& visit);

// `path` without a leading "./" and trailing '/', "." for the root itself.
std::string normalize_relative(std::string_view path);

}  // namespace gateway::tools
