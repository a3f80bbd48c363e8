#pragma once

#include <boost/beast/http/fields.hpp>

#include <functional>
#include <string_view>

namespace gateway::passthrough {

// Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade (RFC 9110 7.6.1).
bool is_hop_by_hop(std::string_view name);

// Calls `visit(field, name, value)` for every end-to-end field of `from`, in order, with the
// sender's spelling of the name. Skips hop-by-hop fields, fields named in `from`'s Connection
// header, and `Host` and `Content-Length`, which every forwarded message sets for itself.
void for_each_end_to_end(
    const boost::beast::http::fields& from,
    const std::function<void(boost::beast::http::field, std::string_view, std::string_view)>& visit);

// Copies every end-to-end field of `from` into `to`, in order and with the original name casing
// and values. Drops hop-by-hop fields and any field named in `from`'s Connection header.
// `Host` and `Content-Length` are left to the caller, which sets them for its own message.
void copy_end_to_end(const boost::beast::http::fields& from, boost::beast::http::fields& to);

}  // namespace gateway::passthrough
