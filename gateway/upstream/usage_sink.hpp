#pragma once

#include <cstdint>
#include <string_view>

namespace gateway::upstream {

// Where the tokens of upstream calls are counted, per key, model and upstream: both faces
// (the /v1 passthrough and the agent's model calls) record into it, admin/'s usage ledger
// implements it. record() is on the request's path: it must not block.
class usage_sink {
public:
    virtual ~usage_sink() = default;
    virtual void record(std::string_view key_id, std::string_view model, std::string_view upstream,
                        std::int64_t input_tokens, std::int64_t output_tokens,
                        std::int64_t now_ms) = 0;
};

}  // namespace gateway::upstream
