#include "gateway/secret_names.hpp"

#include <algorithm>
#include <cctype>

namespace gateway {

namespace {

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool same_letters(std::string_view a, std::string_view lowercase) {
    return a.size() == lowercase.size() && std::equal(a.begin(), a.end(), lowercase.begin(),
                                                      [](char x, char y) { return lower(x) == y; });
}

bool holds(std::string_view name, std::string_view lowercase) {
    return std::search(name.begin(), name.end(), lowercase.begin(), lowercase.end(),
                       [](char x, char y) { return lower(x) == y; }) != name.end();
}

}  // namespace

bool names_a_secret(std::string_view name) {
    // Short names that are secrets in common APIs (Azure's SAS `sig`, OAuth's `code`) but too
    // short to look for inside longer names.
    static constexpr std::string_view names[] = {"sig", "code", "pass", "pwd", "sid", "otp"};
    // `passw` finds password and passwd; `key` finds apikey, api-key, api_key, x-goog-api-key.
    static constexpr std::string_view words[] = {"key",  "token",   "secret",    "passw",
                                                 "auth", "session", "signature", "credential",
                                                 "jwt",  "cookie"};
    for (auto n : names)
        if (same_letters(name, n)) return true;
    for (auto w : words)
        if (holds(name, w)) return true;
    return false;
}

namespace {

int hex_value(char h) {
    return h >= '0' && h <= '9'   ? h - '0'
           : h >= 'a' && h <= 'f' ? h - 'a' + 10
           : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                  : -1;
}

}  // namespace

std::string percent_decoded(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        int hi = text[i] == '%' && i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value(text[i + 2]) : -1;
        if (lo >= 0) {
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace gateway
