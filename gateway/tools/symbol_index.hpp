#pragma once

#include "gateway/tools/sandbox.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
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
// The index is built on first use (synchronously) and kept per file. Writes through the workspace
// mark their file dirty, and the next lookup re-indexes it before answering. Outside edits are
// found by re-stating the tree in a background thread, started by a lookup at most once per
// `recheck` interval; the lookup answers from the index meanwhile, so it never waits for a walk.
// Only files whose size or mtime changed are re-indexed. Thread-safe.
class symbol_index {
public:
    explicit symbol_index(const sandbox& root);
    ~symbol_index();
    symbol_index(const symbol_index&) = delete;
    symbol_index& operator=(const symbol_index&) = delete;

    struct lookup {
        std::vector<symbol> found;
        std::string engine;  // "ctags" or "regex"
    };
    // Definitions named exactly `name`, filtered by `type` when it is not empty.
    lookup find(std::string_view name, std::string_view type);
    void invalidate(const std::string& path);
    std::size_t file_count();
    // Blocks until a background re-check, if one is running, has been applied.
    void wait_for_refresh();

    // The ctags program; "" forces the regex engine (tests cover both). Default: "ctags" when
    // found on PATH.
    void set_ctags(std::string program);
    // How old the last re-check may be before a lookup starts another (default 1 s).
    void set_recheck(std::chrono::milliseconds interval);

private:
    struct file_state {
        long long mtime_ns = 0;
        long long size = -1;
        std::vector<symbol> symbols;
    };
    using stamps = std::unordered_map<std::string, std::pair<long long, long long>>;
    stamps scan() const;  // walks and stats the tree; needs no lock
    void apply(const stamps& seen);
    void bring_up_to_date(std::unique_lock<std::mutex>& lock);
    void index(const std::vector<std::string>& paths);
    void drop(const std::string& path);

    const sandbox& root_;
    std::string ctags_;
    std::mutex mutex_;
    std::condition_variable refreshed_;
    bool built_ = false;
    bool refreshing_ = false;
    std::thread worker_;
    std::set<std::string> dirty_;
    std::chrono::milliseconds recheck_{1000};
    std::chrono::steady_clock::time_point checked_{};
    std::unordered_map<std::string, file_state> files_;
    std::unordered_map<std::string, std::vector<std::string>> files_by_name_;
};

}  // namespace gateway::tools
