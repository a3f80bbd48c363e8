#include "gateway/request_cost.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gateway {

std::int64_t nano_usd(double usd) {
    // Rounded here rather than by std::llround, which is a call into libm: a page of code of its
    // own, twice a priced request. Halves go away from zero, as llround's; what no int64 holds
    // (or no number at all) is clamped, where a conversion would be undefined.
    double nano = usd * 1e9;
    if (!(std::fabs(nano) < 9.2e18)) return nano > 0 ? INT64_MAX : nano < 0 ? INT64_MIN : 0;
    return static_cast<std::int64_t>(nano >= 0 ? nano + 0.5 : nano - 0.5);
}

std::string cost_text(const request_cost& c) {
    if (!c.priced) return "unpriced";
    // Whole nano-dollars, written as integers: glibc's %.9f of a double costs some 2,000
    // instructions (a twentieth of a whole request), to_chars' some 500. A cost past a billion
    // dollars, or no number at all, takes to_chars.
    char text[512];  // the fixed form of the largest double fits
    char* end = text;
    if (c.usd >= 0 && c.usd < 1e9) {
        auto nano = static_cast<std::uint64_t>(nano_usd(c.usd));
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
