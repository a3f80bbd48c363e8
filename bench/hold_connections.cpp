// hold_connections: opens N connections to 127.0.0.1:PORT and holds them, for measuring what a
// connection costs a proxy in memory (bench/connection_memory.sh).
//
//   hold_connections PORT N idle     each connection sends one chat completion, reads the whole
//                                    answer and then stays open, idle (a keep-alive client)
//   hold_connections PORT N stream   each opens a streamed chat completion that the fake
//                                    upstream holds after its first event (x-fake-stall-after)
//
// Prints "ready OK" once every connection is in its state (OK: how many got there), then holds
// them until its standard input closes.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <list>
#include <string>

namespace net = boost::asio;
using tcp = net::ip::tcp;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: hold_connections PORT N idle|stream\n";
        return 2;
    }
    auto port = static_cast<unsigned short>(std::atoi(argv[1]));
    int n = std::atoi(argv[2]);
    bool stream = std::string(argv[3]) == "stream";
    std::string body = std::string(R"({"model":"gpt-4o-mini","stream":)") +
                       (stream ? "true" : "false") +
                       R"(,"messages":[{"role":"user","content":"Say hello"}]})";
    std::string request =
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nContent-Type: application/json\r\n" + (stream ? "x-fake-stall-after: 1\r\n" : "") +
        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;

    net::io_context io;
    std::list<tcp::socket> held;
    int ready = 0, done = 0;
    auto hold = [&](tcp::socket& s) -> net::awaitable<void> {
        try {
            co_await s.async_connect({net::ip::make_address("127.0.0.1"), port},
                                     net::use_awaitable);
            co_await net::async_write(s, net::buffer(request), net::use_awaitable);
            net::streambuf in;
            // Idle: the whole answer (its head says how long); stream: the first event.
            auto head = co_await net::async_read_until(s, in, "\r\n\r\n", net::use_awaitable);
            std::string text(net::buffers_begin(in.data()), net::buffers_begin(in.data()) + head);
            if (text.find(" 200 ") != std::string::npos) {
                if (stream) {
                    co_await net::async_read_until(s, in, "\n\n", net::use_awaitable);
                } else {
                    auto at = text.find("Content-Length: ");
                    if (at == std::string::npos) at = text.find("content-length: ");
                    std::size_t length = at == std::string::npos
                                             ? 0
                                             : std::strtoul(text.c_str() + at + 16, nullptr, 10);
                    if (in.size() - head < length)
                        co_await net::async_read(s, in,
                                                 net::transfer_exactly(length - (in.size() - head)),
                                                 net::use_awaitable);
                }
                ++ready;
            }
        } catch (const std::exception&) {
        }
        if (++done == n) {
            std::printf("ready %d\n", ready);
            std::fflush(stdout);
        }
    };
    for (int i = 0; i < n; ++i) {
        held.emplace_back(io);
        net::co_spawn(io, hold(held.back()), net::detached);
        // A few at a time, so the listener's backlog is not what is measured.
        if (i % 200 == 199) {
            io.run_for(std::chrono::milliseconds(20));
            io.restart();
        }
    }
    io.run();
    // Held until standard input closes.
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    return 0;
}
