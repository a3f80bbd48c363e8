#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::tools {

// What a change did, line-wise.
struct diff_stats {
    std::size_t added = 0;
    std::size_t removed = 0;
};

// One hunk of a unified diff: lines [old_start, old_start + old_count) of `before` (0-based)
// become lines [new_start, new_start + new_count) of `after`, context lines included.
// Hunks of one diff never overlap, so any subset of them can be applied on its own.
struct diff_hunk {
    std::size_t old_start = 0, old_count = 0;
    std::size_t new_start = 0, new_count = 0;
    std::string text;      // "@@ -a,b +c,d @@" and its marked lines
    std::string old_text;  // the hunk's lines as `before` has them
    std::string new_text;  // and as `after` has them
    // The changed lines without the context around them: lines
    // [changed_start, changed_start + changed_count) of `before`.
    std::size_t changed_start = 0, changed_count = 0;
    diff_stats stats;
};

// The hunks of the unified diff from `before` to `after` (none when they are equal).
std::vector<diff_hunk> diff_hunks(std::string_view before, std::string_view after,
                                  diff_stats* stats = nullptr);

// A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context) from `before` to
// `after`, computed with Myers' O(ND) algorithm after trimming the common prefix and suffix.
// `before_exists`/`after_exists` false render the side as /dev/null (file created or deleted).
// Lines are compared with their line endings, so a changed final newline shows up, marked
// "\ No newline at end of file". Changes wider than an internal bound fall back to replacing
// the differing middle as a whole: still a correct diff, just not a minimal one.
std::string unified_diff(std::string_view path, std::string_view before, std::string_view after,
                         bool before_exists = true, bool after_exists = true,
                         diff_stats* stats = nullptr);

}  // namespace gateway::tools
