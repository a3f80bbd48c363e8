#include "gateway/request_cost.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gateway {

std::int64_t nano_usd(double usd) {
    return static_cast<std::int64_t>(std::llround(usd * 1e9));
}

std::string cost_text(const request_cost& c) {
    if (!c.priced) return "unpriced";
    // Whole nano-dollars, written as integers: glibc's %.9f of a double costs some 2,000
    // instructions (a twentieth of a whole request), to_chars' some 500. A cost past a billion
    // dollars, or no number at all, takes to_chars.
    char text[512];  // the fixed form of the largest double fits
    char* end = text;
    if (c.usd >= 0 && c.usd < 1e9) {
        auto nano = static_cast<std::uint64_t>(std::llround(c.usd * 1e9));
        end = std::to_chars(text, text + 32, nano / 1'000'000'000).ptr;
        auto fraction = nano % 1'000'000'000;
        if (fraction) {
            *end++ = '.';
            for (std::uint64_t digit = 100'000'000; fraction; digit /= 10) {
                *end++ = static_cast<char>('0' + fraction / digit);
                fraction %= digit;
            }
        }
        return std::string(text, end);
    }
    auto [last, ec] = std::to_chars(text, text + sizeof text, c.usd, std::chars_format::fixed, 9);
    if (ec != std::errc()) return "unpriced";
    std::string out(text, last);
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
    return out;
}

}  // namespace gateway
