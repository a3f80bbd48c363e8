#pragma once

#include "gateway/tools/sandbox.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gateway::tools {

// A chat's workspace folder, opened for one run: the descriptor the run's tools work beneath,
// and the folder's path as the API shows it. `error` (with a message for the human) when the
// path may not be used.
struct opened_workspace {
    unique_fd fd;
    std::string path;
    std::string error;
    explicit operator bool() const { return error.empty(); }
};

// The folders chats may work in (`context.workspaces`). Each configured root is resolved and
// opened once, at start: the administrator's spelling may go through links. A chat's workspace
// is then opened beneath its root without following any symlink (openat2 with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS, or a component walk with O_NOFOLLOW on older kernels), and this happens
// every time it is used, not only when the chat is created: a chat folder (or a parent of it)
// later replaced by a link to elsewhere is refused at the next run instead of followed.
// Immutable after construction, so thread-safe.
class workspace_roots {
public:
    explicit workspace_roots(const std::vector<std::string>& configured);

    // Opens `path`: absolute, with no NUL byte, no `..` component, naming a directory equal to or
    // beneath one of the roots (in their configured or resolved spelling). `.` components,
    // repeated and trailing slashes are removed from the path kept in `path`.
    opened_workspace open(std::string_view path) const;

    bool empty() const { return roots_.empty(); }
    // The usable roots as configured (normalized), for a client choosing a chat's workspace.
    std::vector<std::string> paths() const;
    // Configured roots that could not be opened at start ("path: reason"), for the log.
    const std::vector<std::string>& unusable() const { return unusable_; }

private:
    struct root {
        std::string configured;  // as written in the configuration, normalized
        std::string resolved;    // realpath at start
        unique_fd fd;            // O_PATH | O_DIRECTORY
    };
    std::vector<root> roots_;
    std::string listing_;  // the roots for messages: "/srv/a, /srv/b"
    std::vector<std::string> unusable_;
};

}  // namespace gateway::tools
