#include "gateway/upstream/prober.hpp"

#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/upstream/authorize.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace gateway::upstream {

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);

// Where each dialect lists its models, below the upstream's base path (Anthropic's base_url is
// the host's root; OpenAI-compatible and Gemini ones end with their version).
std::string_view models_target(config::provider_kind p) {
    return p == config::provider_kind::anthropic ? "/v1/models" : "/models";
}

}  // namespace

std::string prober::request_head(const config::upstream_config& u, std::string_view authorization) {
    std::string head = "GET ";
    head += u.endpoint.base_path;
    append_wire_target(head, u, {}, models_target(u.provider));
    head += " HTTP/1.1\r\nHost: ";
    append_host_header(head, u.endpoint);
    head += "\r\nAccept: application/json\r\nUser-Agent: contextgate-probe\r\n";
    head += providers::auth_fields_of(u, providers::adapter_for(u.provider), u.api_key);
    head += authorization;
    head += "Connection: close\r\n\r\n";
    return head;
}

std::string prober::judge(unsigned status) {
    // The probe speaks with the gateway's own key: a 401 is that key refused, a 429 the
    // gateway's quota; a 403 or 404 (no model list here) still says the server answers.
    switch (judge_status(status, {}, credential::gateway)) {
        case verdict::failed:
        case verdict::key_refused:
            return "probe answered " + std::to_string(status);
        default:
            return {};
    }
}

prober::prober(const std::vector<config::upstream_config>& upstreams,
               const config::health_config& settings, health_board& board,
               const std::vector<std::shared_ptr<token_source>>& tokens)
    : upstreams_(upstreams),
      settings_(settings),
      board_(board),
      tasks_(io_.get_executor(), [](const std::string& task, std::exception_ptr e) {
          observability::log_stray(e, "health " + task);
      }) {
    pools_.reserve(upstreams_.size());
    for (std::size_t i = 0; i < upstreams_.size(); ++i) {
        const auto& u = upstreams_[i];
        std::shared_ptr<net::ssl::context> tls;
        auto interval = probe_interval_of(u, settings_);
        if (u.endpoint.tls && interval.count() > 0) {
            auto context = make_client_context(u);
            if (!context) {
                observability::log_warn("upstream `" + u.name +
                                        "` is not probed: " + context.error);
                interval = config::duration(0);
            } else {
                tls = *context.value;
            }
        }
        pools_.emplace_back(u, tls, nullptr, i < tokens.size() ? tokens[i] : nullptr);
        if (interval.count() > 0) tasks_.spawn("probe of " + u.name, keep_probing(i, interval));
    }
    thread_ = std::thread([this] {
        io::name_this_thread("health-probes");
        io_.run();
    });
}

prober::~prober() {
    stop();
}

void prober::stop() {
    if (!thread_.joinable()) return;
    net::post(io_, [this] { tasks_.cancel(); });
    thread_.join();
}

net::awaitable<void> prober::keep_probing(std::size_t index, config::duration interval) {
    co_await net::this_coro::throw_if_cancelled(false);
    net::steady_timer timer(co_await net::this_coro::executor);
    for (;;) {
        board_.probe_started(index);
        auto failure = co_await probe(index);
        auto cancelled = (co_await net::this_coro::cancellation_state).cancelled();
        if (cancelled != net::cancellation_type::none) {
            board_.probe_cancelled(index);
            co_return;
        }
        board_.probe_ended(index, failure);
        timer.expires_after(interval);
        auto [ec] = co_await timer.async_wait(use_ec);
        if (ec) co_return;  // cancelled: the prober stops
    }
}

net::awaitable<std::string> prober::probe(std::size_t index) {
    auto& p = pools_[index];
    // An upstream the gateway holds the tokens of is asked with its current one, as requests
    // are: without it, the refusal would say nothing of the upstream's health.
    std::string authorization;
    if (p.tokens()) {
        auto authorized =
            co_await authorize(p, models_target(p.upstream().provider), std::string_view{});
        if (!authorized.error.empty()) co_return authorized.error;
        authorization = std::move(authorized.fields);
    }
    auto head = request_head(p.upstream(), authorization);
    std::optional<response_parser> parser;
    exchange_hooks hooks;
    hooks.first_byte_timeout = settings_.probe_timeout;
    auto executor = co_await net::this_coro::executor;
    auto started = co_await start_exchange(p, executor, head, {}, parser, false, true, hooks);
    if (!started.conn)
        co_return started.failed.detail.empty() ? std::string("probe failed")
                                                : started.failed.detail;
    // The status is all a probe needs: the connection goes, its body unread.
    unsigned status = parser->get().result_int();
    started.conn->close();
    co_return judge(status);
}

}  // namespace gateway::upstream
