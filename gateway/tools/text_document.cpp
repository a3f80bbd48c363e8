#include "gateway/tools/text_document.hpp"

#include "gateway/tools/error_codes.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace gateway::tools {

text_document::text_document(std::string content) : content_(std::move(content)) {
    if (content_.empty()) return;
    starts_.push_back(0);
    const char* base = content_.data();
    const char* end = base + content_.size();
    for (const char* p = base; (p = static_cast<const char*>(std::memchr(p, '\n', end - p)));) {
        ++p;
        if (p == end) break;
        starts_.push_back(static_cast<std::size_t>(p - base));
    }
}

std::size_t text_document::line_start(std::size_t number) const {
    if (number == 0 || number > starts_.size()) return content_.size();
    return starts_[number - 1];
}

std::size_t text_document::line_end_with_eol(std::size_t number) const {
    return number >= starts_.size() ? content_.size() : starts_[number];
}

std::string_view text_document::line(std::size_t number) const {
    if (number == 0 || number > starts_.size()) return {};
    std::string_view text(content_);
    auto begin = starts_[number - 1];
    auto end = line_end_with_eol(number);
    auto view = text.substr(begin, end - begin);
    if (view.ends_with('\n')) view.remove_suffix(1);
    if (view.ends_with('\r')) view.remove_suffix(1);
    return view;
}

std::size_t text_document::line_of(std::size_t offset) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    return static_cast<std::size_t>(it - starts_.begin());
}

std::size_t text_document::word_count() const {
    std::size_t words = 0;
    bool in_word = false;
    for (unsigned char c : content_) {
        bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        if (!space && !in_word) ++words;
        in_word = !space;
    }
    return words;
}

std::string_view text_document::eol() const {
    auto newline = content_.find('\n');
    return newline != std::string::npos && newline > 0 && content_[newline - 1] == '\r' ? "\r\n"
                                                                                        : "\n";
}

bool text_document::ends_with_newline() const {
    return content_.ends_with('\n');
}

std::string text_document::numbered(std::size_t first, std::size_t last) const {
    std::string out;
    first = std::max<std::size_t>(first, 1);
    last = std::min(last, line_count());
    char number[24];
    for (std::size_t n = first; n <= last; ++n) {
        std::snprintf(number, sizeof number, "%6zu\t", n);
        out += number;
        out += line(n);
        out += '\n';
    }
    return out;
}

std::vector<std::size_t> text_document::find_all(std::string_view needle) const {
    std::vector<std::size_t> found;
    if (needle.empty()) return found;
    for (auto pos = content_.find(needle); pos != std::string::npos;
         pos = content_.find(needle, pos + needle.size()))
        found.push_back(pos);
    return found;
}

namespace {

edit_outcome failed(std::string code, std::string message) {
    edit_outcome out;
    out.error_code = std::move(code);
    out.message = std::move(message);
    return out;
}

std::string spliced(const std::string& content, std::size_t offset, std::size_t length,
                    std::string_view text) {
    std::string out;
    out.reserve(content.size() - length + text.size());
    out.append(content, 0, offset);
    out.append(text);
    out.append(content, offset + length);
    return out;
}

edit_outcome edited(const std::string& content, std::size_t offset, std::size_t length,
                    std::string_view text) {
    edit_outcome out;
    out.content = spliced(content, offset, length, text);
    text_document after(out.content);
    out.first_line = std::max<std::size_t>(after.line_of(offset), 1);
    auto end = offset + text.size();
    out.last_line = std::max(out.first_line, after.line_of(end > offset ? end - 1 : offset));
    return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto newline = text.find('\n', pos);
        auto line = text.substr(pos, newline == std::string_view::npos ? text.npos : newline - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        lines.push_back(line);
        if (newline == std::string_view::npos) break;
        pos = newline + 1;
    }
    if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // text ended with a newline
    return lines;
}

// A line as the tolerant tier sees it: its indentation width (a tab counts 4) and the rest
// without trailing whitespace.
struct normalized {
    int indent = 0;
    std::string_view rest;
};

normalized normalize(std::string_view line) {
    normalized out;
    std::size_t i = 0;
    for (; i < line.size() && (line[i] == ' ' || line[i] == '\t'); ++i)
        out.indent += line[i] == '\t' ? 4 : 1;
    auto rest = line.substr(i);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r'))
        rest.remove_suffix(1);
    out.rest = rest;
    return out;
}

std::string join_line_numbers(const text_document& doc, const std::vector<std::size_t>& offsets) {
    std::string out;
    std::size_t previous = 0;
    for (auto offset : offsets) {
        auto number = doc.line_of(offset);
        if (number == previous) continue;
        if (!out.empty()) out += ", ";
        out += std::to_string(number);
        previous = number;
    }
    return out;
}

std::string no_match_message(const text_document& doc, std::string_view old_text) {
    std::string message =
        "No match for the text to replace; the file was not modified. The text must match "
        "exactly, including whitespace and line breaks.";
    auto similar = similar_lines(doc, old_text);
    if (!similar.empty()) {
        message += " The most similar lines are:\n";
        message += similar;
        message += "Read the file around them and retry with the exact text.";
    } else {
        message += " Nothing similar was found; read the file first.";
    }
    return message;
}

// The second tier: a unique line-by-line match modulo whitespace and a uniform indent shift.
edit_outcome tolerant_replace(const text_document& doc, std::string_view old_text,
                              std::string_view new_text) {
    auto old_lines = split_lines(old_text);
    while (!old_lines.empty() && normalize(old_lines.back()).rest.empty()) old_lines.pop_back();
    std::size_t k = old_lines.size();
    if (k == 0 || k > doc.line_count()) return failed(code::no_match, {});
    std::vector<normalized> wanted;
    for (auto line : old_lines) wanted.push_back(normalize(line));

    std::size_t matches = 0, match_start = 0;
    int match_shift = 0;
    std::vector<std::size_t> match_lines;
    for (std::size_t start = 1; start + k - 1 <= doc.line_count(); ++start) {
        bool ok = true, shift_known = false;
        int shift = 0;
        for (std::size_t j = 0; j < k && ok; ++j) {
            auto have = normalize(doc.line(start + j));
            if (have.rest != wanted[j].rest) {
                ok = false;
            } else if (!have.rest.empty()) {
                int delta = have.indent - wanted[j].indent;
                if (!shift_known) shift = delta, shift_known = true;
                ok = delta == shift;
            }
        }
        if (!ok) continue;
        ++matches;
        match_start = start;
        match_shift = shift;
        match_lines.push_back(start);
    }
    if (matches == 0) return failed(code::no_match, {});
    if (matches > 1) {
        std::string lines;
        for (auto n : match_lines) lines += (lines.empty() ? "" : ", ") + std::to_string(n);
        return failed(code::ambiguous_match,
                      "The text matches " + std::to_string(matches) +
                          " places when whitespace is ignored (starting at lines " + lines +
                          "); the file was not modified. Include more surrounding lines so the "
                          "match is unique.");
    }
    // Re-indent the replacement by the shift, in the file's indentation style.
    bool tabs = doc.line(match_start).starts_with('\t');
    std::string replacement;
    auto eol = doc.eol();
    auto new_lines = new_text.empty() ? std::vector<std::string_view>{} : split_lines(new_text);
    for (auto line : new_lines) {
        auto shape = normalize(line);
        if (!shape.rest.empty()) {
            int width = std::max(0, shape.indent + match_shift);
            replacement +=
                tabs && width % 4 == 0 ? std::string(width / 4, '\t') : std::string(width, ' ');
            replacement += shape.rest;
        }
        replacement += eol;
    }
    auto begin = doc.line_start(match_start);
    auto end = doc.line_end_with_eol(match_start + k - 1);
    bool had_eol = end > begin && doc.content()[end - 1] == '\n';
    if (!had_eol && replacement.ends_with(eol)) replacement.resize(replacement.size() - eol.size());
    auto out = edited(doc.content(), begin, end - begin, replacement);
    out.note =
        "The exact text was not found; a whitespace-tolerant match (line endings, trailing "
        "spaces, tabs, indentation) was used at line " +
        std::to_string(match_start) + ".";
    return out;
}

}  // namespace

edit_outcome replace_unique(const text_document& doc, std::string_view old_text,
                            std::string_view new_text) {
    if (old_text == new_text)
        return failed(code::no_change,
                      "The old and new text are identical; nothing to change. The file was not "
                      "modified.");
    auto found = doc.find_all(old_text);
    if (found.size() == 1) return edited(doc.content(), found[0], old_text.size(), new_text);
    if (found.size() > 1)
        return failed(code::ambiguous_match,
                      "The text occurs " + std::to_string(found.size()) + " times (at lines " +
                          join_line_numbers(doc, found) +
                          "); the file was not modified. Include more surrounding lines so the "
                          "match is unique.");
    auto tolerant = tolerant_replace(doc, old_text, new_text);
    if (tolerant || tolerant.error_code == code::ambiguous_match) return tolerant;
    return failed(code::no_match, no_match_message(doc, old_text));
}

edit_outcome replace_first(const text_document& doc, std::string_view find,
                           std::string_view replace) {
    auto pos = find.empty() ? std::string::npos : doc.content().find(find);
    if (pos == std::string::npos)
        return failed(code::no_match,
                      "The text to replace was not found in the document; nothing was changed. "
                      "Use search_document to find the exact text first.");
    if (find == replace)
        return failed(code::no_change, "The old and new text are identical; nothing to change.");
    return edited(doc.content(), pos, find.size(), replace);
}

namespace {

std::string range_help(const text_document& doc) {
    return doc.line_count() == 0 ? std::string(" The file is empty.")
                                 : " Valid lines are 1-" + std::to_string(doc.line_count()) +
                                       "; use read_file to see them.";
}

// `text` as whole lines ending with the document's line ending.
std::string as_lines(const text_document& doc, std::string_view text) {
    std::string out(text);
    if (!out.ends_with('\n')) out += doc.eol();
    return out;
}

std::string strip_final_newline(std::string_view text) {
    if (text.ends_with('\n')) text.remove_suffix(1);
    if (text.ends_with('\r')) text.remove_suffix(1);
    std::string out;
    for (char c : text)
        if (c != '\r') out.push_back(c);
    return out;
}

}  // namespace

edit_outcome edit_lines(const text_document& doc, line_operation op, long long start_line,
                        long long end_line, std::string_view text, const std::string* expected) {
    auto count = static_cast<long long>(doc.line_count());
    auto total = " (the file has " + std::to_string(count) + " lines).";
    if (op == line_operation::insert) {
        if (start_line < 1 || start_line > count + 1)
            return failed(code::invalid_range, "start_line " + std::to_string(start_line) +
                                                   " is out of range for insert: use 1-" +
                                                   std::to_string(count + 1) + total);
        end_line = start_line;
    } else {
        if (end_line == 0) end_line = start_line;
        if (start_line < 1 || start_line > count)
            return failed(code::invalid_range, "start_line " + std::to_string(start_line) +
                                                   " is out of range" + total + range_help(doc));
        if (end_line < start_line)
            return failed(code::invalid_range, "end_line " + std::to_string(end_line) +
                                                   " is before start_line " +
                                                   std::to_string(start_line) + ".");
        if (end_line > count)
            return failed(code::invalid_range, "end_line " + std::to_string(end_line) +
                                                   " is past the end" + total + range_help(doc));
    }
    if (expected && start_line <= count) {
        std::string current;
        auto last = std::min(end_line, count);
        for (auto n = start_line; n <= last; ++n) {
            if (n > start_line) current += '\n';
            current += doc.line(static_cast<std::size_t>(n));
        }
        if (strip_final_newline(*expected) != current)
            return failed(code::stale_lines,
                          "The lines " + std::to_string(start_line) + "-" + std::to_string(last) +
                              " no longer hold the expected text; the file was not modified. "
                              "They are now:\n" +
                              doc.numbered(static_cast<std::size_t>(start_line),
                                           static_cast<std::size_t>(last)) +
                              "Re-read the file and retry with current line numbers.");
    }
    auto first = static_cast<std::size_t>(start_line);
    auto last = static_cast<std::size_t>(end_line);
    const auto& content = doc.content();
    switch (op) {
        case line_operation::insert: {
            auto at = doc.line_start(first);
            std::string lines = as_lines(doc, text);
            if (at == content.size() && !content.empty() && !content.ends_with('\n'))
                lines.insert(0, doc.eol());
            return edited(content, at, 0, lines);
        }
        case line_operation::remove: {
            auto begin = doc.line_start(first);
            auto end = doc.line_end_with_eol(last);
            // Deleting the final line of a file without a trailing newline: take the ending before
            // it.
            if (end == content.size() && !content.ends_with('\n') && begin > 0) {
                begin -= 1;
                if (begin > 0 && content[begin - 1] == '\r') begin -= 1;
            }
            auto out = edited(content, begin, end - begin, {});
            out.first_line = out.last_line =
                std::min(first, text_document(out.content).line_count());
            return out;
        }
        case line_operation::replace: {
            auto begin = doc.line_start(first);
            auto end = doc.line_end_with_eol(last);
            bool had_eol = end > begin && content[end - 1] == '\n';
            std::string lines = had_eol ? as_lines(doc, text) : strip_final_newline(text);
            return edited(content, begin, end - begin, lines);
        }
    }
    return failed(code::invalid_range, "unknown operation");
}

edit_outcome insert_after(const text_document& doc, long long after_line, std::string_view text) {
    auto count = static_cast<long long>(doc.line_count());
    if (after_line < 0 || after_line > count)
        return failed(code::invalid_range, "insert_line " + std::to_string(after_line) +
                                               " is out of range: use 0-" + std::to_string(count) +
                                               " (0 inserts at the top; the file has " +
                                               std::to_string(count) + " lines).");
    return edit_lines(doc, line_operation::insert, after_line + 1, after_line + 1, text, nullptr);
}

edit_outcome append_text(const text_document& doc, std::string_view text) {
    std::string addition;
    if (!doc.content().empty() && !doc.ends_with_newline()) addition += doc.eol();
    addition += text;
    return edited(doc.content(), doc.content().size(), 0, addition);
}

std::string snippet(const text_document& doc, std::size_t first, std::size_t last,
                    std::size_t radius) {
    if (doc.line_count() == 0) return "(the file is now empty)\n";
    auto from = first > radius ? first - radius : 1;
    return doc.numbered(from, last + radius);
}

namespace {

// Dice coefficient over character bigrams: cheap, and good at "same line, small typo".
double similarity(std::string_view a, std::string_view b) {
    if (a.size() < 2 || b.size() < 2) return a == b ? 1.0 : 0.0;
    std::unordered_map<unsigned, int> bigrams;
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
        ++bigrams[static_cast<unsigned char>(a[i]) << 8 | static_cast<unsigned char>(a[i + 1])];
    int shared = 0;
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
        auto it = bigrams.find(static_cast<unsigned char>(b[i]) << 8 |
                               static_cast<unsigned char>(b[i + 1]));
        if (it != bigrams.end() && it->second > 0) --it->second, ++shared;
    }
    return 2.0 * shared / static_cast<double>(a.size() + b.size() - 2);
}

}  // namespace

std::string similar_lines(const text_document& doc, std::string_view text, std::size_t count) {
    std::string_view probe;
    for (auto line : split_lines(text)) {
        auto shape = normalize(line);
        if (!shape.rest.empty()) {
            probe = shape.rest;
            break;
        }
    }
    if (probe.empty()) return {};
    std::vector<std::pair<double, std::size_t>> scored;
    for (std::size_t n = 1; n <= doc.line_count(); ++n) {
        auto candidate = normalize(doc.line(n)).rest;
        if (candidate.empty()) continue;
        auto score = similarity(probe, candidate);
        if (score >= 0.4) scored.emplace_back(score, n);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    if (scored.size() > count) scored.resize(count);
    std::sort(scored.begin(), scored.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string out;
    for (auto& [score, n] : scored) out += doc.numbered(n, n);
    return out;
}

}  // namespace gateway::tools
