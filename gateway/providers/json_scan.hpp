#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace gateway::providers {

// Helpers for scanning JSON text for a few members without parsing all of it (the request's
// model, an answer's usage). Bodies are mostly string content, which these skip with memchr.

inline std::size_t json_skip_space(std::string_view t, std::size_t i) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
    return i;
}

// The index just past the string starting at t[i] (a quote), or npos when it does not end.
// A quote ends the string when an even number of backslashes precedes it.
inline std::size_t json_string_end(std::string_view t, std::size_t i) {
    for (++i; i < t.size();) {
        const auto* quote = static_cast<const char*>(std::memchr(t.data() + i, '"', t.size() - i));
        if (!quote) return std::string_view::npos;
        auto at = static_cast<std::size_t>(quote - t.data());
        std::size_t backslashes = 0;
        while (at - backslashes > i && t[at - backslashes - 1] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return at + 1;
        i = at + 1;
    }
    return std::string_view::npos;
}

}  // namespace gateway::providers
