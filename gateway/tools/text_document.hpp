#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::tools {

// Text split into lines, with the edits every editing tool shares: the file tools load a
// workspace file into one, the document tools wrap the chat's open document, and both apply the
// same operations and render the same numbered views. Lines are 1-based and exclude their line
// ending; "a\nb" and "a\nb\n" both have 2 lines, "" has none. Not thread-safe; cheap to build.
class text_document {
public:
    explicit text_document(std::string content);

    const std::string& content() const { return content_; }
    std::size_t line_count() const { return starts_.size(); }
    std::string_view line(std::size_t number) const;
    // The 1-based line holding byte `offset`.
    std::size_t line_of(std::size_t offset) const;
    std::size_t line_start(std::size_t number) const;
    // Offset just past line `number`'s ending (or the end of the content).
    std::size_t line_end_with_eol(std::size_t number) const;
    std::size_t word_count() const;
    // "\r\n" when the first line ending is CRLF, else "\n": what inserted lines use.
    std::string_view eol() const;
    bool ends_with_newline() const;

    // Lines first..last (clamped) in `cat -n` style: the number right-aligned in 6 columns, a
    // tab, the line.
    std::string numbered(std::size_t first, std::size_t last) const;
    // Every offset where `needle` occurs, non-overlapping.
    std::vector<std::size_t> find_all(std::string_view needle) const;

private:
    std::string content_;
    std::vector<std::size_t> starts_;
};

// The result of an edit: the new content, or a stable error code and a message that tells the
// model what to do next. `note` carries remarks for a successful edit (for example that the
// whitespace-tolerant match was used); first_line..last_line is the edited region in the new
// content, for snippets.
struct edit_outcome {
    std::string error_code;
    std::string message;
    std::string content;
    std::string note;
    std::size_t first_line = 0;
    std::size_t last_line = 0;
    explicit operator bool() const { return error_code.empty(); }
};

// Replaces the one occurrence of `old_text`. NO_MATCH (with the closest similar lines),
// AMBIGUOUS_MATCH (with the count and every line number), NO_CHANGE when old equals new. When
// the exact text is absent, a second tier compares line by line ignoring CRLF, trailing
// whitespace, tabs versus spaces and a uniform indentation shift; it applies only when exactly one
// place matches, re-indents `new_text` by the same shift and says so in `note`.
edit_outcome replace_unique(const text_document& doc, std::string_view old_text,
                            std::string_view new_text);

// Replaces the first exact occurrence of `find`; NO_MATCH otherwise.
edit_outcome replace_first(const text_document& doc, std::string_view find,
                           std::string_view replace);

enum class line_operation { insert, remove, replace };
// Line edits with explicit range checks (INVALID_RANGE). `insert` puts `text` before
// `start_line` (line_count() + 1 appends). `expected`, when given, must equal the current text of
// start..end (STALE_LINES otherwise, showing what is there now).
edit_outcome edit_lines(const text_document& doc, line_operation op, long long start_line,
                        long long end_line, std::string_view text, const std::string* expected);

// Inserts `text` after line `after_line` (0 = at the top).
edit_outcome insert_after(const text_document& doc, long long after_line, std::string_view text);

// Appends `text` on a new line (adding a line ending to the old last line when it lacks one).
edit_outcome append_text(const text_document& doc, std::string_view text);

// A numbered excerpt of `radius` lines around first..last.
std::string snippet(const text_document& doc, std::size_t first, std::size_t last,
                    std::size_t radius = 4);

// Up to `count` lines most similar to the first non-blank line of `text`, numbered, or "" when
// nothing is close.
std::string similar_lines(const text_document& doc, std::string_view text, std::size_t count = 3);

}  // namespace gateway::tools
