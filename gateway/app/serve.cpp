// The process around the server: the descriptor limit, the signals (SIGHUP reloads, the first
// SIGINT or SIGTERM drains, a second one exits at once) on a thread of their own, and a drain
// bounded by drain_time and a grace period.
#include "gateway/app/server.hpp"

#include "gateway/console/assets.hpp"
#include "gateway/io/descriptors.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/observability/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <cstdlib>
#include <functional>
#include <thread>

namespace gateway::app {

namespace net = boost::asio;

namespace {

// How long past drain_time serve() waits for the threads before it gives up on them.
constexpr std::chrono::milliseconds drain_grace{3000};

}  // namespace

int serve(const config::gateway_config& config) {
    std::signal(SIGPIPE, SIG_IGN);
    // Before any thread starts (see reserve_descriptors).
    auto room = io::reserve_descriptors();
    if (room.raised_from)
        observability::log_info("open-descriptor limit raised from " +
                                std::to_string(room.raised_from) + " to " +
                                std::to_string(room.limit));
    if (room.limit < 4096)
        observability::log_warn("open-descriptor limit is " + std::to_string(room.limit) +
                                ": about " + std::to_string(room.limit / 2) +
                                " streams at once (each holds a client and an upstream "
                                "connection); raise it with `ulimit -n` or LimitNOFILE=");
    // Signals are caught before anyone can learn the port: a SIGHUP right after "listening"
    // must reload, not kill.
    net::io_context signals_io;
    net::signal_set signals(signals_io, SIGINT, SIGTERM, SIGHUP);
    server gateway(config);
    if (auto error = gateway.start(); !error.empty()) {
        observability::log_error(error);
        return 1;
    }
    auto origin = "http://" + config.server.listen.host + ":" + std::to_string(gateway.port());
    // The console's address is the first thing a new user opens: on the line they read.
    bool console = config.server.console && !console::embedded_assets().empty();
    observability::log_info("contextgate " CONTEXTGATE_VERSION " listening on " + origin +
                            " with " + std::to_string(gateway.workers()) + " worker(s)" +
                            (console ? "; console at " + origin + "/console" : "") +
                            (gateway.metrics_port()
                                 ? "; metrics on port " + std::to_string(gateway.metrics_port())
                                 : ""));
    int received = 0;
    // Drain is bounded: if threads are still running past drain_time and a grace period, that
    // is a bug (something the drain forgot to close); it is logged and the process exits anyway,
    // because an orchestrator's SIGKILL would follow.
    net::steady_timer watchdog(signals_io);
    std::function<void(boost::system::error_code, int)> on_signal =
        [&](boost::system::error_code ec, int number) {
            if (ec) return;
            if (number == SIGHUP) {
                gateway.reload_file();
                signals.async_wait(on_signal);
                return;
            }
            if (++received == 1) {
                observability::log_info("signal " + std::to_string(number) +
                                        ": draining in-flight requests");
                gateway.stop();
                watchdog.expires_after(config.server.drain_time + drain_grace);
                watchdog.async_wait([](boost::system::error_code ec) {
                    if (ec) return;
                    observability::log_error("still running " +
                                             std::to_string(drain_grace.count() / 1000) +
                                             " s after drain_time: exiting without waiting");
                    std::_Exit(1);
                });
                signals.async_wait(on_signal);
            } else {
                observability::log_warn("second signal: exiting without draining");
                std::_Exit(1);
            }
        };
    signals.async_wait(on_signal);
    std::thread signal_thread([&] {
        io::name_this_thread("signals");
        signals_io.run();
    });
    gateway.wait();
    signals_io.stop();
    signal_thread.join();
    observability::log_info("contextgate stopped");
    return 0;
}

}  // namespace gateway::app
