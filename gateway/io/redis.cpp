#include "gateway/io/redis.hpp"

#include <hiredis/hiredis.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
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

}  // namespace gateway::io
