#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gateway::tools {

// An open file descriptor, closed on destruction. Move-only.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : fd_(fd) {}
    unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& other) noexcept;
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd();

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

// The outcome of a sandboxed open: a descriptor, or a stable error code the tools report
// (PATH_OUTSIDE_WORKSPACE, NOT_A_REGULAR_FILE, NOT_A_DIRECTORY, NOT_FOUND, IO_ERROR) with a
// message for the model that names the path.
struct opened {
    unique_fd fd;
    std::string error_code;  // empty on success
    std::string message;
    explicit operator bool() const { return static_cast<bool>(fd); }
};

// The outcome of a sandboxed change: empty `error_code` on success.
struct fs_status {
    std::string error_code;
    std::string message;
    explicit operator bool() const { return error_code.empty(); }
};

// How read_text ended.
enum class read_outcome { ok, too_large, binary, failed };

// Reads the regular file open at `fd` whole into `text` (reusing its capacity). too_large when
// it is over `limit` bytes (nothing is read), binary when its first 8 KiB hold a NUL byte (the
// bytes must not reach a model), failed on I/O errors (errno set) or when it is not a regular
// file. `size` receives the file's size when not null. The one file-reading loop of the tools.
read_outcome read_text(int fd, std::size_t limit, std::string& text, std::size_t* size = nullptr);

// The entry `name` of the open folder `dir_fd`, opened read-only without following a symlink
// there and without blocking on a FIFO: how walks open what they find.
unique_fd open_entry(int dir_fd, const char* name);

// Whether `name` is one of the temporary files write_file creates beside its target while it
// writes (`.<target>.contextgate-<16 hex digits>`). Renamed over the target when the write
// completes; a process killed in between leaves one behind. Walks never list them, and
// remove_stale_temporaries() deletes those left by an earlier process.
bool is_write_temporary(std::string_view name);

// Deletes, in the folder open at `dir_fd`, the write temporaries last modified before this
// process started: they can only be debris of an ended process (this one's own writes in
// progress are newer). Returns how many it removed.
std::size_t remove_stale_temporaries(int dir_fd);

// How write_file treats an existing file.
enum class overwrite { allowed, refused };

// A workspace root that paths can never leave. Every path is relative to the root: absolute
// paths, `..` components and NUL bytes are refused before the kernel sees them, and resolution
// happens beneath the root's directory descriptor with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS), so a symlink anywhere on the path that leads outside (directly, through
// a chain, or to /proc/self/...) is refused too. Kernels without openat2 get a component-by-
// component walk with O_NOFOLLOW that refuses every symlink. Only regular files are opened as
// files: devices, FIFOs and sockets are refused without blocking. Thread-safe (immutable).
class sandbox {
public:
    // How paths are resolved: openat2 (falling back to the walk when the kernel lacks it), or
    // the walk alone (tests use it to cover the fallback on any kernel).
    enum class resolution { openat2, walk };

    explicit sandbox(unique_fd root_fd, resolution mode = resolution::openat2)
        : root_(std::move(root_fd)), resolution_(mode) {}

    // The root, or an error message when it is not an accessible directory.
    static opened open_directory(const std::string& absolute_path);

    // A regular file beneath the root, opened read-only.
    opened open_file(std::string_view relative) const;
    // A directory beneath the root ("." is the root itself), opened for listing.
    opened open_dir(std::string_view relative) const;

    // Atomically replaces (or creates) the regular file at `relative` with `content`: a temporary
    // file in the same folder is written, fsynced and renamed over the target, so readers see the
    // old or the new content, never a mix. Existing permissions are kept; missing parent folders
    // are created (beneath the root). With overwrite::refused an existing file is FILE_EXISTS,
    // decided atomically by the rename. A symlink, folder or special file at `relative` is
    // NOT_A_REGULAR_FILE: writes never go through links.
    fs_status write_file(std::string_view relative, std::string_view content,
                         overwrite policy) const;
    // Removes the regular file (or symlink, which leaves its target alone) at `relative`.
    fs_status remove_file(std::string_view relative) const;

    // The root folder's descriptor, for *at() calls and fchdir; owned by the sandbox.
    int root_fd() const { return root_.get(); }

    // The lexical checks alone: "" when `relative` may be resolved, else the reason.
    static std::string check_relative(std::string_view relative);

private:
    opened resolve(std::string_view relative, int flags, bool want_directory) const;
    // The folder holding `relative`'s last component, created when `create` is set, and that
    // component's name in `leaf`.
    opened open_parent(std::string_view relative, bool create, std::string& leaf) const;

    unique_fd root_;
    resolution resolution_;
};

}  // namespace gateway::tools
