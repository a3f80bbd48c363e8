#include "gateway/sessions/review.hpp"

#include "gateway/tools/digest.hpp"

#include <git2/global.h>
#include <git2/merge.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

namespace gateway::sessions {

std::vector<review_hunk> review_hunks(std::string_view base, std::string_view ai_version) {
    std::vector<review_hunk> out;
    std::map<std::string, int> seen;
    for (auto& h : tools::diff_hunks(base, ai_version)) {
        std::string key = h.old_text;
        key.push_back('\0');
        key += h.new_text;
        auto id = "h" + tools::sha256_hex(key).substr(0, 12);
        if (int n = seen[id]++) id += "-" + std::to_string(n + 1);
        out.push_back({std::move(id), std::move(h)});
    }
    return out;
}

std::string apply_hunks(std::string_view base, const std::vector<review_hunk>& hunks,
                        const std::vector<std::string>& chosen) {
    std::vector<std::string_view> lines;
    for (std::size_t pos = 0; pos < base.size();) {
        auto newline = base.find('\n', pos);
        auto end = newline == std::string_view::npos ? base.size() : newline + 1;
        lines.push_back(base.substr(pos, end - pos));
        pos = end;
    }
    std::string out;
    std::size_t next = 0;          // the first base line not copied yet
    for (const auto& h : hunks) {  // in order, never overlapping
        if (std::find(chosen.begin(), chosen.end(), h.id) == chosen.end()) continue;
        for (; next < h.hunk.old_start; ++next) out.append(lines[next]);
        out += h.hunk.new_text;
        next = h.hunk.old_start + h.hunk.old_count;
    }
    for (; next < lines.size(); ++next) out.append(lines[next]);
    return out;
}

merge_result merge_three_way(std::string_view base, std::string_view ours,
                             std::string_view theirs) {
    static std::once_flag initialized;
    std::call_once(initialized, [] { git_libgit2_init(); });
    auto input = [](std::string_view text) {
        git_merge_file_input in;
        git_merge_file_input_init(&in, GIT_MERGE_FILE_INPUT_VERSION);
        in.ptr = text.data();
        in.size = text.size();
        return in;
    };
    auto ancestor = input(base), mine = input(ours), other = input(theirs);
    git_merge_file_options options;
    git_merge_file_options_init(&options, GIT_MERGE_FILE_OPTIONS_VERSION);
    options.ancestor_label = "base";
    options.our_label = "current";
    options.their_label = "suggested";
    git_merge_file_result result{};
    if (git_merge_file(&result, &ancestor, &mine, &other, &options) != 0)
        throw std::runtime_error("libgit2 could not merge the texts");
    merge_result out{result.automergeable != 0,
                     std::string(result.ptr ? result.ptr : "", result.len)};
    git_merge_file_result_free(&result);
    return out;
}

std::vector<const review_hunk*> overlapping(const std::vector<review_hunk>& hunks,
                                            std::string_view base, std::string_view other) {
    auto changes = tools::diff_hunks(base, other);
    std::vector<const review_hunk*> out;
    for (const auto& h : hunks) {
        // Ranges that touch count too: an insertion right next to a change conflicts in a merge.
        auto start = h.hunk.changed_start, end = h.hunk.changed_start + h.hunk.changed_count;
        bool hit = std::any_of(changes.begin(), changes.end(), [&](const tools::diff_hunk& c) {
            auto c_start = c.changed_start, c_end = c.changed_start + c.changed_count;
            return start <= c_end && c_start <= end;
        });
        if (hit) out.push_back(&h);
    }
    return out;
}

}  // namespace gateway::sessions
