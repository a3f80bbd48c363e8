#pragma once

#include "gateway/request_cost.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gateway::providers {
struct usage;
}

namespace gateway::upstream {

// One answered model call as the usage ledger counts it. Tokens as the upstream reported them (or
// as the gateway estimated them), split the way pricing::cost charges them: `input_tokens` holds
// all input (its cache-read and cache-written parts included), `output_tokens` all output (its
// reasoning part included).
struct usage_record {
    std::string_view key_id;
    std::string_view model;
    std::string_view upstream;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_write_tokens = 0;  // 5-minute and 1-hour writes together
    std::int64_t reasoning_tokens = 0;
    // What it cost (nullopt: nothing priced it, e.g. a call that names no model; `priced` false:
    // its model has no price, counted as unpriced, never as $0).
    std::optional<request_cost> cost;
    // Answered from the response cache: it cost nothing upstream, and `saved` is what the stored
    // answer's usage would have cost (its tokens are not added to the totals).
    bool cache_hit = false;
    std::optional<request_cost> saved;
    std::int64_t now_ms = 0;
};

// The record of a call to `upstream` for `model` whose usage `used` the provider reported (or the
// gateway estimated), split as usage_record counts it, at `cost`.
usage_record usage_record_of(std::string_view key_id, std::string_view model,
                             std::string_view upstream, const providers::usage& used,
                             std::optional<request_cost> cost, std::int64_t now_ms);

// Where the usage of upstream calls is counted, per key, model and upstream: both faces
// (the /v1 passthrough and the agent's model calls) record into it, admin/'s usage ledger
// implements it. record() is on the request's path: it must not block.
class usage_sink {
public:
    virtual ~usage_sink() = default;
    virtual void record(const usage_record& used) = 0;
};

}  // namespace gateway::upstream
