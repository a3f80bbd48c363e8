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
void for_each_end_to_end(const boost::beast::http::fields& from,
                         const std::function<void(boost::beast::http::field, std::string_view,
                                                  std::string_view)>& visit);

}  // namespace gateway::passthrough
