#include "gateway/tools/search_files.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/glob.hpp"
#include "gateway/tools/search_pattern.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

#include <fcntl.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

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

// What one file contributed: its match count and the rendering of its first `cap` matches.
// `ends[i]` is where the text of its first i + 1 matches (with their context) ends, so the merge
// can take as many as the cap still allows.
struct file_hits {
    std::size_t order = 0;  // position in the walk: results are shown in walk order
    std::string path;
    std::size_t count = 0;
    std::string text;
    std::vector<std::size_t> ends;
    std::vector<std::pair<std::size_t, std::string>> shown;  // line number, text
};

// Finds and renders the matches in one file's content.
class file_searcher {
public:
    file_searcher(const RE2& re, std::size_t context_lines, std::size_t cap)
        : re_(re), context_lines_(context_lines), cap_(cap) {}

    // Appends a file_hits to `out` when the file matches.
    void search(std::size_t order, const std::string& path, std::string_view content,
                std::vector<file_hits>& out) const {
        re2::StringPiece whole(content.data(), content.size());
        if (!RE2::PartialMatch(whole, re_)) return;  // one DFA pass rules most files out
        file_hits hits;
        hits.order = order;
        hits.path = path;
        const char* base = content.data();
        const char* end = base + content.size();
        std::size_t pos = 0, line_number = 1;
        const char* counted = base;
        std::size_t last_shown = 0;  // last line number printed for this file
        while (pos <= content.size()) {
            re2::StringPiece m;
            if (!re_.Match(whole, pos, content.size(), RE2::UNANCHORED, &m, 1)) break;
            const char* at = m.data();
            line_number += count_newlines(counted, at);
            counted = at;
            auto line_begin = static_cast<std::size_t>(at - base);
            while (line_begin > 0 && base[line_begin - 1] != '\n') --line_begin;
            const char* newline = static_cast<const char*>(std::memchr(at, '\n', end - at));
            auto line_end = newline ? static_cast<std::size_t>(newline - base) : content.size();
            ++hits.count;
            if (hits.count <= cap_)
                render(hits, content, line_number, line_begin, line_end, last_shown);
            pos = line_end + 1;
        }
        out.push_back(std::move(hits));
    }

private:
    static void show_line(std::string& text, const std::string& path, std::size_t number,
                          std::string_view line, char separator) {
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

    void render(file_hits& hits, std::string_view content, std::size_t number, std::size_t begin,
                std::size_t end, std::size_t& last_shown) const {
        auto& text = hits.text;
        // Context before: walk back line by line.
        std::vector<std::pair<std::size_t, std::string_view>> before;
        std::size_t cursor = begin;
        for (std::size_t k = 1; k <= context_lines_ && number > k && cursor > 0; ++k) {
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
            show_line(text, hits.path, it->first, it->second, '-');
        show_line(text, hits.path, number, content.substr(begin, end - begin), ':');
        hits.shown.emplace_back(number,
                                content.substr(begin, std::min(end - begin, max_line_chars)));
        last_shown = number;
        // Context after.
        std::size_t next = end + 1;
        for (std::size_t k = 1; k <= context_lines_ && next < content.size(); ++k) {
            auto newline = content.find('\n', next);
            auto stop = newline == std::string_view::npos ? content.size() : newline;
            show_line(text, hits.path, number + k, content.substr(next, stop - next), '-');
            last_shown = number + k;
            next = stop + 1;
        }
        hits.ends.push_back(text.size());
    }

    const RE2& re_;
    std::size_t context_lines_;
    std::size_t cap_;
};

// One file to search: opened from its folder by name (the folder's descriptor shared by the
// folder's files), or a pending edit's content in review mode.
struct file_job {
    std::size_t order = 0;
    std::string path;
    std::shared_ptr<const unique_fd> folder;
    std::string name;
    const std::string* content = nullptr;
};

// The files the walk finds, searched by a few threads while the walk goes on. The queue is
// bounded, so at most `capacity` folders stay open on its account.
class parallel_search {
public:
    parallel_search(const search_pattern& pattern, const file_searcher& searcher, std::size_t limit)
        : pattern_(pattern), searcher_(searcher), limit_(limit) {
        auto threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
        for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~parallel_search() { stop(); }

    void add(file_job job) {
        job.order = next_order_++;
        std::unique_lock lock(mutex_);
        room_.wait(lock, [&] { return queue_.size() < capacity || closed_; });
        if (closed_) return;  // a worker failed: finish() reports it
        queue_.push_back(std::move(job));
        lock.unlock();
        ready_.notify_one();
    }

    // Waits for every file to be searched; returns the files that matched in walk order.
    std::vector<file_hits> finish() {
        stop();
        if (failure_) std::rethrow_exception(failure_);
        std::sort(hits_.begin(), hits_.end(),
                  [](const file_hits& a, const file_hits& b) { return a.order < b.order; });
        return std::move(hits_);
    }

    std::size_t skipped_binary = 0;
    std::size_t skipped_large = 0;

private:
    static constexpr std::size_t capacity = 256;

    // Lets the workers finish the queue and joins them.
    void stop() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        ready_.notify_all();
        for (auto& w : workers_) w.join();
        workers_.clear();
    }

    void work() {
        std::vector<file_hits> found;
        std::size_t binary = 0, large = 0;
        try {
            search_pattern::scanner scanner(pattern_);
            std::string buffer;
            file_job job;
            while (next(job)) {
                std::string_view content;
                if (job.content) {
                    content = *job.content;
                } else {
                    auto fd = open_entry(job.folder->get(), job.name.c_str());
                    job.folder.reset();
                    if (!fd) continue;
                    auto outcome = read_text(fd.get(), limit_, buffer);
                    if (outcome == read_outcome::too_large) ++large;
                    if (outcome == read_outcome::binary) ++binary;
                    if (outcome != read_outcome::ok) continue;
                    content = buffer;
                }
                if (pattern_.may_match(content, scanner))
                    searcher_.search(job.order, job.path, content, found);
            }
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!failure_) failure_ = std::current_exception();
            closed_ = true;
            queue_.clear();
            room_.notify_all();
        }
        std::lock_guard lock(mutex_);
        std::move(found.begin(), found.end(), std::back_inserter(hits_));
        skipped_binary += binary;
        skipped_large += large;
    }

    bool next(file_job& job) {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || closed_; });
        if (queue_.empty()) return false;
        job = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        room_.notify_one();
        return true;
    }

    const search_pattern& pattern_;
    const file_searcher& searcher_;
    std::size_t limit_;
    std::size_t next_order_ = 0;
    std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<file_job> queue_;
    bool closed_ = false;
    std::exception_ptr failure_;
    std::vector<file_hits> hits_;
    std::vector<std::thread> workers_;
};

// The descriptor of the folder the walk is in, duplicated once per visit of a folder so that
// worker threads can open its files after the walk has moved on. The walk visits one folder's
// entries at a time (a subfolder's in between), so the parent path names the folder.
class folder_handles {
public:
    std::shared_ptr<const unique_fd> of(const walk_entry& e) {
        auto parent = std::string_view(e.path).substr(0, e.path.size() - std::strlen(e.name));
        if (!current_ || parent != parent_) {
            current_ = std::make_shared<const unique_fd>(::fcntl(e.dir_fd, F_DUPFD_CLOEXEC, 0));
            parent_ = parent;
        }
        return current_;
    }

private:
    std::shared_ptr<const unique_fd> current_;
    std::string parent_;
};

}  // namespace

tool_result search_files_tool::run(const boost::json::object& p, tool_context& context,
                                   mode) const {
    if (!context.files) return no_workspace();
    auto pattern = string_param(p, "pattern");
    auto base = normalize_relative(string_param(p, "path", "."));
    std::string error;
    auto compiled = search_pattern::compile(pattern, bool_param(p, "case_sensitive", false), error);
    if (!compiled)
        return tool_result::failure(code::invalid_regex, "Invalid regular expression " +
                                                             quoted(pattern) + ": " + error +
                                                             ". RE2 syntax has no backreferences "
                                                             "or lookaround.");
    glob file_filter;
    if (auto fp = optional_string_param(p, "file_pattern")) {
        file_filter = glob::compile(*fp, error);
        if (!file_filter.valid()) return tool_result::failure(code::invalid_pattern, error);
    }
    auto cap = static_cast<std::size_t>(context.limits.search_cap);
    file_searcher searcher(
        compiled->regex(),
        static_cast<std::size_t>(optional_int_param(p, "context_lines").value_or(1)), cap);
    auto prefix = base == "." ? std::size_t{0} : base.size() + 1;
    auto limit = context.limits.max_search_file_bytes;
    auto selected = [&](std::string_view relative) {
        if (!file_filter.valid()) return true;
        if (prefix && relative.size() > prefix) relative.remove_prefix(prefix);
        return file_filter.matches(relative);
    };
    parallel_search files(*compiled, searcher, limit);
    folder_handles folders;
    // Review mode: files with pending edits are searched as the agent left them.
    std::vector<std::string_view> pending_seen;
    auto status = walk(context.files->files(), base, {}, [&](const walk_entry& e) {
        if (e.type != entry_type::file) return walk_action::next;
        if (!selected(e.path)) return walk_action::next;
        if (const auto* pending = context.pending ? context.pending->find(e.path) : nullptr) {
            pending_seen.push_back(context.pending->files.find(e.path)->first);
            if (*pending && (*pending)->size() <= limit)
                files.add({0, e.path, nullptr, {}, &**pending});
            return walk_action::next;
        }
        files.add({0, e.path, folders.of(e), e.name, nullptr});
        return walk_action::next;
    });
    if (!status) return tool_result::failure(status.error_code, status.message);
    if (context.pending)
        for (const auto& [path, content] : context.pending->files) {
            bool inside = base == "." || (path.size() > base.size() && path.starts_with(base) &&
                                          path[base.size()] == '/');
            if (!content || !inside || content->size() > limit || !selected(path)) continue;
            if (std::find(pending_seen.begin(), pending_seen.end(), path) == pending_seen.end())
                files.add({0, path, nullptr, {}, &*content});  // created by a pending edit
        }
    auto hits = files.finish();

    // The first `cap` matches in walk order are shown; all of them are counted.
    std::size_t matches = 0, room = cap;
    std::string shown_text;
    boost::json::array shown;
    for (const auto& h : hits) {
        matches += h.count;
        auto take = std::min(room, h.ends.size());
        if (take == 0) continue;
        shown_text.append(h.text, 0, h.ends[take - 1]);
        for (std::size_t i = 0; i < take; ++i)
            shown.push_back(boost::json::object{
                {"path", h.path}, {"line", h.shown[i].first}, {"text", h.shown[i].second}});
        room -= take;
    }
    auto files_with_matches = hits.size();

    std::string header;
    if (matches == 0) {
        header = "No matches for " + quoted(pattern) + " in " + quoted(base) + ".";
        if (!bool_param(p, "case_sensitive", false)) header += " (case-insensitive)";
    } else {
        header = "Found " + std::to_string(matches) + (matches == 1 ? " match" : " matches") +
                 " in " + std::to_string(files_with_matches) +
                 (files_with_matches == 1 ? " file" : " files");
        if (matches > cap) header += ", showing the first " + std::to_string(cap);
        header += ":";
    }
    header += "\n";
    std::string footer;
    if (matches > cap)
        footer += "Narrow the search with a more specific pattern, a path or a file_pattern.\n";
    if (files.skipped_binary || files.skipped_large)
        footer += "Skipped " + std::to_string(files.skipped_binary) + " binary and " +
                  std::to_string(files.skipped_large) + " oversized files.\n";
    auto text = cap_text(header + shown_text, context.limits.max_result_chars,
                         "Narrow the search or lower context_lines.") +
                footer;
    return tool_result::success(std::move(text), {{"matches", std::move(shown)},
                                                  {"total", matches},
                                                  {"files", files_with_matches},
                                                  {"truncated", matches > cap}});
}

}  // namespace gateway::tools
