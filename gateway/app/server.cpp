#include "gateway/app/server.hpp"

#include "gateway/http/listener.hpp"
#include "gateway/http/response.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/passthrough/handler.hpp"
#include "gateway/passthrough/model_router.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>

namespace gateway::app {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

net::awaitable<void> healthz(http::request_context& ctx) {
    co_await http::write_response(ctx, 200, "application/json", R"({"status":"ok"})");
}

net::awaitable<void> readyz(http::request_context& ctx) {
    if (ctx.draining)
        co_await http::write_response(ctx, 503, "application/json", R"({"status":"draining"})");
    else
        co_await http::write_response(ctx, 200, "application/json", R"({"status":"ready"})");
}

}  // namespace

server::server(config::gateway_config config) : config_(std::move(config)) {}

server::~server() {
    stop();
    wait();
}

std::string server::start() {
    std::vector<std::shared_ptr<net::ssl::context>> tls_contexts;
    for (const auto& up : config_.upstreams) {
        if (!up.endpoint.tls) {
            tls_contexts.push_back(nullptr);
            continue;
        }
        auto context = upstream::make_client_context(up);
        if (!context) return context.error;
        tls_contexts.push_back(*context.value);
    }
    model_router_ = std::make_unique<passthrough::model_router>(config_.upstreams);

    const auto& listen = config_.server.listen;
    boost::system::error_code ec;
    auto address = net::ip::make_address(listen.host, ec);
    if (ec) {
        net::io_context resolve_io;
        tcp::resolver resolver(resolve_io);
        auto results = resolver.resolve(listen.host, std::to_string(listen.port), ec);
        if (ec || results.empty())
            return "cannot resolve listen address `" + listen.host + "`: " + ec.message();
        address = results.begin()->endpoint().address();
    }
    tcp::endpoint at(address, listen.port);

    unsigned count = config_.server.workers ? config_.server.workers
                                            : std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < count; ++i) {
        auto handler =
            std::make_unique<passthrough::handler>(config_, *model_router_, tls_contexts);
        auto* forward = handler.get();
        handlers_.push_back(std::move(handler));
        // The route table, aligned so it reads like the API reference.
        // clang-format off
        std::vector<http::route> routes{
            {"GET", "/healthz", false, healthz},
            {"GET", "/readyz",  false, readyz},
            {"*",   "/v1/",     true,  [forward](http::request_context& c) { return (*forward)(c); }},
        };
        // clang-format on
        auto w = std::make_unique<http::worker>(config_.server, config_.logging.access_log,
                                                http::router(std::move(routes)));
        w->on_drain([forward] { forward->close_idle(); });
        tcp::endpoint bound;
        if (auto bind_ec = w->listen(at, bound); bind_ec)
            return "cannot listen on " + listen.host + ":" + std::to_string(at.port()) + ": " +
                   bind_ec.message();
        // Port 0 was resolved by the first bind; the other workers share that port.
        at.port(bound.port());
        port_ = bound.port();
        workers_.push_back(std::move(w));
    }
    for (auto& w : workers_) {
        w->start();
        threads_.emplace_back([worker = w.get()] { worker->io().run(); });
    }
    return {};
}

void server::stop() {
    for (auto& w : workers_) net::post(w->io(), [worker = w.get()] { worker->drain(); });
}

void server::wait() {
    for (auto& t : threads_)
        if (t.joinable()) t.join();
}

int serve(const config::gateway_config& config) {
    std::signal(SIGPIPE, SIG_IGN);
    server gateway(config);
    if (auto error = gateway.start(); !error.empty()) {
        observability::log_error(error);
        return 1;
    }
    observability::log_info("contextgate " CONTEXTGATE_VERSION " listening on http://" +
                            config.server.listen.host + ":" + std::to_string(gateway.port()) +
                            " with " + std::to_string(gateway.workers()) + " worker(s)");
    net::io_context signals_io;
    net::signal_set signals(signals_io, SIGINT, SIGTERM);
    int received = 0;
    std::function<void(boost::system::error_code, int)> on_signal =
        [&](boost::system::error_code ec, int number) {
            if (ec) return;
            if (++received == 1) {
                observability::log_info("signal " + std::to_string(number) +
                                        ": draining in-flight requests");
                gateway.stop();
                signals.async_wait(on_signal);
            } else {
                observability::log_warn("second signal: exiting without draining");
                std::_Exit(1);
            }
        };
    signals.async_wait(on_signal);
    std::thread signal_thread([&] { signals_io.run(); });
    gateway.wait();
    signals_io.stop();
    signal_thread.join();
    observability::log_info("contextgate stopped");
    return 0;
}

}  // namespace gateway::app
