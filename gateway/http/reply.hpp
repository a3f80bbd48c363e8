#pragma once

#include "gateway/error.hpp"
#include "gateway/http/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gateway::http {

// What a handler answers, as a value: a complete response (JSON, an error in OpenAI's envelope),
// or a stream the handler writes itself (an SSE event stream). write_reply() is the one place
// that turns it into bytes on the connection.
struct reply {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // besides the ones every reply has
    std::function<net::awaitable<void>(request_context&)> stream;  // set: streamed instead

    static reply json(unsigned status, const boost::json::value& body);
    // OpenAI's error envelope for `code`, with `message` (the code's default when empty).
    static reply error(boost::system::error_code code, std::string_view message = {});
    static reply error(const refusal& r) { return error(r.code, r.message); }
    static reply streamed(std::function<net::awaitable<void>(request_context&)> stream);

    reply& header(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
};

// Writes `r` on the request's connection (see write_response for the fields every reply has).
net::awaitable<void> write_reply(request_context& ctx, reply r);

}  // namespace gateway::http
