#pragma once

#include <chrono>
#include <cstdint>

#include <time.h>

namespace gateway {

// Unix milliseconds now: the wall-clock times the gateway stores and compares (records, leases,
// key expiry, usage days). Durations are measured with std::chrono::steady_clock instead.
inline std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The monotonic clock as of the kernel's last tick (CLOCK_MONOTONIC_COARSE), for the stamps a
// request keeps that are only compared with long intervals: when a pooled connection went idle,
// when a client watch began, a relay's last write before a heartbeat. It reads the vDSO's copy of
// the time without the TSC: about 6 ns here, against 20 to 40 for steady_clock::now(), which the
// request path read 16 times. The same epoch as steady_clock and behind it by a tick or so (4 ms
// on Debian's kernel; up to 6 ms was seen on this VM), so a stamp from it may be compared with
// steady_clock's. Never for a deadline (a configured timeout must not fire early) nor for what is
// measured (latencies, durations).
inline std::chrono::steady_clock::time_point coarse_now() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

}  // namespace gateway
