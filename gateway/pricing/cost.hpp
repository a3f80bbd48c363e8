#pragma once

#include "gateway/config/config.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/request_cost.hpp"

namespace gateway::pricing {

// The cost of `used` at `price` (null: unpriced). Every token is charged once, at the rate of
// its kind (providers::usage): input less its cached and cache-written parts at `input`, cache
// reads at `cache_read`, cache writes at `cache_write` (5 minutes) and `cache_write_1h`, output
// less its reasoning part at `output`, reasoning at `reasoning`. A rate the price leaves out is
// charged as input (cache reads and writes; a 1-hour write as a 5-minute one) or output
// (reasoning). The long-context tier's rates apply when the request's input (cached and
// cache-written included) passes its `above`. Parts larger than their total are cut to it.
request_cost cost(const providers::usage& used, const config::price_entry* price,
                  bool estimated = false);

}  // namespace gateway::pricing
