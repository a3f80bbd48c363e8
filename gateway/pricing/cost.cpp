#include "gateway/pricing/cost.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace gateway::pricing {

request_cost cost(const providers::usage& used, const config::price_entry* price, bool estimated) {
    request_cost out;
    out.estimated = estimated;
    if (!price) return out;
    out.priced = true;
    const auto& tier = price->long_context;
    const auto& r = tier.above > 0 && used.input > tier.above ? tier.rates : price->rates;
    double input = r.input.value_or(0);
    double output = r.output.value_or(0);
    double cache_read = r.cache_read.value_or(input);
    double cache_write = r.cache_write.value_or(input);
    double cache_write_1h = r.cache_write_1h.value_or(cache_write);
    double reasoning = r.reasoning.value_or(output);
    // Each part at most what is left of its total, so no token is charged twice.
    auto total_in = std::max<std::int64_t>(used.input, 0);
    auto read = std::clamp<std::int64_t>(used.cache_read, 0, total_in);
    auto write = std::clamp<std::int64_t>(used.cache_write, 0, total_in - read);
    auto write_1h = std::clamp<std::int64_t>(used.cache_write_1h, 0, total_in - read - write);
    auto total_out = std::max<std::int64_t>(used.output, 0);
    auto thought = std::clamp<std::int64_t>(used.reasoning, 0, total_out);
    double per_million = static_cast<double>(total_in - read - write - write_1h) * input +
                         static_cast<double>(read) * cache_read +
                         static_cast<double>(write) * cache_write +
                         static_cast<double>(write_1h) * cache_write_1h +
                         static_cast<double>(total_out - thought) * output +
                         static_cast<double>(thought) * reasoning;
    out.usd = per_million / 1e6;
    return out;
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

}  // namespace gateway::pricing
