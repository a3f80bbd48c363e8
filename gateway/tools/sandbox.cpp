#include "gateway/tools/sandbox.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/tool.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

namespace gateway::tools {

namespace {

opened fail(std::string code, std::string message) {
    return {unique_fd{}, std::move(code), std::move(message)};
}

opened outside(std::string_view path) {
    return fail(code::path_outside_workspace,
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
        return fail(code::not_found, "Workspace " + quoted(absolute_path) +
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
            return fail(code::not_found,
                        "Path " + quoted(relative) + " does not exist in the workspace.");
        if (error == ENXIO || error == ENODEV)  // a socket, or a device without a driver
            return fail(
                code::not_a_regular_file,
                "Path " + quoted(relative) + " is not a regular file (a device, FIFO or socket).");
        if (error == ENOTDIR)
            return fail(code::not_a_directory,
                        "A part of " + quoted(relative) + " is not a directory.");
        return fail(code::io_error,
                    "Cannot open " + quoted(relative) + ": " + std::strerror(error));
    }
    unique_fd opened_fd(fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        return fail(code::io_error,
                    "Cannot inspect " + quoted(relative) + ": " + std::strerror(errno));
    if (want_directory && !S_ISDIR(info.st_mode))
        return fail(code::not_a_directory, "Path " + quoted(relative) + " is not a directory.");
    if (!want_directory && !S_ISREG(info.st_mode))
        return fail(
            code::not_a_regular_file,
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

opened sandbox::open_parent(std::string_view relative, bool create, std::string& leaf) const {
    if (!check_relative(relative).empty()) return outside(relative);
    auto slash = relative.rfind('/');
    std::string_view folder = slash == std::string_view::npos ? "." : relative.substr(0, slash);
    leaf = std::string(slash == std::string_view::npos ? relative : relative.substr(slash + 1));
    if (leaf.empty() || leaf == ".")
        return fail(code::not_a_regular_file,
                    "Path " + quoted(relative) + " names a folder, not a file.");
    if (folder.empty()) folder = ".";
    auto parent = open_dir(folder);
    if (parent || !create || parent.error_code != code::not_found) return parent;

    // Create the missing folders one component at a time; each new folder is resolved beneath
    // the root again, so a component that already exists as a link outside is still refused.
    auto current = open_dir(".");
    if (!current) return current;
    std::string prefix;
    std::size_t pos = 0;
    while (pos <= folder.size()) {
        auto next_slash = folder.find('/', pos);
        std::string component(folder.substr(
            pos, next_slash == std::string_view::npos ? folder.npos : next_slash - pos));
        pos = next_slash == std::string_view::npos ? folder.size() + 1 : next_slash + 1;
        if (component.empty() || component == ".") continue;
        if (!prefix.empty()) prefix.push_back('/');
        prefix += component;
        if (::mkdirat(current.fd.get(), component.c_str(), 0777) != 0 && errno != EEXIST)
            return fail(code::io_error,
                        "Cannot create folder " + quoted(prefix) + ": " + std::strerror(errno));
        current = open_dir(prefix);
        if (!current) return current;
    }
    return current;
}

namespace {

fs_status status_of(opened&& failed) {
    return {std::move(failed.error_code), std::move(failed.message)};
}

fs_status io_error(std::string_view what, std::string_view path) {
    std::string message(what);
    message += ' ';
    message += quoted(path);
    message += ": ";
    message += std::strerror(errno);
    return {code::io_error, std::move(message)};
}

// Refuses anything at `leaf` that is not a regular file; sets `exists` and `info`.
fs_status inspect_leaf(int parent, const std::string& leaf, std::string_view relative, bool& exists,
                       struct stat& info) {
    exists = ::fstatat(parent, leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists) {
        if (errno == ENOENT) return {};
        return io_error("Cannot inspect", relative);
    }
    if (S_ISREG(info.st_mode)) return {};
    if (S_ISLNK(info.st_mode))
        return {code::not_a_regular_file,
                "Path " + quoted(relative) +
                    " is a symbolic link; work on the file it points to instead."};
    if (S_ISDIR(info.st_mode))
        return {code::not_a_regular_file, "Path " + quoted(relative) + " is a folder, not a file."};
    return {code::not_a_regular_file,
            "Path " + quoted(relative) + " is not a regular file (a device, FIFO or socket)."};
}

constexpr std::string_view temporary_marker = ".contextgate-";
constexpr std::size_t temporary_suffix_digits = 16;

// When this process started (for the age of write temporaries); set before main runs.
const struct timespec process_start = [] {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return now;
}();

std::string temporary_name(const std::string& leaf) {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    char suffix[20];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random()));
    std::string name = ".";
    name += leaf.substr(0, 200);
    name += temporary_marker;
    name += suffix;
    return name;
}

}  // namespace

bool is_write_temporary(std::string_view name) {
    if (name.size() < 2 + temporary_marker.size() + temporary_suffix_digits || name.front() != '.')
        return false;
    auto suffix = name.substr(name.size() - temporary_suffix_digits);
    auto marker = name.substr(name.size() - temporary_suffix_digits - temporary_marker.size(),
                              temporary_marker.size());
    return marker == temporary_marker &&
           suffix.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::size_t remove_stale_temporaries(int dir_fd) {
    int listing_fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* listing = listing_fd >= 0 ? ::fdopendir(listing_fd) : nullptr;
    if (!listing) {
        if (listing_fd >= 0) ::close(listing_fd);
        return 0;
    }
    std::vector<std::string> stale;
    while (auto* entry = ::readdir(listing)) {
        if (!is_write_temporary(entry->d_name)) continue;
        struct stat info {};
        if (::fstatat(dir_fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(info.st_mode))
            continue;
        const auto& m = info.st_mtim;
        if (m.tv_sec < process_start.tv_sec ||
            (m.tv_sec == process_start.tv_sec && m.tv_nsec < process_start.tv_nsec))
            stale.emplace_back(entry->d_name);
    }
    ::closedir(listing);
    std::size_t removed = 0;
    for (const auto& name : stale) removed += ::unlinkat(dir_fd, name.c_str(), 0) == 0;
    return removed;
}

read_outcome read_text(int fd, std::size_t limit, std::string& text, std::size_t* size) {
    struct stat info {};
    if (::fstat(fd, &info) != 0) return read_outcome::failed;
    if (!S_ISREG(info.st_mode)) {
        errno = EINVAL;
        return read_outcome::failed;
    }
    auto expected = static_cast<std::size_t>(info.st_size);
    if (size) *size = expected;
    if (expected > limit) return read_outcome::too_large;
    text.resize(expected);
    std::size_t got = 0;
    while (got < expected) {
        auto n = ::read(fd, text.data() + got, expected - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return read_outcome::failed;
        if (n == 0) break;  // the file shrank meanwhile
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (std::memchr(text.data(), '\0', std::min<std::size_t>(got, 8192)))
        return read_outcome::binary;
    return read_outcome::ok;
}

unique_fd open_entry(int dir_fd, const char* name) {
    // O_NONBLOCK keeps a FIFO from hanging the open; it changes nothing for regular files, the
    // only kind read_text accepts, so it can stay set.
    return unique_fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
}

fs_status sandbox::write_file(std::string_view relative, std::string_view content,
                              overwrite policy) const {
    std::string leaf;
    auto parent = open_parent(relative, true, leaf);
    if (!parent) return status_of(std::move(parent));
    int dir = parent.fd.get();
    bool exists = false;
    struct stat info {};
    if (auto refused = inspect_leaf(dir, leaf, relative, exists, info); !refused) return refused;
    if (exists && policy == overwrite::refused)
        return {code::file_exists, "File " + quoted(relative) +
                                       " already exists; use edit_file or doc_edit to change it."};

    // Debris of an earlier process killed while writing here is cleaned up on the next write.
    remove_stale_temporaries(dir);
    std::string temporary = temporary_name(leaf);
    unique_fd out(::openat(dir, temporary.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (!out) return io_error("Cannot create a temporary file for", relative);
    auto abandon = [&](fs_status status) {
        ::unlinkat(dir, temporary.c_str(), 0);
        return status;
    };
    // Keep the permissions of the file being replaced (the umask applied to the new one).
    if (exists && ::fchmod(out.get(), info.st_mode & 07777) != 0)
        return abandon(io_error("Cannot set permissions on", relative));
    for (std::size_t written = 0; written < content.size();) {
        auto n = ::write(out.get(), content.data() + written, content.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return abandon(io_error("Cannot write", relative));
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(out.get()) != 0) return abandon(io_error("Cannot sync", relative));
    out = unique_fd{};

    int renamed = policy == overwrite::refused
                      ? ::renameat2(dir, temporary.c_str(), dir, leaf.c_str(), RENAME_NOREPLACE)
                      : ::renameat(dir, temporary.c_str(), dir, leaf.c_str());
    if (renamed != 0 && errno == EEXIST)
        return abandon({code::file_exists, "File " + quoted(relative) + " already exists."});
    if (renamed != 0) return abandon(io_error("Cannot replace", relative));
    ::fsync(dir);  // make the rename itself durable
    return {};
}

fs_status sandbox::remove_file(std::string_view relative) const {
    std::string leaf;
    auto parent = open_parent(relative, false, leaf);
    if (!parent) return status_of(std::move(parent));
    struct stat info {};
    if (::fstatat(parent.fd.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return {code::not_found,
                    "Path " + quoted(relative) + " does not exist in the workspace."};
        return io_error("Cannot inspect", relative);
    }
    if (S_ISDIR(info.st_mode))
        return {code::not_a_regular_file,
                "Path " + quoted(relative) + " is a folder; delete_file removes files only."};
    if (::unlinkat(parent.fd.get(), leaf.c_str(), 0) != 0)
        return io_error("Cannot delete", relative);
    ::fsync(parent.fd.get());
    return {};
}

}  // namespace gateway::tools
