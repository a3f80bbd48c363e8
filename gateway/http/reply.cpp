#include "gateway/http/reply.hpp"

#include "gateway/http/response.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::http {

reply reply::json(unsigned status, const boost::json::value& body) {
    reply r;
    r.status = status;
    r.body = boost::json::serialize(body);
    return r;
}

reply reply::error(boost::system::error_code code, std::string_view message) {
    auto response = to_error_response(code, message);
    reply r;
    r.status = response.status;
    r.body = std::move(response.body);
    return r;
}

reply reply::streamed(std::function<net::awaitable<void>(request_context&)> stream) {
    reply r;
    r.stream = std::move(stream);
    return r;
}

net::awaitable<void> write_reply(request_context& ctx, reply r) {
    if (r.stream) {
        co_await r.stream(ctx);
        co_return;
    }
    co_await write_response(ctx, r.status, r.content_type, r.body, r.headers);
}

}  // namespace gateway::http
