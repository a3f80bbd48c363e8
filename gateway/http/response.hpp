#pragma once

#include "gateway/http/context.hpp"

#include <boost/system/error_code.hpp>

#include <string_view>

namespace gateway::http {

// Writes a complete response with x-request-id, Content-Length and, when the connection will
// close, `Connection: close`. Returns the write error (the caller then drops the connection).
net::awaitable<boost::system::error_code> write_response(request_context& ctx, unsigned status,
                                                         std::string_view content_type,
                                                         std::string_view body);

// The same with OpenAI's error envelope for `ec` (see gateway::to_error_response).
net::awaitable<boost::system::error_code> write_error(request_context& ctx,
                                                      boost::system::error_code ec,
                                                      std::string_view message = {});

// Reason phrase for a status code ("OK", "Bad Gateway", ...), "" for unknown codes.
std::string_view reason_phrase(unsigned status);

}  // namespace gateway::http
