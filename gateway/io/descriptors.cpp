#include "gateway/io/descriptors.hpp"

#include <algorithm>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace gateway::io {

descriptor_room reserve_descriptors(std::size_t up_to) {
    descriptor_room room;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        if (limit.rlim_cur < limit.rlim_max) {
            rlimit raised = limit;
            raised.rlim_cur = limit.rlim_max;
            if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
                room.raised_from = limit.rlim_cur;
                limit = raised;
            }
        }
        room.limit = limit.rlim_cur == RLIM_INFINITY ? up_to : limit.rlim_cur;
    }
    // Duplicating a descriptor to the last slot wanted grows the table to hold it; closing the
    // copy keeps the table (it never shrinks).
    auto wanted = std::min(room.limit, up_to);
    if (wanted > 0) {
        int source = STDERR_FILENO;
        int opened = -1;
        if (::fcntl(source, F_GETFD) < 0)  // started without stderr: any file will do
            source = opened = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (source >= 0) {
            int high = ::fcntl(source, F_DUPFD_CLOEXEC, static_cast<int>(wanted - 1));
            if (high >= 0) ::close(high);
        }
        if (opened >= 0) ::close(opened);
    }
    room.table = descriptor_table_size();
    return room;
}

std::size_t descriptor_table_size() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("FDSize:", 0) == 0) return std::stoul(line.substr(7));
    return 0;
}

}  // namespace gateway::io
