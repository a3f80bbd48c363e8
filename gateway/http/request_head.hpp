#pragma once

#include "gateway/error.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string>

namespace gateway::http {

// Why a request is refused on its head alone. The connection closes after the answer: a body
// that may follow cannot be framed reliably, or was never read.
struct head_refusal {
    errc code;
    std::string message;
};

// The checks a request head must pass before the gateway reads its body or routes it:
// - framing (RFC 9112 §6): a Transfer-Encoding must end in `chunked`, applied once, or the body
//   length is unknowable and the bytes after the head could be read as a second, smuggled
//   request (400); other transfer codings before `chunked` are not supported (501); an HTTP/1.0
//   request must not carry Transfer-Encoding at all (400);
// - Host (RFC 9112 §3.2): exactly one non-empty field in HTTP/1.1, at most one in HTTP/1.0;
// - the target: normalized in place by normalize_target (origin-form, dot segments removed), or
//   refused.
// `head` is the message whose header the parser has read (its body not yet): the framing Beast
// will apply to the body (message::chunked) must agree with the gateway's reading.
// Pure: no I/O, so the fuzz target drives it exactly as the session does.
std::optional<head_refusal> check_request_head(
    boost::beast::http::request<boost::beast::http::string_body>& head);

// Removes the fields a chunked body's trailer added after the header's first `header_fields`
// fields. Beast's parser appends trailer fields to the header, where they would pass for request
// headers: an `Authorization` sent only in a trailer must authenticate nothing and is never
// forwarded (RFC 9110 §6.5.1 lets a recipient discard trailers).
void drop_trailer_fields(boost::beast::http::fields& fields, std::size_t header_fields);

}  // namespace gateway::http
