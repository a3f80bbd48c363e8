#pragma once

#include "gateway/http/router.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gateway::http {

// DNS-rebinding and cross-site protection, for every route. A web page the user visits can reach
// a gateway on the user's machine in two ways: through a name of its own that it rebinds to
// 127.0.0.1 (the browser then sends that name as Host), or by addressing 127.0.0.1 itself (the
// browser then sends the page's Origin, or none for a plain navigation). So:
// - Host must name this gateway: an IP literal (a rebinding needs a name the attacker owns),
//   `localhost` or a name under `.localhost`, the listen address's host, or one of `allowed`
//   (names, with or without a port; "*" allows any);
// - an Origin, when a browser sent one, must be the request's own Host (same origin), a
//   loopback origin (a frontend served on this machine), or name one of `allowed`; "null"
//   (a sandboxed or file page) is refused.
// Immutable after construction; thread-safe.
class origin_rule {
public:
    origin_rule(const std::vector<std::string>& allowed, std::string_view listen_host);

    bool allowed_host(std::string_view authority) const;
    bool allowed_origin(std::string_view origin, std::string_view host) const;
    // Host and Origin of `head` together.
    bool allows(const beast::http::request_header<>& head) const;

    // The rule as a router guard over every path (403 in OpenAI's envelope).
    guard as_guard() const;

private:
    bool listed(std::string_view host) const;

    bool any_ = false;
    std::vector<std::string> names_;  // lower case, without ports
};

// The gateway's own APIs take JSON bodies. A state-changing request (POST, PUT, PATCH, DELETE)
// with a body under `prefix` must say `Content-Type: application/json` (or another `+json`
// type), else 415: a form or text/plain body is what any web page may send cross-site without
// asking first (a CORS "simple request"); a JSON one makes the browser ask, and the gateway
// does not say yes.
guard json_body_guard(std::string_view prefix);

}  // namespace gateway::http
