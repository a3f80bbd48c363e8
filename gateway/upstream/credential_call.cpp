#include "gateway/upstream/credential_call.hpp"

#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/this_coro.hpp>

#include <optional>

namespace gateway::upstream {

namespace net = boost::asio;

namespace {

// Bounds on what a credential service may send: its answers are a few kilobytes.
constexpr std::size_t answer_limit = 64 * 1024;

}  // namespace

config::parsed<config::upstream_config> credential_service(std::string name, const std::string& url,
                                                           config::duration timeout) {
    auto endpoint = config::parse_base_url(url);
    if (!endpoint)
        return config::parsed<config::upstream_config>::fail("`" + url + "`: " + endpoint.error);
    config::upstream_config up;
    up.name = std::move(name);
    up.base_url = url;
    up.endpoint = std::move(*endpoint.value);
    up.connect_timeout = timeout;
    up.first_byte_timeout = timeout;
    up.idle_timeout = timeout;
    return {std::move(up), {}};
}

net::awaitable<config::parsed<credential_answer>> call_credential_service(
    const config::upstream_config& service, const std::string& head, std::string_view body,
    const exchange_hooks& hooks) {
    using result = config::parsed<credential_answer>;
    std::shared_ptr<net::ssl::context> tls;
    if (service.endpoint.tls) {
        auto context = make_client_context(service);
        if (!context) co_return result::fail(context.error);
        tls = *context.value;
    }
    pool connections(service, tls);
    std::optional<response_parser> parser;
    auto executor = co_await net::this_coro::executor;
    auto started =
        co_await start_exchange(connections, executor, head, body, parser, false, true, hooks);
    if (!started.conn)
        co_return result::fail(started.failed.detail.empty() ? "the call was abandoned"
                                                             : started.failed.detail);
    credential_answer out;
    auto failed =
        co_await read_body(*started.conn, *parser, out.body, answer_limit, service.idle_timeout);
    if (hooks.in_use) hooks.in_use(nullptr);
    if (failed) co_return result::fail(failed.detail);
    out.status = parser->get().result_int();
    co_return result{std::move(out), {}};
}

std::string credential_request_head(std::string_view method, const config::upstream_config& service,
                                    std::string_view target, std::string_view fields,
                                    std::size_t length) {
    std::string head;
    head += method;
    head += ' ';
    head += service.endpoint.base_path;
    head += target;
    head += " HTTP/1.1\r\nHost: ";
    append_host_header(head, service.endpoint);
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
