#include "gateway/tools/ignore_rules.hpp"

#include "gateway/tools/glob.hpp"

#include <re2/set.h>

#include <string>

namespace gateway::tools {

struct ignore_rules::compiled {
    re2::RE2::Set set{[] {
                          re2::RE2::Options options;
                          options.set_log_errors(false);
                          options.set_dot_nl(true);
                          return options;
                      }(),
                      re2::RE2::ANCHOR_BOTH};
};

ignore_rules ignore_rules::parse(std::string_view text) {
    ignore_rules out;
    auto set = std::make_shared<compiled>();
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto newline = text.find('\n', pos);
        auto line = text.substr(pos, newline == std::string_view::npos ? text.npos : newline - pos);
        pos = newline == std::string_view::npos ? text.size() : newline + 1;
        if (line.ends_with('\r')) line.remove_suffix(1);
        // Trailing spaces are ignored unless escaped.
        while (line.ends_with(' ') && !line.ends_with("\\ ")) line.remove_suffix(1);
        if (line.empty() || line.starts_with('#')) continue;
        rule r{false, false};
        if (line.starts_with('!')) {
            r.negated = true;
            line.remove_prefix(1);
        } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
            line.remove_prefix(1);
        }
        if (line.ends_with('/')) {
            r.directory_only = true;
            line.remove_suffix(1);
        }
        if (line.empty()) continue;
        std::string error;
        auto regex = glob_to_regex(line, error);
        if (regex.empty() || set->set.Add(regex, nullptr) < 0) continue;
        out.rules_.push_back(r);
    }
    if (out.rules_.empty() || !set->set.Compile()) {
        out.rules_.clear();
        return out;
    }
    out.set_ = std::move(set);
    return out;
}

ignore_rules::verdict ignore_rules::check(std::string_view relative, bool is_directory) const {
    if (rules_.empty()) return verdict::none;
    std::vector<int> matched;
    if (!set_->set.Match(re2::StringPiece(relative.data(), relative.size()), &matched))
        return verdict::none;
    int last = -1;
    for (int index : matched)
        if (index > last &&
            (is_directory || !rules_[static_cast<std::size_t>(index)].directory_only))
            last = index;
    if (last < 0) return verdict::none;
    return rules_[static_cast<std::size_t>(last)].negated ? verdict::included : verdict::ignored;
}

}  // namespace gateway::tools
