#include "gateway/tools/sandbox.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

namespace gateway::tools {

namespace {

opened fail(std::string code, std::string message) {
    return {unique_fd{}, std::move(code), std::move(message)};
}

std::string quoted(std::string_view path) {
    // Appended piece by piece: `"`" + std::string(path)` trips GCC 12's -Wrestrict (PR 105329).
    std::string out;
    out.reserve(path.size() + 2);
    out.push_back('`');
    out.append(path);
    out.push_back('`');
    return out;
}

opened outside(std::string_view path) {
    return fail("PATH_OUTSIDE_WORKSPACE",
                "Path " + quoted(path) +
                    " is outside the workspace. Use a path relative to the workspace root, "
                    "without `..`, that does not go through a link leading outside.");
}

// openat2 beneath `dir`; -1 with errno ENOSYS when the kernel lacks it.
int open_beneath(int dir, const char* path, int flags) {
    open_how how{};
    how.flags = static_cast<unsigned long long>(flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
        fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
    } while (fd < 0 && errno == EAGAIN);
    return static_cast<int>(fd);
}

// The fallback walk: one component at a time, refusing every symlink (ELOOP from O_NOFOLLOW).
int open_walk(int dir, std::string_view path, int flags) {
    unique_fd current(::dup(dir));
    if (!current) return -1;
    std::size_t pos = 0;
    while (true) {
        auto slash = path.find('/', pos);
        std::string component(
            path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos));
        bool last = slash == std::string_view::npos;
        if (component.empty() || component == ".") {
            if (last) return ::openat(current.get(), ".", flags | O_NOFOLLOW);
            pos = slash + 1;
            continue;
        }
        if (last) return ::openat(current.get(), component.c_str(), flags | O_NOFOLLOW);
        int next = ::openat(current.get(), component.c_str(),
                            O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            // O_NOFOLLOW with O_DIRECTORY reports a symlinked directory as ENOTDIR: say ELOOP.
            struct stat info {};
            if (errno == ENOTDIR &&
                ::fstatat(current.get(), component.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(info.st_mode))
                errno = ELOOP;
            return -1;
        }
        current = unique_fd(next);
        pos = slash + 1;
    }
}

}  // namespace

unique_fd& unique_fd::operator=(unique_fd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

unique_fd::~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
}

std::string sandbox::check_relative(std::string_view relative) {
    if (relative.find('\0') != std::string_view::npos) return "contains a NUL byte";
    if (relative.empty()) return "is empty";
    if (relative.front() == '/') return "is absolute";
    std::size_t pos = 0;
    while (pos <= relative.size()) {
        auto slash = relative.find('/', pos);
        auto component =
            relative.substr(pos, slash == std::string_view::npos ? relative.npos : slash - pos);
        if (component == "..") return "contains `..`";
        if (slash == std::string_view::npos) break;
        pos = slash + 1;
    }
    return {};
}

opened sandbox::open_directory(const std::string& absolute_path) {
    int fd = ::open(absolute_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail("NOT_FOUND", "Workspace " + quoted(absolute_path) +
                                     " cannot be opened: " + std::strerror(errno));
    return {unique_fd(fd), {}, {}};
}

opened sandbox::resolve(std::string_view relative, int flags, bool want_directory) const {
    if (!check_relative(relative).empty()) return outside(relative);
    std::string path(relative);
    int fd = -1;
    errno = ENOSYS;
    if (resolution_ == resolution::openat2) fd = open_beneath(root_.get(), path.c_str(), flags);
    if (fd < 0 && errno == ENOSYS) fd = open_walk(root_.get(), path, flags);
    if (fd < 0) {
        int error = errno;
        if (error == EXDEV || error == ELOOP) return outside(relative);
        if (error == ENOENT)
            return fail("NOT_FOUND",
                        "Path " + quoted(relative) + " does not exist in the workspace.");
        if (error == ENXIO || error == ENODEV)  // a socket, or a device without a driver
            return fail(
                "NOT_A_REGULAR_FILE",
                "Path " + quoted(relative) + " is not a regular file (a device, FIFO or socket).");
        if (error == ENOTDIR)
            return fail("NOT_A_DIRECTORY",
                        "A part of " + quoted(relative) + " is not a directory.");
        return fail("IO_ERROR", "Cannot open " + quoted(relative) + ": " + std::strerror(error));
    }
    unique_fd opened_fd(fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        return fail("IO_ERROR", "Cannot inspect " + quoted(relative) + ": " + std::strerror(errno));
    if (want_directory && !S_ISDIR(info.st_mode))
        return fail("NOT_A_DIRECTORY", "Path " + quoted(relative) + " is not a directory.");
    if (!want_directory && !S_ISREG(info.st_mode))
        return fail(
            "NOT_A_REGULAR_FILE",
            "Path " + quoted(relative) +
                (S_ISDIR(info.st_mode) ? " is a directory; use list_files to see its contents."
                                       : " is not a regular file (a device, FIFO or socket)."));
    if (!want_directory) {
        // Opened non-blocking so a FIFO could not hang us; reads of a regular file may block.
        int status = ::fcntl(fd, F_GETFL);
        if (status >= 0) ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
    }
    return {std::move(opened_fd), {}, {}};
}

opened sandbox::open_file(std::string_view relative) const {
    return resolve(relative, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, false);
}

opened sandbox::open_dir(std::string_view relative) const {
    return resolve(relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC, true);
}

}  // namespace gateway::tools
