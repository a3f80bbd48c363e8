#pragma once

#include "gateway/config/config.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

struct redisReader;
struct redisReply;

// A Redis client small enough to read: commands in RESP written by hiredis' formatter, answers
// parsed by its reader, over an Asio socket (no thread blocks on Redis). Used by the limiter
// (admin/redis_limiter) and the shared health of routes (upstream/health_share).
namespace gateway::io {

namespace net = boost::asio;

// Where a Redis server is: redis://[[user]:password@]host[:port][/db].
struct redis_address {
    std::string host = "127.0.0.1";
    std::string port = "6379";
    std::string user;
    std::string password;
    int db = 0;
};
config::parsed<redis_address> parse_redis_url(std::string_view url);

struct reader_deleter {
    void operator()(redisReader* r) const;
};
struct reply_deleter {
    void operator()(redisReply* r) const;
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

// One connection. One command at a time; a subscribed connection reads its messages with
// next_reply(). Not thread-safe: used by the thread that made it.
class redis_connection {
public:
    explicit redis_connection(net::any_io_executor executor);

    bool open() const { return socket_.is_open() && !broken_; }

    // Connects, authenticates and selects the database; the problem, or empty.
    net::awaitable<std::string> connect(const redis_address& address);

    // Sends one command and reads its answer; null when the connection failed.
    net::awaitable<reply_ptr> command(const std::vector<std::string>& args);

    // The next reply the server sends (a subscribed connection's messages); null when the
    // connection failed or was closed.
    net::awaitable<reply_ptr> next_reply();

    void close();

private:
    net::ip::tcp::socket socket_;
    std::unique_ptr<redisReader, reader_deleter> reader_;
    bool broken_ = false;
};

// Connections to one Redis server for request-time commands: kept per thread (each used only by
// the thread that made it), each command bounded by `timeout`. Thread-safe.
class redis_pool {
public:
    redis_pool(redis_address address, config::duration timeout);
    ~redis_pool();

    struct outcome {
        reply_ptr reply;      // null when there is none: `problem` says why
        std::string problem;  // also set for an error reply (its text)
    };
    // Sends `command` on one of this thread's connections (a new one when none is idle).
    net::awaitable<outcome> run(std::vector<std::string> command);

    const redis_address& address() const { return address_; }
    config::duration timeout() const { return timeout_; }

private:
    std::unique_ptr<redis_connection> take();
    void give_back(std::unique_ptr<redis_connection> conn);

    redis_address address_;
    config::duration timeout_;
    std::mutex mutex_;
    std::map<std::thread::id, std::vector<std::unique_ptr<redis_connection>>> idle_;
};

}  // namespace gateway::io
