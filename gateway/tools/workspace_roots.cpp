#include "gateway/tools/workspace_roots.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gateway::tools {

namespace {

// `path` without `.` components, repeated or trailing slashes; "" when it holds `..`.
std::string lexical(std::string_view path) {
    std::string out;
    std::size_t pos = 0;
    while (pos < path.size()) {
        auto slash = path.find('/', pos);
        auto part = path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos);
        pos = slash == std::string_view::npos ? path.size() : slash + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") return {};
        out += '/';
        out += part;
    }
    return out.empty() ? "/" : out;
}

// `path` relative to `root` ("" for the root itself), or nullopt when it is not beneath it.
std::optional<std::string_view> beneath(std::string_view path, std::string_view root) {
    if (path == root) return std::string_view{};
    if (root == "/") return path.substr(1);
    if (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/')
        return path.substr(root.size() + 1);
    return std::nullopt;
}

// Opens the directory `relative` beneath `dir`, following no symlink on the way.
int open_no_symlinks(int dir, const std::string& relative) {
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
        fd = ::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how);
    } while (fd < 0 && errno == EAGAIN);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    // Older kernels: one component at a time, none of them a link.
    unique_fd current(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
    std::size_t pos = 0;
    while (current && pos < relative.size()) {
        auto slash = relative.find('/', pos);
        auto part =
            relative.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
        pos = slash == std::string::npos ? relative.size() : slash + 1;
        int next =
            ::openat(current.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            struct stat info {};
            if (errno == ENOTDIR &&
                ::fstatat(current.get(), part.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(info.st_mode))
                errno = ELOOP;
            return -1;
        }
        current = unique_fd(next);
    }
    return current ? ::fcntl(current.get(), F_DUPFD_CLOEXEC, 0) : -1;
}

opened_workspace refuse(std::string why) {
    return {unique_fd{}, {}, std::move(why)};
}

}  // namespace

workspace_roots::workspace_roots(const std::vector<std::string>& configured) {
    for (const auto& spelling : configured) {
        char resolved[PATH_MAX];
        int fd = -1;
        if (::realpath(spelling.c_str(), resolved))
            fd = ::open(resolved, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            unusable_.push_back(spelling + ": " + std::strerror(errno));
            continue;
        }
        roots_.push_back({lexical(spelling), resolved, unique_fd(fd)});
        listing_ += (listing_.empty() ? "" : ", ") + spelling;
    }
}

std::vector<std::string> workspace_roots::paths() const {
    std::vector<std::string> out;
    for (const auto& r : roots_) out.push_back(r.configured);
    return out;
}

opened_workspace workspace_roots::open(std::string_view path) const {
    if (path.find('\0') != std::string_view::npos) return refuse("`workspace` holds a NUL byte.");
    if (path.empty() || path.front() != '/') return refuse("`workspace` must be an absolute path.");
    auto normal = lexical(path);
    if (normal.empty()) return refuse("`workspace` must not contain `..`.");
    if (roots_.empty())
        return refuse("No workspaces are configured on this gateway (context.workspaces).");
    for (const auto& r : roots_) {
        auto relative = beneath(normal, r.configured);
        if (!relative) relative = beneath(normal, r.resolved);
        if (!relative) continue;
        int fd = relative->empty() ? ::fcntl(r.fd.get(), F_DUPFD_CLOEXEC, 0)
                                   : open_no_symlinks(r.fd.get(), std::string(*relative));
        if (fd < 0) {
            int error = errno;
            if (error == ELOOP || error == EXDEV)
                return refuse("The workspace " + normal +
                              " goes through a symbolic link; name the folder itself.");
            if (error == ENOTDIR) return refuse("The workspace " + normal + " is not a folder.");
            if (error == ENOENT) return refuse("The workspace " + normal + " does not exist.");
            return refuse("The workspace " + normal + " cannot be opened: " + std::strerror(error));
        }
        return {unique_fd(fd), normal, {}};
    }
    return refuse("The workspace " + normal + " is outside the configured workspaces (" + listing_ +
                  ").");
}

}  // namespace gateway::tools
