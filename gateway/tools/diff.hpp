#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gateway::tools {

// What a change did, line-wise.
struct diff_stats {
    std::size_t added = 0;
    std::size_t removed = 0;
};

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
