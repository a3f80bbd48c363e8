#pragma once

#include <pthread.h>

#include <string>

namespace gateway::io {

// Names the calling thread, as `top -H`, `ps -L`, gdb and perf show it: "cg-" and a role
// ("cg-worker-0", "cg-store-write", "cg-tools-1"). Linux keeps the first 15 bytes.
inline void name_this_thread(const std::string& role) {
    std::string name = "cg-" + role;
    if (name.size() > 15) name.resize(15);
    pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace gateway::io
