#pragma once

#include "gateway/tools/diff.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The review side of edit sessions, as pure functions: the AI version's hunks against the base
// with stable ids, the base with some of those hunks applied, and the three-way merge with a
// target that changed since the base.
namespace gateway::sessions {

// A hunk of diff(base, AI version) and its id. The id is derived from the hunk's own lines (what
// it replaces and with what), so it stays the same while other hunks are accepted or the agent
// edits elsewhere; two identical hunks are told apart by their order.
struct review_hunk {
    std::string id;
    tools::diff_hunk hunk;
};
std::vector<review_hunk> review_hunks(std::string_view base, std::string_view ai_version);

// `base` with the hunks of `hunks` (of diff(base, …)) whose ids are in `chosen` applied, the
// others left out.
std::string apply_hunks(std::string_view base, const std::vector<review_hunk>& hunks,
                        const std::vector<std::string>& chosen);

// A three-way merge of `ours` and `theirs`, both changed from `base`, by libgit2's
// git_merge_file: `clean` with the merged text, or not clean when changes overlap (then
// `content` holds the text with conflict markers, for information only).
struct merge_result {
    bool clean = false;
    std::string content;
};
merge_result merge_three_way(std::string_view base, std::string_view ours, std::string_view theirs);

// The hunks of `hunks` (of diff(base, …)) whose changed lines overlap or touch a change made
// by diff(base, other): where a merge with `other` conflicts.
std::vector<const review_hunk*> overlapping(const std::vector<review_hunk>& hunks,
                                            std::string_view base, std::string_view other);

}  // namespace gateway::sessions
