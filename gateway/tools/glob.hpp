#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace gateway::tools {

// Translates a glob into an RE2 pattern over '/'-separated relative paths, so matching is linear
// time whatever the pattern. `*` matches within one path component, `?` one character other than
// '/', `[abc]`, `[a-z]`, `[!x]` and `[^x]` are classes, `{a,b}` alternatives, and `**` any number
// of components (`**/x`, `a/**`, `a/**/b`). A pattern without a '/' (other than a trailing one)
// matches the last component at any depth, as .gitignore does; one with a '/' is anchored at the
// base (a leading '/' only anchors). Returns "" and sets `error` for an unbalanced `[` or `{`.
std::string glob_to_regex(std::string_view glob, std::string& error);

// A compiled glob. Copyable (the compiled program is shared, immutable and thread-safe).
class glob {
public:
    // nullptr-like (`!valid()`) with `error` set when the pattern is malformed.
    static glob compile(std::string_view pattern, std::string& error);

    bool valid() const { return static_cast<bool>(re_); }
    bool matches(std::string_view relative_path) const;

private:
    std::shared_ptr<const re2::RE2> re_;
};

}  // namespace gateway::tools
