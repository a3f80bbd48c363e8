#pragma once

#include "gateway/error.hpp"
#include "gateway/http/context.hpp"
#include "gateway/principal.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::http {

// One route: a method ("*" for any), a path, and whether the path is a prefix. A path segment
// written `{name}` matches any one non-empty segment; the matched segments are handed to the
// handler in `request_context::path_params`, in order.
struct route {
    std::string_view method;
    std::string_view path;
    bool prefix;
    handler handle;
};

// A gate in front of a group of routes: a request whose path is `prefix` or lies beneath it
// (`prefix/…`) must satisfy `allow`, judged on the request head alone and on who it says is
// asking (the router's identification; null: nobody). The session asks before it reads the
// body and before any route is looked up, so a refused caller sends no body the gateway would
// hold and learns nothing about which routes exist.
struct guard {
    std::string_view prefix;
    std::function<bool(const beast::http::request_header<>&, const auth::principal*)> allow;
    errc refusal;
    std::string message;
};

// The gateway's one route table. The first matching route handles the request; a path that
// matches no route is 404 and a known path with another method is 405, both in OpenAI's
// envelope. An exception escaping a handler (a bug) is logged and answered with a 500 when no
// response has started, otherwise the connection is closed. Immutable after construction.
// Whether `path` matches `pattern` (see route); fills `captures` with the `{…}` segments.
bool match_path(std::string_view pattern, std::string_view path, bool prefix,
                std::vector<std::string>& captures);

// How a request head names who is asking (auth/: a session cookie, the admin key), asked for
// the paths beneath `prefixes` only (the faces that care; /v1 has keys of its own).
struct identification {
    std::vector<std::string_view> prefixes;
    std::function<net::awaitable<std::optional<auth::principal>>(
        const beast::http::request_header<>&)>
        find;
};

class router {
public:
    explicit router(std::vector<route> routes, std::vector<guard> guards = {},
                    identification identify = {});

    // Whether who asks matters for the request `head`: its path lies beneath one of the
    // identification's prefixes.
    bool identifies(const beast::http::request_header<>& head) const;
    // Who `head` says is asking (see identification).
    net::awaitable<std::optional<auth::principal>> identify(
        const beast::http::request_header<>& head) const;

    // The guard that refuses this request head from `who` (null: nobody), or null when it may
    // go on.
    const guard* refusing_guard(const beast::http::request_header<>& head,
                                const auth::principal* who) const;

    net::awaitable<void> dispatch(request_context& ctx) const;

private:
    std::vector<route> routes_;
    // What a path must start with for a route to match it, so that most routes are passed over
    // without match_path (a request meets some forty routes before /v1/): the route's path up
    // to its first `{`, and that literal's first segment with its closing `/` (empty when the
    // literal does not close one). A path without that segment matches none of the routes from
    // this one to `skip`, which all begin with it: the table's groups (/context/, /auth/) are
    // passed over in one comparison each.
    struct literal_start {
        std::string_view literal;
        std::string_view segment;
        std::size_t skip;
    };
    std::vector<literal_start> starts_;
    std::vector<guard> guards_;
    identification identify_;
};

}  // namespace gateway::http
