#include "gateway/http/response.hpp"

#include "gateway/append.hpp"
#include "gateway/error.hpp"
#include "gateway/io/write_all.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

#include <array>
#include <charconv>

namespace gateway::http {

std::string_view reason_phrase(unsigned status) {
    auto text = beast::http::obsolete_reason(static_cast<beast::http::status>(status));
    return text == "<unknown-status>" ? std::string_view{} : std::string_view(text);
}

response_head::response_head(unsigned status, std::string_view reason) {
    head_.reserve(512);
    char code[16];
    auto end = std::to_chars(code, code + sizeof code, status).ptr;
    append(head_, {"HTTP/1.1 ", std::string_view(code, end - code), " ",
                   reason.empty() ? reason_phrase(status) : reason, "\r\n"});
}

response_head& response_head::field(std::string_view name, std::string_view value) {
    has_request_id_ = has_request_id_ || beast::iequals(name, "x-request-id");
    append(head_, {name, ": ", value, "\r\n"});
    return *this;
}

std::string response_head::finish(std::string_view request_id, std::string_view framing,
                                  std::string_view connection) {
    if (!has_request_id_) field("x-request-id", request_id);
    if (!framing.empty()) append(head_, {framing, "\r\n"});
    if (!connection.empty()) field("Connection", connection);
    append(head_, {"\r\n"});
    return std::move(head_);
}

net::awaitable<boost::system::error_code> write_response(
    request_context& ctx, unsigned status, std::string_view content_type, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& extra) {
    if (ctx.draining) ctx.keep_alive = false;
    // 1xx, 204 and 304 carry no body and name no length (a 304's would have to be the 200's).
    bool bodyless = status < 200 || status == 204 || status == 304;
    response_head h(status);
    if (!content_type.empty()) h.field("Content-Type", content_type);
    for (const auto& [name, value] : extra) h.field(name, value);
    std::string framing;
    if (!bodyless) framing = "Content-Length: " + std::to_string(body.size());
    auto head = h.finish(ctx.request_id, framing, ctx.keep_alive ? "" : "close");
    bool with_body = !bodyless && ctx.req.method() != beast::http::verb::head;
    ctx.started();
    ctx.status = status;
    ctx.bytes_sent = with_body ? body.size() : 0;
    std::array<net::const_buffer, 2> buffers{net::buffer(head),
                                             net::buffer(body.data(), body.size())};
    if (!with_body) buffers[1] = net::const_buffer{};
    auto ec = co_await io::write_all(ctx.stream, ctx.deadline, ctx.server.write_timeout, buffers);
    if (ec) ctx.keep_alive = false;
    co_return ec;
}

net::awaitable<boost::system::error_code> write_error(
    request_context& ctx, boost::system::error_code ec, std::string_view message,
    const std::vector<std::pair<std::string, std::string>>& extra) {
    auto response = to_error_response(ec, message);
    auto written =
        co_await write_response(ctx, response.status, "application/json", response.body, extra);
    co_return written;
}

}  // namespace gateway::http
