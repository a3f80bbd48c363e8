#pragma once

#include "gateway/config/glob.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::config {

// The span a key's budget is counted over, in UTC: a day, an ISO week (from Monday 00:00) or a
// calendar month.
enum class budget_period { day, week, month };

// "day", "week" or "month": the configuration's, the API's and the store's spelling.
constexpr std::string_view budget_period_name(budget_period p) {
    return p == budget_period::day ? "day" : p == budget_period::week ? "week" : "month";
}
constexpr std::optional<budget_period> budget_period_of(std::string_view name) {
    for (auto p : {budget_period::day, budget_period::week, budget_period::month})
        if (budget_period_name(p) == name) return p;
    return std::nullopt;
}

// A virtual key for /v1: who may use which models, and how much. The one shape of a key
// wherever it is: declared in the configuration (`admin.keys`, read by the config loader), made
// through /admin/keys (kept by the store, store::key_record), checked by the key ring
// (admin::key_ring). It lives here, in the lowest of those layers, so each uses it as it is.
// The secret is never kept: the configured `key` (plain or sha256:<hex>) and a made key's secret
// become `digest` where they are read. Zero limits mean none. Money is in whole nano-dollars
// (1e-9 USD), so sums are exact.
struct virtual_key {
    std::string id;
    std::string name;
    std::string digest;                 // "sha256:<hex>" of the secret
    std::vector<std::string> models;    // globs; empty: every model
    std::uint64_t rpm = 0;              // requests per minute
    std::uint64_t tpm = 0;              // tokens (input + output) per minute
    std::uint64_t max_parallel = 0;     // requests in flight at once
    std::uint64_t budget_tokens = 0;    // tokens per budget period
    std::uint64_t budget_usd_nano = 0;  // USD per budget period
    config::budget_period budget_period = config::budget_period::month;  // of both budgets
    std::int64_t expires_at = 0;  // Unix milliseconds; 0: never
    std::int64_t created_at = 0;  // Unix milliseconds; 0 for a declared key
    // Who owns it (at most one is set): a team, whose budget and models bound it too, or a user
    // (a signed-in person's own key). "": the gateway's operators.
    std::string team;
    std::string user;
    // From the configuration, not changeable through /admin/keys (the key ring marks the keys
    // it is built with).
    bool declared = false;

    bool allows_model(std::string_view model) const {
        if (models.empty()) return true;
        for (const auto& glob : models)
            if (glob_match(glob, model)) return true;
        return false;
    }
    bool expired(std::int64_t now_ms) const { return expires_at != 0 && now_ms >= expires_at; }
};

}  // namespace gateway::config
