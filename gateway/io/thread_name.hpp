#pragma once

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace gateway::io {

// Names the calling thread, as `top -H`, `ps -L`, gdb and perf show it: "cg-" and a role
// ("cg-worker-0", "cg-store-write", "cg-tools-1"). Linux keeps the first 15 bytes.
inline void name_this_thread(const std::string& role) {
    std::string name = "cg-" + role;
    if (name.size() > 15) name.resize(15);
    pthread_setname_np(pthread_self(), name.c_str());
}

// Lowers the calling thread's scheduling priority (nice +5 over the process's): the agent engine,
// its tools and the store work in the background, so that when the cores are busy, the workers'
// threads (the /v1 proxying, the HTTP answers) are served first. Linux applies nice per thread.
inline void yield_to_workers() {
    auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    ::setpriority(PRIO_PROCESS, tid, ::getpriority(PRIO_PROCESS, 0) + 5);
}

}  // namespace gateway::io
