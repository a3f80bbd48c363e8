#include "gateway/upstream/usage_sink.hpp"

#include "gateway/providers/conversation.hpp"

namespace gateway::upstream {

usage_record usage_record_of(std::string_view key_id, std::string_view model,
                             std::string_view upstream, const providers::usage& used,
                             std::optional<request_cost> cost, std::int64_t now_ms) {
    usage_record r{key_id,
                   model,
                   upstream,
                   used.input,
                   used.output,
                   used.cache_read,
                   used.cache_write + used.cache_write_1h,
                   used.reasoning};
    r.cost = cost;
    r.now_ms = now_ms;
    return r;
}

}  // namespace gateway::upstream
