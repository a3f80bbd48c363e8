#include "gateway/config/glob.hpp"

#include <cstddef>

namespace gateway::config {

namespace {

// Matches one `[...]` class at pattern[p] against c; sets p past the class. False when malformed.
bool match_class(std::string_view pattern, std::size_t& p, char c, bool& matched) {
    std::size_t i = p + 1;
    bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negate) ++i;
    bool hit = false;
    bool first = true;
    while (i < pattern.size() && (first || pattern[i] != ']')) {
        first = false;
        char lo = pattern[i];
        if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            hit = hit || (c >= lo && c <= pattern[i + 2]);
            i += 3;
        } else {
            hit = hit || c == lo;
            ++i;
        }
    }
    if (i >= pattern.size()) return false;
    p = i + 1;
    matched = hit != negate;
    return true;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
    // Iterative matcher with single-star backtracking: linear in practice, no recursion.
    std::size_t p = 0, t = 0;
    std::size_t star_p = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star_p = ++p;
            star_t = t;
            continue;
        }
        if (p < pattern.size()) {
            if (pattern[p] == '?') {
                ++p;
                ++t;
                continue;
            }
            if (pattern[p] == '[') {
                std::size_t q = p;
                bool matched = false;
                if (match_class(pattern, q, text[t], matched)) {
                    if (matched) {
                        p = q;
                        ++t;
                        continue;
                    }
                } else if (text[t] == '[') {  // a lone '[' is literal
                    ++p;
                    ++t;
                    continue;
                }
            } else if (pattern[p] == text[t]) {
                ++p;
                ++t;
                continue;
            }
        }
        if (star_p == std::string_view::npos) return false;
        p = star_p;
        t = ++star_t;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

}  // namespace gateway::config
