#include "gateway/io/deadline.hpp"

namespace gateway::io {

struct deadline::state : std::enable_shared_from_this<state> {
    state(boost::asio::any_io_executor executor, boost::asio::ip::tcp::socket& s)
        : timer(std::move(executor)), socket(&s) {}

    boost::asio::steady_timer timer;
    boost::asio::ip::tcp::socket* socket;  // null once the owner is gone
    clock::time_point due = clock::time_point::max();
    bool waiting = false;
    bool expired = false;

    void wait() {
        waiting = true;
        timer.expires_at(due);
        timer.async_wait([self = shared_from_this()](boost::system::error_code) {
            self->waiting = false;
            if (!self->socket || self->due == clock::time_point::max()) return;
            if (clock::now() >= self->due) {
                self->expired = true;
                boost::system::error_code ignored;
                self->socket->close(ignored);  // the pending operation fails now
                return;
            }
            self->wait();  // the deadline moved later meanwhile
        });
    }
};

deadline::deadline(boost::asio::any_io_executor executor, boost::asio::ip::tcp::socket& socket)
    : state_(std::make_shared<state>(std::move(executor), socket)) {}

deadline::~deadline() {
    state_->socket = nullptr;
    state_->timer.cancel();
}

void deadline::arm(clock::duration within) {
    auto& s = *state_;
    s.expired = false;
    s.due = clock::now() + within;
    if (!s.waiting)
        s.wait();
    else if (s.due < s.timer.expiry())
        s.timer.expires_at(s.due);  // cancels; the handler re-waits
}

void deadline::disarm() {
    state_->due = clock::time_point::max();
}

bool deadline::expired() const {
    return state_->expired;
}

}  // namespace gateway::io
