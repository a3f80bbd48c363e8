#include "gateway/http/target.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace gateway::http {

namespace {

normalized_target refuse(std::string why) {
    return {{}, std::move(why)};
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// What may appear in a target on the wire: visible ASCII without `#`, and `%` only as the start
// of a percent-encoding. Empty when the bytes are acceptable, else why not.
std::string check_bytes(std::string_view target) {
    for (std::size_t i = 0; i < target.size(); ++i) {
        auto c = static_cast<unsigned char>(target[i]);
        if (c == '#') return "The request target holds a fragment (`#`), which is never sent.";
        if (c <= 0x20 || c >= 0x7f)
            return "The request target holds a byte that is not allowed there (control, space "
                   "or non-ASCII); percent-encode it.";
        if (c == '%' &&
            (i + 2 >= target.size() || !is_hex(target[i + 1]) || !is_hex(target[i + 2])))
            return "The request target holds a `%` that does not start a percent-encoding.";
    }
    return {};
}

bool iequals_ascii(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// 0: an ordinary segment; 1: `.`; 2: `..` (each dot also written `%2e` / `%2E`).
int dot_segment(std::string_view segment) {
    int dots = 0;
    for (std::size_t i = 0; i < segment.size();) {
        if (segment[i] == '.') {
            ++i;
        } else if (i + 2 < segment.size() && segment[i] == '%' &&
                   iequals_ascii(segment.substr(i, 3), "%2e")) {
            i += 3;
        } else {
            return 0;
        }
        if (++dots > 2) return 0;
    }
    return dots;
}

// A dot segment behind a separator that an upstream may decode or honour (`%2f`, `%5c`, `\`).
bool hides_dot_segment(std::string_view segment) {
    std::size_t start = 0;
    bool split = false;
    for (std::size_t i = 0; i <= segment.size();) {
        std::size_t width = 0;
        if (i == segment.size()) {
            width = 0;
        } else if (segment[i] == '\\') {
            width = 1;
        } else if (segment[i] == '%' && i + 2 < segment.size() &&
                   (iequals_ascii(segment.substr(i, 3), "%2f") ||
                    iequals_ascii(segment.substr(i, 3), "%5c"))) {
            width = 3;
        } else {
            ++i;
            continue;
        }
        if (i < segment.size()) split = true;
        if (split && dot_segment(segment.substr(start, i - start)) != 0) return true;
        if (i == segment.size()) break;
        i += width;
        start = i;
    }
    return false;
}

// Removes the dot segments of `path` (which starts with '/'); see normalize_target.
normalized_target remove_dot_segments(std::string_view path) {
    std::vector<std::string_view> segments;
    std::string_view first;
    bool had_dots = false;
    std::size_t pos = 1;
    for (bool is_first = true;; is_first = false) {
        auto slash = path.find('/', pos);
        bool last = slash == std::string_view::npos;
        auto segment = path.substr(pos, last ? std::string_view::npos : slash - pos);
        if (is_first) first = segment;
        if (hides_dot_segment(segment))
            return refuse(
                "The request target hides a dot segment behind an encoded or "
                "backslash separator.");
        switch (dot_segment(segment)) {
            case 1:
                had_dots = true;
                if (last) segments.emplace_back();
                break;
            case 2:
                had_dots = true;
                if (segments.empty())
                    return refuse("The request target climbs above the root with `..`.");
                segments.pop_back();
                if (last) segments.emplace_back();
                break;
            default:
                segments.push_back(segment);
        }
        if (last) break;
        pos = slash + 1;
    }
    if (!had_dots) return {std::string(path), {}};
    if (segments.empty() || segments.front() != first || dot_segment(first) != 0)
        return refuse("The request target's dot segments leave its first path segment `/" +
                      std::string(first) + "`.");
    std::string out;
    out.reserve(path.size());
    for (auto s : segments) {
        out += '/';
        out += s;
    }
    return {std::move(out), {}};
}

// What is_normal_target makes of a byte, looked up in one table: every request's target is read
// byte by byte, and most of its bytes need nothing more than the lookup.
enum class target_byte : std::uint8_t { plain, refused, slash, question };

constexpr auto target_bytes = [] {
    std::array<target_byte, 256> kinds{};
    for (int c = 0; c < 256; ++c)
        if (c <= 0x20 || c >= 0x7f || c == '#' || c == '%' || c == '\\')
            kinds[c] = target_byte::refused;
    kinds['/'] = target_byte::slash;
    kinds['?'] = target_byte::question;
    return kinds;
}();

}  // namespace

bool is_normal_target(std::string_view target) {
    if (target.empty() || target.front() != '/') return false;
    bool in_path = true;
    for (std::size_t i = 0; i < target.size(); ++i) {
        switch (target_bytes[static_cast<unsigned char>(target[i])]) {
            case target_byte::plain:
                break;
            case target_byte::refused:
                return false;
            case target_byte::question:
                in_path = false;
                break;
            case target_byte::slash:
                if (in_path && i + 1 < target.size() && target[i + 1] == '.') return false;
                break;
        }
    }
    return true;
}

normalized_target normalize_target(std::string_view target) {
    if (target.empty()) return refuse("The request target is empty.");
    if (auto problem = check_bytes(target); !problem.empty()) return refuse(std::move(problem));
    if (target.front() != '/') {
        // absolute-form: scheme "://" authority [path] ["?" query]
        auto colon = target.find("://");
        auto scheme = target.substr(0, colon);
        if (colon == std::string_view::npos ||
            !(iequals_ascii(scheme, "http") || iequals_ascii(scheme, "https")))
            return refuse(
                "The request target must be a path (`/v1/…`) or an absolute http(s) "
                "URL.");
        auto rest = target.substr(colon + 3);
        auto end = rest.find_first_of("/?");
        auto authority = rest.substr(0, end);
        if (authority.empty()) return refuse("The request target's URL has no host.");
        if (authority.find('@') != std::string_view::npos)
            return refuse(
                "The request target's URL carries user information, which is not "
                "allowed.");
        target = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
        if (target.empty() || target.front() == '?') {
            auto normalized = "/" + std::string(target);
            return normalize_target(normalized);
        }
    }
    auto question = target.find('?');
    auto path = target.substr(0, question);
    auto normalized = remove_dot_segments(path);
    if (!normalized) return normalized;
    if (question != std::string_view::npos) normalized.target += target.substr(question);
    return normalized;
}

std::string path_segment(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace gateway::http
