#pragma once

#include "gateway/console/assets.hpp"
#include "gateway/http/context.hpp"

#include <span>

namespace gateway::console {

namespace net = boost::asio;

// Serves the web console under /console/ from the embedded files: `/console` redirects to
// `/console/`, which is index.html (revalidated on every load, so a new binary's console is
// picked up at once); `/console/assets/…` are content-hashed and cached for a year. Every answer
// carries a strict Content-Security-Policy (everything from this origin, nothing inline, no
// framing), nosniff and no referrer. ETags are honoured with 304; gzip is sent to clients that
// accept it. GET and HEAD only (the route table answers 405 to the rest).
class site {
public:
    explicit site(std::span<const asset> files) : files_(files) {}

    net::awaitable<void> serve(http::request_context& ctx) const;

private:
    const asset* find(std::string_view name) const;

    std::span<const asset> files_;
};

// Header checks, exposed for the unit tests.
bool accepts_gzip(std::string_view accept_encoding);
bool matches_etag(std::string_view if_none_match, std::string_view etag);

// The Content-Security-Policy of every console response.
inline constexpr std::string_view content_security_policy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

}  // namespace gateway::console
