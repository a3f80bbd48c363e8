// event_watchers: holds WATCHERS event streams open on each run id read from stdin (one per
// line) against host:port, reading every event as it comes, until each stream ends or DURATION
// seconds pass. Reports the events received, so a benchmark can show the load was real.
//
//   event_watchers PORT WATCHERS DURATION_S < run_ids   -> one line: streams events
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

net::awaitable<void> watch(tcp::endpoint at, std::string run_id, long& events, int& open) {
    auto executor = co_await net::this_coro::executor;
    tcp::socket socket(executor);
    auto [connect_ec] = co_await socket.async_connect(at, use_ec);
    if (connect_ec) co_return;
    ++open;
    std::string request = "GET /context/runs/" + run_id +
                          "/events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n";
    auto [write_ec, written] = co_await net::async_write(socket, net::buffer(request), use_ec);
    std::string tail;
    char buffer[16384];
    while (!write_ec) {
        auto [ec, n] = co_await socket.async_read_some(net::buffer(buffer), use_ec);
        if (ec) break;
        tail.append(buffer, n);
        for (auto at = tail.find("\nid: "); at != std::string::npos;
             at = tail.find("\nid: ", at + 1))
            ++events;
        // Keep less than one marker, so a marker is never counted twice but one split
        // across two reads is still found.
        if (tail.size() > 4) tail.erase(0, tail.size() - 4);
    }
    --open;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: event_watchers PORT WATCHERS DURATION_S < run_ids\n");
        return 2;
    }
    auto port = static_cast<unsigned short>(std::stoi(argv[1]));
    int per_run = std::stoi(argv[2]);
    int seconds = std::stoi(argv[3]);
    std::vector<std::string> runs;
    for (std::string line; std::getline(std::cin, line);)
        if (!line.empty()) runs.push_back(line);
    net::io_context io(1);
    tcp::endpoint at(net::ip::make_address("127.0.0.1"), port);
    long events = 0;
    int open = 0;
    for (const auto& run : runs)
        for (int i = 0; i < per_run; ++i)
            net::co_spawn(io, watch(at, run, events, open), net::detached);
    net::steady_timer stop(io, std::chrono::seconds(seconds));
    stop.async_wait([&](boost::system::error_code) { io.stop(); });
    io.run();
    std::printf("%zu %ld\n", runs.size() * static_cast<std::size_t>(per_run), events);
    return 0;
}
