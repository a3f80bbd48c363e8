#include "gateway/tools/search_files.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/glob.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>

namespace gateway::tools {

const tool_spec& search_files_tool::spec() const {
    static const tool_spec s{
        "search_files",
        "Search file contents with an RE2 regular expression (no backreferences or lookaround; "
        "always linear time). Results are `path:line: text` with context lines; .gitignore is "
        "honoured, binary and oversized files are skipped; at most 50 matches are shown.",
        category::search,
        R"({"type":"object","properties":{
            "pattern":{"type":"string","minLength":1,"description":"RE2 regular expression"},
            "path":{"type":"string","default":".","description":"folder or file to search"},
            "file_pattern":{"type":"string","description":"glob the file paths must match, e.g. *.py"},
            "case_sensitive":{"type":"boolean","default":false},
            "context_lines":{"type":"integer","minimum":0,"maximum":10,"default":1}},
            "required":["pattern"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

namespace {

constexpr std::size_t max_line_chars = 300;

std::size_t count_newlines(const char* begin, const char* end) {
    std::size_t n = 0;
    while ((begin = static_cast<const char*>(std::memchr(begin, '\n', end - begin)))) {
        ++n;
        ++begin;
    }
    return n;
}

struct search {
    const RE2& re;
    std::size_t context_lines;
    std::size_t cap;
    std::size_t matches = 0;
    std::size_t files_with_matches = 0;
    std::size_t skipped_binary = 0;
    std::size_t skipped_large = 0;
    std::string text;
    boost::json::array shown;

    void show_line(const std::string& path, std::size_t number, std::string_view line,
                   char separator) {
        if (line.ends_with('\r')) line.remove_suffix(1);
        bool cut = line.size() > max_line_chars;
        text += path;
        text += separator;
        text += std::to_string(number);
        text += separator;
        text += ' ';
        text.append(line.substr(0, max_line_chars));
        if (cut) text += " [line cut]";
        text += '\n';
    }

    void file(const std::string& path, std::string_view content) {
        re2::StringPiece whole(content.data(), content.size());
        if (!RE2::PartialMatch(whole, re)) return;  // one DFA pass rules most files out
        ++files_with_matches;
        const char* base = content.data();
        const char* end = base + content.size();
        std::size_t pos = 0, line_number = 1;
        const char* counted = base;
        std::size_t last_shown = 0;  // last line number printed for this file
        while (pos <= content.size()) {
            re2::StringPiece m;
            if (!re.Match(whole, pos, content.size(), RE2::UNANCHORED, &m, 1)) break;
            const char* at = m.data();
            line_number += count_newlines(counted, at);
            counted = at;
            auto line_begin = static_cast<std::size_t>(at - base);
            while (line_begin > 0 && base[line_begin - 1] != '\n') --line_begin;
            const char* newline = static_cast<const char*>(std::memchr(at, '\n', end - at));
            auto line_end = newline ? static_cast<std::size_t>(newline - base) : content.size();
            ++matches;
            if (matches <= cap)
                render(path, content, line_number, line_begin, line_end, last_shown);
            pos = line_end + 1;
        }
    }

    void render(const std::string& path, std::string_view content, std::size_t number,
                std::size_t begin, std::size_t end, std::size_t& last_shown) {
        // Context before: walk back line by line.
        std::vector<std::pair<std::size_t, std::string_view>> before;
        std::size_t cursor = begin;
        for (std::size_t k = 1; k <= context_lines && number > k && cursor > 0; ++k) {
            auto prev_end = cursor - 1;
            auto prev_begin = content.rfind('\n', prev_end == 0 ? 0 : prev_end - 1);
            prev_begin = prev_begin == std::string_view::npos || prev_end == 0 ? 0 : prev_begin + 1;
            if (number - k <= last_shown) break;
            before.emplace_back(number - k, content.substr(prev_begin, prev_end - prev_begin));
            cursor = prev_begin;
        }
        if (last_shown != 0 && (before.empty() ? number : before.back().first) > last_shown + 1)
            text += "--\n";
        for (auto it = before.rbegin(); it != before.rend(); ++it)
            show_line(path, it->first, it->second, '-');
        show_line(path, number, content.substr(begin, end - begin), ':');
        shown.push_back(boost::json::object{
            {"path", path},
            {"line", number},
            {"text", std::string(content.substr(begin, std::min(end - begin, max_line_chars)))}});
        last_shown = number;
        // Context after.
        std::size_t next = end + 1;
        for (std::size_t k = 1; k <= context_lines && next < content.size(); ++k) {
            auto newline = content.find('\n', next);
            auto stop = newline == std::string_view::npos ? content.size() : newline;
            show_line(path, number + k, content.substr(next, stop - next), '-');
            last_shown = number + k;
            next = stop + 1;
        }
    }
};

}  // namespace

tool_result search_files_tool::run(const boost::json::object& p, tool_context& context,
                                   mode) const {
    if (!context.files) return no_workspace();
    auto pattern = string_param(p, "pattern");
    auto base = normalize_relative(string_param(p, "path", "."));
    RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(bool_param(p, "case_sensitive", false));
    options.set_max_mem(64 << 20);
    RE2 re("(?m)" + pattern, options);
    if (!re.ok())
        return tool_result::failure(code::invalid_regex, "Invalid regular expression " +
                                                             quoted(pattern) + ": " + re.error() +
                                                             ". RE2 syntax has no backreferences "
                                                             "or lookaround.");
    glob file_filter;
    if (auto fp = optional_string_param(p, "file_pattern")) {
        std::string error;
        file_filter = glob::compile(*fp, error);
        if (!file_filter.valid()) return tool_result::failure(code::invalid_pattern, error);
    }
    search s{re, static_cast<std::size_t>(optional_int_param(p, "context_lines").value_or(1)),
             static_cast<std::size_t>(context.limits.search_cap)};
    auto prefix = base == "." ? std::size_t{0} : base.size() + 1;
    std::string buffer;
    auto limit = context.limits.max_search_file_bytes;
    auto selected = [&](std::string_view relative) {
        if (!file_filter.valid()) return true;
        if (prefix && relative.size() > prefix) relative.remove_prefix(prefix);
        return file_filter.matches(relative);
    };
    // Review mode: files with pending edits are searched as the agent left them.
    std::vector<std::string_view> pending_seen;
    auto status = walk(context.files->files(), base, {}, [&](const walk_entry& e) {
        if (e.type != entry_type::file) return walk_action::next;
        if (!selected(e.path)) return walk_action::next;
        if (const auto* pending = context.pending ? context.pending->find(e.path) : nullptr) {
            pending_seen.push_back(context.pending->files.find(e.path)->first);
            if (*pending && (*pending)->size() <= limit) s.file(e.path, **pending);
            return walk_action::next;
        }
        auto fd = open_entry(e.dir_fd, e.name);
        if (!fd) return walk_action::next;
        switch (read_text(fd.get(), limit, buffer)) {
            case read_outcome::ok:
                s.file(e.path, buffer);
                break;
            case read_outcome::too_large:
                ++s.skipped_large;
                break;
            case read_outcome::binary:
                ++s.skipped_binary;
                break;
            case read_outcome::failed:
                break;
        }
        return walk_action::next;
    });
    if (!status) return tool_result::failure(status.error_code, status.message);
    if (context.pending)
        for (const auto& [path, content] : context.pending->files) {
            bool inside = base == "." || (path.size() > base.size() && path.starts_with(base) &&
                                          path[base.size()] == '/');
            if (!content || !inside || content->size() > limit || !selected(path)) continue;
            if (std::find(pending_seen.begin(), pending_seen.end(), path) == pending_seen.end())
                s.file(path, *content);  // created by a pending edit: not on disk yet
        }

    std::string header;
    if (s.matches == 0) {
        header = "No matches for " + quoted(pattern) + " in " + quoted(base) + ".";
        if (!bool_param(p, "case_sensitive", false)) header += " (case-insensitive)";
    } else {
        header = "Found " + std::to_string(s.matches) + (s.matches == 1 ? " match" : " matches") +
                 " in " + std::to_string(s.files_with_matches) +
                 (s.files_with_matches == 1 ? " file" : " files");
        if (s.matches > s.cap) header += ", showing the first " + std::to_string(s.cap);
        header += ":";
    }
    header += "\n";
    std::string footer;
    if (s.matches > s.cap)
        footer += "Narrow the search with a more specific pattern, a path or a file_pattern.\n";
    if (s.skipped_binary || s.skipped_large)
        footer += "Skipped " + std::to_string(s.skipped_binary) + " binary and " +
                  std::to_string(s.skipped_large) + " oversized files.\n";
    auto text = cap_text(header + s.text, context.limits.max_result_chars,
                         "Narrow the search or lower context_lines.") +
                footer;
    return tool_result::success(std::move(text), {{"matches", std::move(s.shown)},
                                                  {"total", s.matches},
                                                  {"files", s.files_with_matches},
                                                  {"truncated", s.matches > s.cap}});
}

}  // namespace gateway::tools
