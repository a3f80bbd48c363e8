#pragma once

// A redis-server of its own for a test: on a free loopback port, nothing saved, stopped at the
// end; not running when the binary is not installed (the test then says so and skips).

#include <sys/types.h>

#include <cstdint>

namespace gateway::testing {

class redis_server {
public:
    redis_server();
    ~redis_server();
    redis_server(const redis_server&) = delete;
    redis_server& operator=(const redis_server&) = delete;
    bool running() const { return up_; }
    std::uint16_t port() const { return port_; }

private:
    std::uint16_t port_;
    pid_t pid_ = -1;
    bool up_ = false;
};

}  // namespace gateway::testing
