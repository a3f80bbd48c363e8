#include "gateway/tools/diff.hpp"

#include <algorithm>
#include <vector>

namespace gateway::tools {

namespace {

constexpr std::size_t context = 3;
// Beyond this many edits Myers' trace grows quadratically; replace the middle wholesale instead.
constexpr long max_edits = 4000;

std::vector<std::string_view> lines_with_endings(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto newline = text.find('\n', pos);
        auto end = newline == std::string_view::npos ? text.size() : newline + 1;
        lines.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return lines;
}

// The edit script for a[0..n) -> b[0..m): ' ' keep, '-' delete from a, '+' insert from b.
std::vector<char> myers(const std::string_view* a, long n, const std::string_view* b, long m) {
    std::vector<char> script;
    if (n == 0 || m == 0) {
        script.assign(static_cast<std::size_t>(n), '-');
        script.insert(script.end(), static_cast<std::size_t>(m), '+');
        return script;
    }
    long limit = std::min(n + m, max_edits);
    std::vector<long> v(static_cast<std::size_t>(2 * limit + 3), 0);
    auto at = [&](long k) -> long& { return v[static_cast<std::size_t>(k + limit + 1)]; };
    std::vector<std::vector<long>> trace;  // trace[d][k + d] = furthest x on diagonal k
    long found = -1;
    for (long d = 0; d <= limit && found < 0; ++d) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? at(k + 1) : at(k - 1) + 1;
            long y = x - k;
            while (x < n && y < m && a[x] == b[y]) ++x, ++y;
            at(k) = x;
            if (x >= n && y >= m) found = d;
        }
        trace.emplace_back(v.begin() + (limit + 1 - d), v.begin() + (limit + 1 + d + 1));
    }
    if (found < 0) {  // too different: delete the middle, insert the new one
        script.assign(static_cast<std::size_t>(n), '-');
        script.insert(script.end(), static_cast<std::size_t>(m), '+');
        return script;
    }
    long x = n, y = m;
    for (long d = found; d > 0; --d) {
        const auto& previous = trace[static_cast<std::size_t>(d - 1)];
        auto prev_at = [&](long k) { return previous[static_cast<std::size_t>(k + d - 1)]; };
        long k = x - y;
        long prev_k = (k == -d || (k != d && prev_at(k - 1) < prev_at(k + 1))) ? k + 1 : k - 1;
        long prev_x = prev_at(prev_k);
        long prev_y = prev_x - prev_k;
        while (x > prev_x && y > prev_y) script.push_back(' '), --x, --y;
        script.push_back(x == prev_x ? '+' : '-');
        x = prev_x, y = prev_y;
    }
    while (x > 0 && y > 0) script.push_back(' '), --x, --y;
    std::reverse(script.begin(), script.end());
    return script;
}

void append_line(std::string& out, char marker, std::string_view line) {
    out.push_back(marker);
    out.append(line);
    if (!line.ends_with('\n')) out += "\n\\ No newline at end of file\n";
}

std::string range(std::size_t start, std::size_t count) {
    // An empty range names the line before it, as diff(1) does.
    std::string out = std::to_string(count == 0 ? start : start + 1);
    if (count != 1) out += "," + std::to_string(count);
    return out;
}

}  // namespace

std::vector<diff_hunk> diff_hunks(std::string_view before, std::string_view after,
                                  diff_stats* stats) {
    auto a = lines_with_endings(before);
    auto b = lines_with_endings(after);
    std::size_t prefix = 0;
    while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
           a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
        ++suffix;

    std::vector<char> script(prefix, ' ');
    auto middle = myers(a.data() + prefix, static_cast<long>(a.size() - prefix - suffix),
                        b.data() + prefix, static_cast<long>(b.size() - prefix - suffix));
    script.insert(script.end(), middle.begin(), middle.end());
    script.insert(script.end(), suffix, ' ');

    diff_stats counted;
    for (char op : script) {
        if (op == '+') ++counted.added;
        if (op == '-') ++counted.removed;
    }
    if (stats) *stats = counted;
    std::vector<diff_hunk> hunks;
    if (counted.added == 0 && counted.removed == 0) return hunks;

    // Positions in a and b before each script entry.
    std::vector<std::size_t> a_pos(script.size() + 1), b_pos(script.size() + 1);
    for (std::size_t i = 0; i < script.size(); ++i) {
        a_pos[i + 1] = a_pos[i] + (script[i] != '+');
        b_pos[i + 1] = b_pos[i] + (script[i] != '-');
    }
    std::size_t i = 0;
    while (i < script.size()) {
        while (i < script.size() && script[i] == ' ') ++i;
        if (i == script.size()) break;
        std::size_t start = i > context ? i - context : 0;
        std::size_t last_change = i;
        for (std::size_t j = i; j < script.size(); ++j) {
            if (script[j] == ' ') continue;
            if (j - last_change > 2 * context) break;
            last_change = j;
        }
        std::size_t end = std::min(script.size(), last_change + 1 + context);
        diff_hunk h;
        h.old_start = a_pos[start];
        h.old_count = a_pos[end] - a_pos[start];
        h.new_start = b_pos[start];
        h.new_count = b_pos[end] - b_pos[start];
        h.text = "@@ -" + range(h.old_start, h.old_count) + " +" + range(h.new_start, h.new_count) +
                 " @@\n";
        for (std::size_t j = start; j < end; ++j) {
            if (script[j] == '+') {
                append_line(h.text, '+', b[b_pos[j]]);
                h.new_text.append(b[b_pos[j]]);
                ++h.stats.added;
                continue;
            }
            append_line(h.text, script[j], a[a_pos[j]]);
            h.old_text.append(a[a_pos[j]]);
            if (script[j] == '-')
                ++h.stats.removed;
            else
                h.new_text.append(a[a_pos[j]]);
        }
        h.changed_start = a_pos[i];
        h.changed_count = a_pos[last_change + 1] - a_pos[i];
        hunks.push_back(std::move(h));
        i = end;
    }
    return hunks;
}

std::string unified_diff(std::string_view path, std::string_view before, std::string_view after,
                         bool before_exists, bool after_exists, diff_stats* stats) {
    auto hunks = diff_hunks(before, after, stats);
    if (hunks.empty()) return {};
    std::string out;
    out += before_exists ? "--- a/" + std::string(path) + "\n" : std::string("--- /dev/null\n");
    out += after_exists ? "+++ b/" + std::string(path) + "\n" : std::string("+++ /dev/null\n");
    for (const auto& h : hunks) out += h.text;
    return out;
}

}  // namespace gateway::tools
