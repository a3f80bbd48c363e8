#include "gateway/io/redis.hpp"

#include <hiredis/hiredis.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <charconv>

namespace gateway::io {

namespace {
using tcp = net::ip::tcp;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);
}  // namespace

void reader_deleter::operator()(redisReader* r) const {
    redisReaderFree(r);
}
void reply_deleter::operator()(redisReply* r) const {
    freeReplyObject(r);
}

redis_connection::redis_connection(net::any_io_executor executor)
    : socket_(std::move(executor)), reader_(redisReaderCreate()) {}

net::awaitable<std::string> redis_connection::connect(const redis_address& address) {
    tcp::resolver resolver(socket_.get_executor());
    auto [ec, results] = co_await resolver.async_resolve(address.host, address.port, use_ec);
    if (ec) co_return "cannot resolve " + address.host + ": " + ec.message();
    auto [connect_ec, at] = co_await net::async_connect(socket_, results, use_ec);
    if (connect_ec)
        co_return "cannot connect to " + address.host + ":" + address.port + ": " +
            connect_ec.message();
    socket_.set_option(tcp::no_delay(true));
    if (!address.password.empty()) {
        std::vector<std::string> auth{"AUTH"};
        if (!address.user.empty()) auth.push_back(address.user);
        auth.push_back(address.password);
        auto r = co_await command(auth);
        if (!r || r->type == REDIS_REPLY_ERROR) co_return "AUTH was refused";
    }
    if (address.db != 0) {
        std::vector<std::string> select{"SELECT", std::to_string(address.db)};
        auto r = co_await command(select);
        if (!r || r->type == REDIS_REPLY_ERROR) co_return "SELECT was refused";
    }
    co_return std::string();
}

net::awaitable<reply_ptr> redis_connection::command(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    char* formatted = nullptr;
    auto n = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(),
                                    lengths.data());
    if (n < 0) co_return nullptr;
    std::string request(formatted, static_cast<std::size_t>(n));
    redisFreeCommand(formatted);
    auto [write_ec, written] = co_await net::async_write(socket_, net::buffer(request), use_ec);
    if (write_ec) {
        broken_ = true;
        co_return nullptr;
    }
    auto reply = co_await next_reply();
    co_return reply;
}

net::awaitable<reply_ptr> redis_connection::next_reply() {
    std::array<char, 4096> buffer;
    for (;;) {
        void* reply = nullptr;
        if (redisReaderGetReply(reader_.get(), &reply) != REDIS_OK) {
            broken_ = true;
            co_return nullptr;
        }
        if (reply) co_return reply_ptr(static_cast<redisReply*>(reply));
        auto [read_ec, got] = co_await socket_.async_read_some(net::buffer(buffer), use_ec);
        if (read_ec) {
            broken_ = true;
            co_return nullptr;
        }
        redisReaderFeed(reader_.get(), buffer.data(), got);
    }
}

void redis_connection::close() {
    broken_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);
}

config::parsed<redis_address> parse_redis_url(std::string_view url) {
    using result = config::parsed<redis_address>;
    if (!url.starts_with("redis://")) return result::fail("must start with redis://");
    auto rest = url.substr(8);
    redis_address a;
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        auto credentials = rest.substr(0, at);
        rest = rest.substr(at + 1);
        auto colon = credentials.find(':');
        if (colon == std::string_view::npos) {
            a.password = std::string(credentials);
        } else {
            a.user = std::string(credentials.substr(0, colon));
            a.password = std::string(credentials.substr(colon + 1));
        }
    }
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        auto db = rest.substr(slash + 1);
        rest = rest.substr(0, slash);
        if (!db.empty()) {
            auto [end, ec] = std::from_chars(db.data(), db.data() + db.size(), a.db);
            if (ec != std::errc() || end != db.data() + db.size() || a.db < 0)
                return result::fail("the database after `/` must be a number");
        }
    }
    if (auto colon = rest.rfind(':'); colon != std::string_view::npos && rest.front() != '[') {
        a.port = std::string(rest.substr(colon + 1));
        rest = rest.substr(0, colon);
    }
    if (!rest.empty()) a.host = std::string(rest);
    if (a.port.empty() || a.port.find_first_not_of("0123456789") != std::string::npos)
        return result::fail("the port must be a number");
    return {a, {}};
}

redis_pool::redis_pool(redis_address address, config::duration timeout)
    : address_(std::move(address)), timeout_(timeout) {}

redis_pool::~redis_pool() = default;

std::unique_ptr<redis_connection> redis_pool::take() {
    std::lock_guard lock(mutex_);
    auto& mine = idle_[std::this_thread::get_id()];
    while (!mine.empty()) {
        auto conn = std::move(mine.back());
        mine.pop_back();
        if (conn->open()) return conn;
    }
    return nullptr;
}

void redis_pool::give_back(std::unique_ptr<redis_connection> conn) {
    std::lock_guard lock(mutex_);
    auto& mine = idle_[std::this_thread::get_id()];
    if (mine.size() < 64) mine.push_back(std::move(conn));
}

net::awaitable<redis_pool::outcome> redis_pool::run(std::vector<std::string> command) {
    using namespace net::experimental::awaitable_operators;
    auto executor = co_await net::this_coro::executor;
    auto conn = take();
    outcome out;
    auto exchange = [&]() -> net::awaitable<reply_ptr> {
        // A timeout shows as failed I/O, handled as a value.
        co_await net::this_coro::throw_if_cancelled(false);
        if (!conn) {
            conn = std::make_unique<redis_connection>(executor);
            out.problem = co_await conn->connect(address_);
            if (!out.problem.empty()) co_return nullptr;
        }
        auto reply = co_await conn->command(command);
        co_return reply;
    };
    net::steady_timer timer(executor, timeout_);
    auto raced = co_await (exchange() || timer.async_wait(net::as_tuple(net::use_awaitable)));
    if (raced.index() == 0) out.reply = std::move(std::get<0>(raced));
    if (raced.index() == 1)
        out.problem = "no answer within " + std::to_string(timeout_.count()) + " ms";
    if (out.reply && out.reply->type == REDIS_REPLY_ERROR)
        out.problem = std::string(out.reply->str, out.reply->len);
    else if (!out.reply && out.problem.empty())
        out.problem = "the connection failed";
    if (out.reply && conn && conn->open())
        give_back(std::move(conn));
    else if (conn)
        conn->close();
    co_return out;
}

}  // namespace gateway::io
