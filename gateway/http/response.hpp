#pragma once

#include "gateway/http/context.hpp"

#include <boost/system/error_code.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::http {

// A response head, built as bytes: the status line, the fields given, then what every response
// of the gateway carries — x-request-id (unless a field gave one), the framing line
// ("Content-Length: n", "Transfer-Encoding: chunked", or none) and Connection when the
// connection closes after it (or upgrades). The one writer of response heads.
class response_head {
public:
    response_head(unsigned status, std::string_view reason = {});
    response_head& field(std::string_view name, std::string_view value);
    // The head's bytes. `request_id` goes out unless a field gave one; `connection`: ""
    // (keep-alive), "close" or "Upgrade".
    std::string finish(std::string_view request_id, std::string_view framing,
                       std::string_view connection);

private:
    std::string head_;
    bool has_request_id_ = false;
};

// Writes a complete response with x-request-id, Content-Length, `extra` fields and, when the
// connection will close, `Connection: close`. A HEAD request gets the head alone; a 1xx, 204 or
// 304 status neither a body nor a Content-Length. Returns the write error (the caller then drops
// the connection).
net::awaitable<boost::system::error_code> write_response(
    request_context& ctx, unsigned status, std::string_view content_type, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& extra = {});

// The same with OpenAI's error envelope for `ec` (see gateway::to_error_response).
net::awaitable<boost::system::error_code> write_error(
    request_context& ctx, boost::system::error_code ec, std::string_view message = {},
    const std::vector<std::pair<std::string, std::string>>& extra = {});

// Reason phrase for a status code ("OK", "Bad Gateway", ...), "" for unknown codes.
std::string_view reason_phrase(unsigned status);

}  // namespace gateway::http
