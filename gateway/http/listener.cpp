#include "gateway/http/listener.hpp"

#include "gateway/http/session.hpp"
#include "gateway/observability/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace gateway::http {

namespace {

using tcp = net::ip::tcp;

// A connection handed to another worker as a bare descriptor: closed if that worker's
// io_context ends without running the hand-over.
struct handed_over {
    int descriptor;
    explicit handed_over(int d) : descriptor(d) {}
    handed_over(handed_over&& other) noexcept : descriptor(std::exchange(other.descriptor, -1)) {}
    ~handed_over() {
        if (descriptor >= 0) ::close(descriptor);
    }
};

}  // namespace

worker::worker(const config::server_config& server, bool access_log, router routes)
    : server_(server),
      access_log_(access_log),
      router_(std::move(routes)),
      acceptor_(io_),
      drain_deadline_(io_) {}

boost::system::error_code worker::listen(const tcp::endpoint& at, tcp::endpoint& bound) {
    boost::system::error_code ec;
    acceptor_.open(at.protocol(), ec);
    // SO_REUSEADDR on Linux only lets a restart bind past connections in TIME_WAIT.
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(at, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (!ec) bound = acceptor_.local_endpoint(ec);
    return ec;
}

boost::system::error_code worker::share_listener(const worker& first) {
    boost::system::error_code ec;
    int copy =
        ::fcntl(const_cast<tcp::acceptor&>(first.acceptor_).native_handle(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return {errno, boost::system::system_category()};
    acceptor_.assign(first.acceptor_.local_endpoint(ec).protocol(), copy, ec);
    if (ec) ::close(copy);
    return ec;
}

void worker::start() {
    net::co_spawn(io_, run_listener(),
                  [](std::exception_ptr e) { observability::log_stray(e, "listener"); });
}

net::awaitable<void> worker::run_listener() {
    net::steady_timer backoff(io_);
    while (acceptor_.is_open()) {
        auto [ec, socket] = co_await acceptor_.async_accept(net::as_tuple(net::use_awaitable));
        if (ec == net::error::operation_aborted || !acceptor_.is_open()) break;
        if (ec) {
            // Out of file descriptors and the like: back off instead of spinning.
            observability::log_warn("accept failed: " + ec.message());
            backoff.expires_after(std::chrono::milliseconds(50));
            co_await backoff.async_wait(net::as_tuple(net::use_awaitable));
            continue;
        }
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        auto& serving = least_loaded();
        if (&serving == this)
            net::co_spawn(io_, run_session(std::move(socket), *this),
                          [](std::exception_ptr e) { observability::log_stray(e, "session"); });
        else
            hand_over(serving, socket);
    }
}

void worker::hand_over(worker& serving, tcp::socket& socket) {
    boost::system::error_code ignored;
    auto protocol = socket.local_endpoint(ignored).protocol();
    handed_over handed(socket.release(ignored));
    if (handed.descriptor < 0) {
        serving.load_.fetch_sub(1, std::memory_order_relaxed);
        return;
    }
    net::post(serving.io_, [&serving, handed = std::move(handed), protocol]() mutable {
        serving.adopt(std::exchange(handed.descriptor, -1), protocol);
    });
}

worker& worker::least_loaded() {
    worker* best = this;
    auto best_load = load();
    for (auto* peer : peers_) {
        auto peer_load = peer->load();
        if (peer_load < best_load) {
            best = peer;
            best_load = peer_load;
        }
    }
    best->load_.fetch_add(1, std::memory_order_relaxed);
    return *best;
}

void worker::adopt(int descriptor, tcp protocol) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    socket.assign(protocol, descriptor, ec);
    if (ec) {
        ::close(descriptor);
        load_.fetch_sub(1, std::memory_order_relaxed);
        observability::log_warn("could not take over a connection: " + ec.message());
        return;
    }
    net::co_spawn(io_, run_session(std::move(socket), *this),
                  [](std::exception_ptr e) { observability::log_stray(e, "session"); });
}

void worker::drain() {
    if (draining_) return;
    draining_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto& s : sessions_)
        if (!s.busy) s.stream->cancel(ignored);
    for (auto& hook : drain_hooks_) hook();
    if (sessions_.empty()) return;
    drain_deadline_.expires_after(server_.drain_time);
    drain_deadline_.async_wait([this](boost::system::error_code ec) {
        if (ec) return;  // every session finished in time
        // Requests still waiting for their answer to start get a 503 that says why, rather
        // than a closed socket; then what is left is closed.
        for (auto& hook : drain_over_hooks_) hook();
        drain_deadline_.expires_after(last_words);
        drain_deadline_.async_wait([this](boost::system::error_code ec) {
            if (ec) return;  // the rest finished
            boost::system::error_code ignored;
            observability::log_warn("drain time over: closing " + std::to_string(sessions_.size()) +
                                    " connection(s)");
            for (auto& s : sessions_) s.stream->close(ignored);
        });
    });
}

std::list<session_entry>::iterator worker::add_session(net::ip::tcp::socket& stream) {
    sessions_.push_front(session_entry{&stream});
    open_connections_.add(1);
    return sessions_.begin();
}

void worker::remove_session(std::list<session_entry>::iterator it) {
    sessions_.erase(it);
    open_connections_.add(-1);
    load_.fetch_sub(1, std::memory_order_relaxed);
    if (draining_ && sessions_.empty()) drain_deadline_.cancel();
}

}  // namespace gateway::http
