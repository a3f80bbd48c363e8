#pragma once

#include "gateway/http/context.hpp"

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

// The gateway's one route table. The first matching route handles the request; a path that
// matches no route is 404 and a known path with another method is 405, both in OpenAI's
// envelope. An exception escaping a handler (a bug) is logged and answered with a 500 when no
// response has started, otherwise the connection is closed. Immutable after construction.
// Whether `path` matches `pattern` (see route); fills `captures` with the `{…}` segments.
bool match_path(std::string_view pattern, std::string_view path, bool prefix,
                std::vector<std::string>& captures);

class router {
public:
    explicit router(std::vector<route> routes) : routes_(std::move(routes)) {}

    net::awaitable<void> dispatch(request_context& ctx) const;

private:
    std::vector<route> routes_;
};

}  // namespace gateway::http
