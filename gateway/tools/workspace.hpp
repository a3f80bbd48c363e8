#pragma once

#include "gateway/tools/sandbox.hpp"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::tools {

class symbol_index;

// A file read for a tool: its text, or a stable error code (the sandbox's, FILE_TOO_LARGE,
// BINARY_FILE) with a message for the model.
struct file_content {
    std::string text;
    std::string error_code;
    std::string message;
    explicit operator bool() const { return error_code.empty(); }
};

// A chat's workspace: the sandboxed root and its symbol index. All writes go through here so
// each is atomic and the index learns of it. (Undo is the run engine's: it keeps the previous
// content of each write in the store.) Thread-safe.
class workspace {
public:
    // Opens the folder at the absolute path `root`; nullptr and `error` when it is not one.
    static std::unique_ptr<workspace> open(const std::string& root, std::string& error,
                                           sandbox::resolution mode = sandbox::resolution::openat2);
    // A workspace over a folder already opened (see workspace_roots): `dir` is its descriptor,
    // `root` its path, for messages only. Nothing is resolved by path again.
    static std::unique_ptr<workspace> adopt(
        std::string root, unique_fd dir, sandbox::resolution mode = sandbox::resolution::openat2);
    ~workspace();

    const std::string& root() const { return root_; }
    const sandbox& files() const { return sandbox_; }

    // The regular file at `relative`, refused with FILE_TOO_LARGE above `limit` bytes and with
    // BINARY_FILE when its first 8 KiB hold a NUL byte (binary data never reaches the model).
    file_content read(std::string_view relative, std::size_t limit) const;

    // Writes atomically (see sandbox::write_file); the symbol index forgets the file.
    fs_status write(std::string_view relative, std::string_view content, overwrite policy);
    // Deletes the file.
    fs_status remove(std::string_view relative);

    // Deletes the write temporaries an earlier process left anywhere in the workspace (the
    // folders walks visit; see remove_stale_temporaries). Returns how many. Walks the tree:
    // call it off the I/O threads.
    std::size_t remove_debris() const;

    // The workspace's symbol index, built on first use.
    symbol_index& symbols();

private:
    workspace(std::string root, sandbox box);

    std::string root_;
    sandbox sandbox_;
    mutable std::mutex mutex_;
    std::unique_ptr<symbol_index> symbols_;
};

}  // namespace gateway::tools
