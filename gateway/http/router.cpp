#include "gateway/http/router.hpp"

#include "gateway/error.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"

namespace gateway::http {

bool match_path(std::string_view pattern, std::string_view path, bool prefix,
                std::vector<std::string>& captures) {
    captures.clear();
    if (pattern.find('{') == std::string_view::npos)
        return prefix ? path.starts_with(pattern) : path == pattern;
    while (!pattern.empty()) {
        auto open = pattern.find('{');
        if (open == std::string_view::npos)
            return prefix ? path.starts_with(pattern) : path == pattern;
        if (path.substr(0, open) != pattern.substr(0, open)) return false;
        path.remove_prefix(open);
        auto close = pattern.find('}', open);
        pattern.remove_prefix(close + 1);
        auto end = path.find('/');
        auto segment = path.substr(0, end);
        if (segment.empty()) return false;
        captures.emplace_back(segment);
        path.remove_prefix(segment.size());
    }
    return prefix || path.empty();
}

namespace {

// `path` starts with `prefix`, compared here rather than by string_view::starts_with's memcmp
// call: every request meets some forty prefixes (the routes', the guards', identification's),
// most of which differ from its path within a character or two, where the call costs more than
// the comparison.
bool starts_with(std::string_view path, std::string_view prefix) {
    if (prefix.size() > path.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (path[i] != prefix[i]) return false;
    return true;
}

// `path` is `prefix` or lies beneath it.
bool beneath(std::string_view path, std::string_view prefix) {
    return starts_with(path, prefix) &&
           (path.size() == prefix.size() || path[prefix.size()] == '/');
}

std::string_view path_of(const beast::http::request_header<>& head) {
    std::string_view target = head.target();
    return target.substr(0, target.find('?'));
}

}  // namespace

router::router(std::vector<route> routes, std::vector<guard> guards, identification identify)
    : routes_(std::move(routes)), guards_(std::move(guards)), identify_(std::move(identify)) {
    for (const auto& r : routes_) {
        auto literal = r.path.substr(0, r.path.find('{'));
        auto closing = literal.size() > 1 ? literal.find('/', 1) : std::string_view::npos;
        auto segment =
            closing == std::string_view::npos ? std::string_view{} : literal.substr(0, closing + 1);
        starts_.push_back({literal, segment, 0});
    }
    for (std::size_t i = 0; i < starts_.size(); ++i) {
        auto& s = starts_[i];
        s.skip = i + 1;
        while (!s.segment.empty() && s.skip < starts_.size() &&
               starts_[s.skip].literal.starts_with(s.segment))
            ++s.skip;
    }
}

bool router::identifies(const beast::http::request_header<>& head) const {
    if (!identify_.find) return false;
    auto path = path_of(head);
    for (auto prefix : identify_.prefixes)
        if (beneath(path, prefix)) return true;
    return false;
}

net::awaitable<std::optional<auth::principal>> router::identify(
    const beast::http::request_header<>& head) const {
    return identify_.find(head);
}

const guard* router::refusing_guard(const beast::http::request_header<>& head,
                                    const auth::principal* who) const {
    auto path = path_of(head);
    for (const auto& g : guards_)
        if (beneath(path, g.prefix) && !g.allow(head, who)) return &g;
    return nullptr;
}

net::awaitable<void> router::dispatch(request_context& ctx) const {
    std::string_view target = ctx.req.target();
    std::string_view path = target.substr(0, target.find('?'));
    const route* found = nullptr;
    bool path_known = false;
    std::vector<std::string> captures;
    for (std::size_t i = 0; i < routes_.size(); ++i) {
        const auto& r = routes_[i];
        if (!starts_with(path, starts_[i].literal)) {
            if (!starts_with(path, starts_[i].segment)) i = starts_[i].skip - 1;
            continue;
        }
        if (!match_path(r.path, path, r.prefix, captures)) continue;
        path_known = true;
        if (r.method == "*" || r.method == ctx.req.method_string()) {
            found = &r;
            ctx.route = r.path;
            ctx.path_params = std::move(captures);
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
