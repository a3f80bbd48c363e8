#pragma once

// The built-in rules, each written from its format's public definition: a name (shown in
// `[REDACTED:<name>]`, metrics and logs), the set it belongs to, an RE2 pattern, and a validator
// for what a pattern cannot say (a checksum, an entropy, a length).
#include <cstddef>
#include <span>
#include <string_view>

namespace gateway::detection {

// The detector sets a guardrail's `detect` may name.
inline constexpr std::string_view secrets_set = "secrets";
inline constexpr std::string_view pii_set = "pii";
bool known_set(std::string_view name);

// A candidate span [begin, end) found by a rule's pattern in `text`. A validator may move the
// span's ends (a private-key block's end is found, not matched) and returns false to drop it.
using validator = bool (*)(std::string_view text, std::size_t& begin, std::size_t& end);

struct rule {
    std::string_view name;
    std::string_view set;      // secrets_set or pii_set
    std::string_view pattern;  // RE2; when it has a capture group, group 1 is the span
    std::size_t max_bytes;     // the longest span it reports; a longer candidate is dropped
    validator valid;           // nullptr: every match counts
    std::string_view about;    // one line for docs/operations.md
};

// Every built-in rule, in priority order (an earlier rule wins a tie between equal spans).
std::span<const rule> builtin_rules();

}  // namespace gateway::detection
