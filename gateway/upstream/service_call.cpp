#include "gateway/upstream/service_call.hpp"

#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <optional>

namespace gateway::upstream {

namespace net = boost::asio;

config::parsed<config::upstream_config> service_upstream(std::string name, const std::string& url,
                                                         config::duration timeout) {
    auto endpoint = config::parse_base_url(url);
    if (!endpoint)
        return config::parsed<config::upstream_config>::fail("`" + url + "`: " + endpoint.error);
    return {service_upstream(std::move(name), url, std::move(*endpoint.value), timeout), {}};
}

config::upstream_config service_upstream(std::string name, std::string url,
                                         config::upstream_endpoint endpoint,
                                         config::duration timeout) {
    config::upstream_config up;
    up.name = std::move(name);
    up.base_url = std::move(url);
    up.endpoint = std::move(endpoint);
    up.connect_timeout = timeout;
    up.first_byte_timeout = timeout;
    up.idle_timeout = timeout;
    return up;
}

net::awaitable<config::parsed<service_answer>> call_service(const config::upstream_config& service,
                                                            const std::string& head,
                                                            std::string_view body,
                                                            service_call_options options) {
    using result = config::parsed<service_answer>;
    auto tls = std::move(options.tls);
    if (service.endpoint.tls && !tls) {
        auto context = make_client_context(service);
        if (!context) co_return result::fail(context.error);
        tls = *context.value;
    }
    pool connections(service, tls);
    // The deadline closes the connection in use. Its handler may run after the call has ended
    // (both were ready at once), so it shares with the call what it reads.
    struct watch {
        connection* in_use = nullptr;
        bool over = false;
        bool late = false;
    };
    auto w = std::make_shared<watch>();
    auto executor = co_await net::this_coro::executor;
    net::steady_timer deadline(executor);
    auto hooks = options.hooks;
    if (options.until) {
        deadline.expires_at(*options.until);
        deadline.async_wait([w](boost::system::error_code ec) {
            if (ec || w->over) return;
            w->late = true;
            if (w->in_use) w->in_use->close();
        });
        hooks.in_use = [w, theirs = options.hooks.in_use](connection* c) {
            w->in_use = c;
            if (theirs) theirs(c);
        };
        hooks.abandoned = [w, theirs = options.hooks.abandoned] {
            return w->late || (theirs && theirs());
        };
    }
    std::optional<response_parser> parser;
    auto started =
        co_await start_exchange(connections, executor, head, body, parser, false, true, hooks);
    service_answer out;
    failure failed = started.failed;
    if (started.conn)
        failed = co_await read_body(*started.conn, *parser, out.body, options.answer_limit,
                                    service.idle_timeout, options.until);
    w->over = true;
    deadline.cancel();
    if (hooks.in_use) hooks.in_use(nullptr);
    if (w->late) co_return result::fail("no answer in time");
    if (!started.conn)
        co_return result::fail(failed.detail.empty() ? "the call was abandoned" : failed.detail);
    if (failed) co_return result::fail(failed.detail);
    out.status = parser->get().result_int();
    co_return result{std::move(out), {}};
}

std::string service_request_head(std::string_view method, const config::upstream_config& service,
                                 std::string_view target, std::string_view fields,
                                 std::size_t length) {
    std::string head;
    head += method;
    head += ' ';
    head += service.endpoint.base_path;
    head += target;
    head += " HTTP/1.1\r\nHost: ";
    head += host_header(service.endpoint);
    head += "\r\nUser-Agent: contextgate\r\n";
    head += fields;
    head += "Content-Length: " + std::to_string(length) + "\r\nConnection: close\r\n\r\n";
    return head;
}

std::string first_bytes(std::string_view body) {
    std::string out(body.substr(0, 200));
    for (char& c : out)
        if (c == '\r' || c == '\n' || c == '\t') c = ' ';
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

}  // namespace gateway::upstream
