#pragma once

#include <chrono>
#include <cstdint>

namespace gateway {

// Unix milliseconds now: the wall-clock times the gateway stores and compares (records, leases,
// key expiry, usage days). Durations are measured with std::chrono::steady_clock instead.
inline std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace gateway
