// contextgate-fake-upstream: the test fake as a process, for benchmarks, demos and the e2e tests.
// Prints "listening on PORT" on stdout once it accepts connections; stops on SIGINT/SIGTERM.
#include "tests/support/fake_upstream.hpp"

#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    gateway::testing::fake_options options;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--port" && i + 1 < argc) {
            options.port = static_cast<std::uint16_t>(std::stoi(argv[++i]));
        } else if (arg == "--threads" && i + 1 < argc) {
            options.threads = static_cast<unsigned>(std::stoi(argv[++i]));
        } else if (arg == "--tls" && i + 2 < argc) {
            options.cert_file = argv[++i];
            options.key_file = argv[++i];
        } else {
            std::cerr << "usage: contextgate-fake-upstream [--port N] [--threads N] "
                         "[--tls CERT KEY]\n";
            return 2;
        }
    }
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    // Blocked before the server threads start, so only sigwait below receives them.
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    gateway::testing::fake_upstream fake(options);
    std::cout << "listening on " << fake.port() << std::endl;
    int received = 0;
    sigwait(&signals, &received);
    fake.stop();
    return 0;
}
