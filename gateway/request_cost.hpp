#pragma once

#include <cstdint>
#include <string>

namespace gateway {

// What a request cost (pricing::cost). `priced` false: its model has no price, and `usd` means
// nothing (an unpriced request is counted as such, never as $0). `estimated`: the usage priced was
// the gateway's estimate (a stream cut short, an answer that reported none), not the upstream's
// count. No dependencies: the request's context carries one.
struct request_cost {
    double usd = 0;
    bool priced = false;
    bool estimated = false;
};

// A cost in whole nano-dollars (1e-9 USD, rounded to the nearest): how the usage ledger, budgets
// and agent runs sum money, so that their sums are exact.
std::int64_t nano_usd(double usd);

// A cost in USD as the access log and the x-contextgate-cost-usd header give it: a plain decimal
// to 1e-9 USD without trailing zeros ("0.000123", "0"); "unpriced" when it is not priced.
std::string cost_text(const request_cost& c);

}  // namespace gateway
