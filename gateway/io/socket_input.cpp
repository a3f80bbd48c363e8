#include "gateway/io/socket_input.hpp"

namespace gateway::io {

namespace {

using tcp = boost::asio::ip::tcp;

#if defined(CONTEXTGATE_ASIO_PATCH)
// The socket's implementation is a protected member of its base: reached through a member
// pointer formed in a derived class, the one way the language allows.
struct socket_access : tcp::socket {
    static bool may_have_input(tcp::socket& socket) {
        auto& impl = (socket.*(&socket_access::impl_)).get_implementation();
        return !impl.reactor_data_ || impl.reactor_data_->may_have_input();
    }
};
#endif

}  // namespace

bool may_have_input(tcp::socket& socket) {
#if defined(CONTEXTGATE_ASIO_PATCH)
    return socket_access::may_have_input(socket);
#else
    (void)socket;
    return true;
#endif
}

}  // namespace gateway::io
