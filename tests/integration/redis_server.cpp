#include "tests/integration/redis_server.hpp"

#include "tests/integration/harness.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

namespace gateway::testing {

redis_server::redis_server() : port_(unused_port()) {
    pid_ = ::fork();
    if (pid_ == 0) {
        if (int quiet = ::open("/dev/null", O_WRONLY); quiet >= 0) ::dup2(quiet, STDOUT_FILENO);
        auto port = std::to_string(port_);
        ::execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--loglevel", "warning",
                 static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Up when it accepts a connection (within 5 s).
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket s(io);
        boost::system::error_code ec;
        s.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
        if (!ec) {
            up_ = true;
            break;
        }
        if (int status = 0; ::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;  // exited: not installed
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
}

redis_server::~redis_server() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
}

}  // namespace gateway::testing
