#pragma once

#include <memory>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace gateway::tools {

// The rules of one .gitignore file: blank lines and `#` comments skipped, `!` negates, a
// trailing `/` matches folders only, a `/` at the start or in the middle anchors the pattern at
// the file's folder, `**` spans folders (see glob_to_regex). Malformed lines are skipped, as git
// does. All patterns are compiled into one RE2 set, so a path is checked in one linear pass.
// Immutable and thread-safe once parsed.
class ignore_rules {
public:
    enum class verdict { none, ignored, included };

    static ignore_rules parse(std::string_view text);

    bool empty() const { return rules_.empty(); }
    // The verdict of the last rule matching `relative` (relative to the .gitignore's folder).
    verdict check(std::string_view relative, bool is_directory) const;

private:
    struct rule {
        bool negated;
        bool directory_only;
    };
    struct compiled;
    std::shared_ptr<const compiled> set_;
    std::vector<rule> rules_;
};

}  // namespace gateway::tools
