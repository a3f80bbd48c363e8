#include "gateway/http/response.hpp"

#include "gateway/error.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/status.hpp>

#include <array>

namespace gateway::http {

std::string_view reason_phrase(unsigned status) {
    auto text = beast::http::obsolete_reason(static_cast<beast::http::status>(status));
    return text == "<unknown-status>" ? std::string_view{} : std::string_view(text);
}

net::awaitable<boost::system::error_code> write_response(request_context& ctx, unsigned status,
                                                         std::string_view content_type,
                                                         std::string_view body) {
    if (ctx.draining) ctx.keep_alive = false;
    std::string head;
    head.reserve(256);
    head += "HTTP/1.1 ";
    head += std::to_string(status);
    head += ' ';
    head += reason_phrase(status);
    head += "\r\nContent-Type: ";
    head += content_type;
    head += "\r\nContent-Length: ";
    head += std::to_string(body.size());
    head += "\r\nx-request-id: ";
    head += ctx.request_id;
    if (!ctx.keep_alive) head += "\r\nConnection: close";
    head += "\r\n\r\n";
    ctx.response_started = true;
    ctx.status = status;
    ctx.bytes_sent = body.size();
    std::array<net::const_buffer, 2> buffers{net::buffer(head),
                                             net::buffer(body.data(), body.size())};
    if (ctx.req.method() == beast::http::verb::head) buffers[1] = net::const_buffer{};
    ctx.deadline.arm(ctx.server.write_timeout);
    auto [ec, n] =
        co_await net::async_write(ctx.stream, buffers, net::as_tuple(net::use_awaitable));
    if (ec) ctx.keep_alive = false;
    co_return ec;
}

net::awaitable<boost::system::error_code> write_error(request_context& ctx,
                                                      boost::system::error_code ec,
                                                      std::string_view message) {
    auto response = to_error_response(ec, message);
    auto written = co_await write_response(ctx, response.status, "application/json", response.body);
    co_return written;
}

}  // namespace gateway::http
