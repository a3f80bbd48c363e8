#pragma once

#include "gateway/tools/sandbox.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gateway::tools {

// A definition found by the index.
struct symbol {
    std::string name;
    std::string path;
    std::size_t line = 0;
    std::string kind;  // the engine's kind: "function", "struct", "member", …
    std::string type;  // function | class | variable | import | other
    std::string text;  // the defining line, trimmed
};

// The workspace's definitions, for find_definition. Built with Universal Ctags
// (`--output-format=json`, fed the walk's file list, never following links) when it is
// installed, otherwise with per-language regular expressions (C/C++, Python, JS/TS, Go, Rust,
// Java; see docs/tools.md). Import statements are always indexed with regular expressions.
// The index is built on first use and kept per file: a lookup first re-stats the tree (at most
// once per `recheck` interval) and re-indexes only files whose size or mtime changed; writes
// through the workspace invalidate their file at once. Thread-safe.
class symbol_index {
public:
    symbol_index(const sandbox& root, std::string root_path);

    struct lookup {
        std::vector<symbol> found;
        std::string engine;  // "ctags" or "regex"
    };
    // Definitions named exactly `name`, filtered by `type` when it is not empty.
    lookup find(std::string_view name, std::string_view type);
    void invalidate(const std::string& path);
    std::size_t file_count();

    // The ctags program; "" forces the regex engine (tests cover both). Default: "ctags" when
    // found on PATH.
    void set_ctags(std::string program);
    std::chrono::milliseconds recheck{1000};

private:
    struct file_state {
        long long mtime_ns = 0;
        long long size = -1;
        std::vector<symbol> symbols;
    };
    void refresh();
    void index(const std::vector<std::string>& paths);
    void drop(const std::string& path);

    const sandbox& root_;
    std::string root_path_;
    std::string ctags_;
    std::mutex mutex_;
    bool built_ = false;
    std::chrono::steady_clock::time_point checked_{};
    std::unordered_map<std::string, file_state> files_;
    std::unordered_map<std::string, std::vector<std::string>> files_by_name_;
};

}  // namespace gateway::tools
