#include "gateway/pricing/cost.hpp"

#include <algorithm>

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

}  // namespace gateway::pricing
