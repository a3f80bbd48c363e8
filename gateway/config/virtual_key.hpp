#pragma once

#include "gateway/config/glob.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::config {

// A virtual key for /v1: who may use which models, and how much. The one shape of a key
// wherever it is: declared in the configuration (`admin.keys`, read by the config loader), made
// through /admin/keys (kept by the store, store::key_record), checked by the key ring
// (admin::key_ring). It lives here, in the lowest of those layers, so each uses it as it is.
// The secret is never kept: the configured `key` (plain or sha256:<hex>) and a made key's secret
// become `digest` where they are read. Zero limits mean none.
struct virtual_key {
    std::string id;
    std::string name;
    std::string digest;                   // "sha256:<hex>" of the secret
    std::vector<std::string> models;      // globs; empty: every model
    std::uint64_t rpm = 0;                // requests per minute
    std::uint64_t tpm = 0;                // tokens (input + output) per minute
    std::uint64_t max_parallel = 0;       // requests in flight at once
    std::uint64_t budget_tokens = 0;      // tokens per budget period
    std::string budget_period = "month";  // day | month (UTC)
    std::int64_t expires_at = 0;          // Unix milliseconds; 0: never
    std::int64_t created_at = 0;          // Unix milliseconds; 0 for a declared key
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
