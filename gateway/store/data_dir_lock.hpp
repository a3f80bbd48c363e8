#pragma once

#include "gateway/config/config.hpp"

#include <memory>
#include <string>

namespace gateway::store {

// Holds a data directory for this process: an exclusive flock(2) on `<dir>/contextgate.lock`,
// whose content is the holder's pid. A second gateway on the same directory (which would resume
// and drive the same runs) fails at start with a message naming the holder. The kernel drops the
// lock when the process ends, however it ends, so a crash never leaves a stale lock. Released on
// destruction.
class data_dir_lock {
public:
    // Takes the lock; the error names the directory and, when it is held, the holder's pid.
    static config::parsed<std::unique_ptr<data_dir_lock>> acquire(const std::string& dir);
    ~data_dir_lock();
    data_dir_lock(const data_dir_lock&) = delete;
    data_dir_lock& operator=(const data_dir_lock&) = delete;

private:
    explicit data_dir_lock(int fd) : fd_(fd) {}
    int fd_;
};

}  // namespace gateway::store
