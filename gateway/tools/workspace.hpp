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

// A chat's workspace: the sandboxed root, the undo history of the writes made through it, and
// its symbol index. All writes go through here so each is atomic and undoable. Thread-safe.
class workspace {
public:
    static constexpr std::size_t undo_depth = 5;

    // Opens the folder at the absolute path `root`; nullptr and `error` when it is not one.
    static std::unique_ptr<workspace> open(const std::string& root, std::string& error,
                                           sandbox::resolution mode = sandbox::resolution::openat2);
    // A workspace over a folder already opened (see workspace_roots): `dir` is its descriptor,
    // `root` its path, for messages only. Nothing is resolved by path again.
    static std::unique_ptr<workspace> adopt(std::string root, unique_fd dir,
                                            sandbox::resolution mode = sandbox::resolution::openat2);
    ~workspace();

    const std::string& root() const { return root_; }
    const sandbox& files() const { return sandbox_; }

    // The regular file at `relative`, refused with FILE_TOO_LARGE above `limit` bytes and with
    // BINARY_FILE when its first 8 KiB hold a NUL byte (binary data never reaches the model).
    file_content read(std::string_view relative, std::size_t limit) const;

    // Writes atomically (see sandbox::write_file) and records `previous` (nullopt: the file did
    // not exist) so undo() can restore it. The last undo_depth writes per file are kept.
    fs_status write(std::string_view relative, std::string_view content, overwrite policy,
                    std::optional<std::string> previous);
    // Deletes the file, recording its content for undo().
    fs_status remove(std::string_view relative, std::string previous);
    // Restores `relative` to what it was before its most recent recorded write (deleting it if
    // the write created it). NOTHING_TO_UNDO when no write is recorded.
    fs_status undo(std::string_view relative);
    std::size_t undo_available(std::string_view relative) const;

    // Deletes the write temporaries an earlier process left anywhere in the workspace (the
    // folders walks visit; see remove_stale_temporaries). Returns how many. Walks the tree:
    // call it off the I/O threads.
    std::size_t remove_debris() const;

    // The workspace's symbol index, built on first use.
    symbol_index& symbols();

private:
    workspace(std::string root, sandbox box);
    void remember(const std::string& key, std::optional<std::string> previous);

    std::string root_;
    sandbox sandbox_;
    mutable std::mutex mutex_;
    std::map<std::string, std::deque<std::optional<std::string>>> history_;
    std::unique_ptr<symbol_index> symbols_;
};

}  // namespace gateway::tools
