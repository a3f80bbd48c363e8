#include "gateway/tools/glob.hpp"

#include <re2/re2.h>

namespace gateway::tools {

namespace {

void append_literal(std::string& out, char c) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
}

}  // namespace

std::string glob_to_regex(std::string_view glob, std::string& error) {
    std::string_view pattern = glob;
    bool anchored = false;
    if (pattern.starts_with('/')) {
        anchored = true;
        pattern.remove_prefix(1);
    }
    while (pattern.size() > 1 && pattern.ends_with('/')) pattern.remove_suffix(1);
    if (pattern.find('/') != std::string_view::npos) anchored = true;

    std::string out = anchored ? "" : "(?:.*/)?";
    int braces = 0;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        bool at_component_start = i == 0 || pattern[i - 1] == '/';
        if (c == '*' && i + 1 < pattern.size() && pattern[i + 1] == '*' && at_component_start &&
            (i + 2 == pattern.size() || pattern[i + 2] == '/')) {
            if (i + 2 == pattern.size()) {
                out += ".*";  // `a/**`: everything beneath
            } else {
                out += "(?:.*/)?";  // `**/`: zero or more components
                ++i;
            }
            ++i;
        } else if (c == '*') {
            while (i + 1 < pattern.size() && pattern[i + 1] == '*') ++i;
            out += "[^/]*";
        } else if (c == '?') {
            out += "[^/]";
        } else if (c == '[') {
            auto close = pattern.find(']', i + 2);
            if (close == std::string_view::npos) {
                error = "unbalanced `[` in glob `" + std::string(glob) + "`";
                return {};
            }
            out += '[';
            std::size_t j = i + 1;
            if (pattern[j] == '!' || pattern[j] == '^') out += '^', ++j;
            for (; j < close; ++j) {
                if (pattern[j] == '\\' || pattern[j] == '[' || pattern[j] == ']')
                    out.push_back('\\');
                out.push_back(pattern[j]);
            }
            out += ']';
            i = close;
        } else if (c == '{') {
            ++braces;
            out += "(?:";
        } else if (c == '}' && braces > 0) {
            --braces;
            out += ')';
        } else if (c == ',' && braces > 0) {
            out += '|';
        } else if (c == '\\' && i + 1 < pattern.size()) {
            append_literal(out, pattern[++i]);
        } else {
            append_literal(out, c);
        }
    }
    if (braces != 0) {
        error = "unbalanced `{` in glob `" + std::string(glob) + "`";
        return {};
    }
    return out;
}

glob glob::compile(std::string_view pattern, std::string& error) {
    glob out;
    auto regex = glob_to_regex(pattern, error);
    if (regex.empty()) {
        if (error.empty()) error = "empty glob";
        return out;
    }
    RE2::Options options;
    options.set_log_errors(false);
    options.set_dot_nl(true);
    auto re = std::make_shared<const RE2>(regex, options);
    if (!re->ok()) {
        error = "invalid glob `" + std::string(pattern) + "`: " + re->error();
        return out;
    }
    out.re_ = std::move(re);
    return out;
}

bool glob::matches(std::string_view relative_path) const {
    return re_ &&
           RE2::FullMatch(re2::StringPiece(relative_path.data(), relative_path.size()), *re_);
}

}  // namespace gateway::tools
