#include "gateway/store/data_dir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace gateway::store {

config::parsed<std::unique_ptr<data_dir_lock>> data_dir_lock::acquire(const std::string& dir) {
    using result = config::parsed<std::unique_ptr<data_dir_lock>>;
    auto path = dir + "/contextgate.lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return result::fail(path + ": cannot open the lock file: " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int error = errno;
        std::string holder;
        char text[32] = {};
        auto n = ::pread(fd, text, sizeof text - 1, 0);
        if (n > 0) holder = std::string(text, static_cast<std::size_t>(n));
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' '))
            holder.pop_back();
        ::close(fd);
        if (error == EWOULDBLOCK)
            return result::fail("data_dir " + dir + " is in use by another contextgate" +
                                (holder.empty() ? std::string() : " (pid " + holder + ")") +
                                "; stop it, or give this one its own context.data_dir");
        return result::fail(path + ": cannot lock: " + std::strerror(error));
    }
    auto pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        int error = errno;
        ::close(fd);
        return result::fail(path + ": cannot write the lock file: " + std::strerror(error));
    }
    return {std::unique_ptr<data_dir_lock>(new data_dir_lock(fd)), {}};
}

data_dir_lock::~data_dir_lock() {
    ::close(fd_);  // releases the flock
}

}  // namespace gateway::store
