#include "gateway/http/router.hpp"

#include "gateway/error.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"

namespace gateway::http {

net::awaitable<void> router::dispatch(request_context& ctx) const {
    std::string_view target = ctx.req.target();
    std::string_view path = target.substr(0, target.find('?'));
    const route* found = nullptr;
    bool path_known = false;
    for (const auto& r : routes_) {
        bool matches = r.prefix ? path.starts_with(r.path) : path == r.path;
        if (!matches) continue;
        path_known = true;
        if (r.method == "*" || r.method == ctx.req.method_string()) {
            found = &r;
            break;
        }
    }
    if (!found) {
        auto ec = path_known ? errc::method_not_allowed : errc::not_found;
        co_await write_error(ctx, ec);
        co_return;
    }
    std::string failure;
    try {
        co_await found->handle(ctx);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (failure.empty()) co_return;
    observability::log_error("request " + ctx.request_id + ": unhandled exception: " + failure);
    if (ctx.response_started) {
        ctx.keep_alive = false;
        co_return;
    }
    ctx.keep_alive = false;
    co_await write_error(ctx, errc::internal);
}

}  // namespace gateway::http
