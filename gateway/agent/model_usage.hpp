#pragma once

#include "gateway/providers/conversation.hpp"
#include "gateway/request_cost.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <boost/system/result.hpp>

#include <cstdint>

namespace gateway::agent {

namespace json = boost::json;

// What model calls used and cost: one answered call's (its model.replied event) or a run's sum
// (its totals, kept in run_state). Tokens as the usage ledger counts them: `input_tokens` all of
// the input, its cache reads and writes included; `output_tokens` all of the output, its
// reasoning included. Money in whole nano-dollars (1e-9 USD), so that a run's sum is exact and
// equals the sum of its calls as their events show them.
struct model_usage {
    std::int64_t calls = 0;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_write_tokens = 0;  // 5-minute and 1-hour writes together
    std::int64_t reasoning_tokens = 0;
    std::int64_t usd_nano = 0;         // what the priced calls cost
    std::int64_t unpriced_calls = 0;   // calls whose model has no price: never counted as $0
    std::int64_t estimated_calls = 0;  // calls charged the gateway's estimate of their usage

    // One call: the usage it was charged and what that cost (pricing::cost).
    static model_usage of_call(const providers::usage& used, const request_cost& cost);

    model_usage& operator+=(const model_usage& more);
};

// The token counts as the Context API shows them, in a call's event and a run's view:
// {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens}.
json::object tokens_json(const model_usage& u);

// What the priced calls cost in USD, as the API shows it; null when there were calls and none
// of them was priced (an unpriced call is never $0).
json::value cost_usd_json(const model_usage& u);

// The stored form (in run_state): every field by its name. Reading never throws; a missing
// member is 0, a member that is no integer fails the read.
void tag_invoke(const json::value_from_tag&, json::value& v, const model_usage& u);
boost::system::result<model_usage> tag_invoke(const json::try_value_to_tag<model_usage>&,
                                              const json::value& v);

}  // namespace gateway::agent
