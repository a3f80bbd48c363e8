#pragma once

#include <cstddef>
#include <string>

namespace gateway::io {

// What reserve_descriptors() found and did.
struct descriptor_room {
    std::size_t limit = 0;        // the soft RLIMIT_NOFILE now in force
    std::size_t raised_from = 0;  // the soft limit before, when it was raised; 0 otherwise
    std::size_t table = 0;        // the descriptor table's size now (FDSize in /proc/self/status)
};

// Makes room for many connections before the process starts its threads:
// - raises the soft limit on open descriptors to the hard one (Debian's shells start at 1,024,
//   which would refuse the 1,025th connection while the system allows far more);
// - grows the descriptor table to min(limit, max_reserved) entries at once. The kernel grows it
//   by doubling as descriptors are opened, and in a process with several threads each doubling
//   waits for an RCU grace period with the thread that opened the descriptor blocked: in a storm
//   of 1,000 new streams on a fresh process that was 5 doublings of 10-20 ms each, stalling the
//   worker's event loop (docs/benchmarks.md, "Streams under a storm"). Done here, with one
//   thread, it waits for nothing and costs only the table (8 bytes per entry, kernel memory).
inline constexpr std::size_t max_reserved = 65536;
descriptor_room reserve_descriptors(std::size_t up_to = max_reserved);

// The calling process's descriptor table size (FDSize in /proc/self/status); 0 if unknown.
std::size_t descriptor_table_size();

}  // namespace gateway::io
