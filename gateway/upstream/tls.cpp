#include "gateway/upstream/tls.hpp"

namespace gateway::upstream {

namespace ssl = boost::asio::ssl;

config::parsed<std::shared_ptr<ssl::context>> make_client_context(
    const config::upstream_config& upstream) {
    using result = config::parsed<std::shared_ptr<ssl::context>>;
    auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                             ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                             ssl::context::no_tlsv1_1,
                         ec);
    if (upstream.tls_insecure) {
        context->set_verify_mode(ssl::verify_none, ec);
        return {context, {}};
    }
    if (!upstream.ca_file.empty()) {
        context->load_verify_file(upstream.ca_file, ec);
        if (ec)
            return result::fail("upstream `" + upstream.name + "`: cannot load ca_file `" +
                                upstream.ca_file + "`: " + ec.message());
    } else {
        context->set_default_verify_paths(ec);
        if (ec)
            return result::fail("upstream `" + upstream.name +
                                "`: cannot load the system CA store: " + ec.message());
    }
    context->set_verify_mode(ssl::verify_peer, ec);
    return {context, {}};
}

}  // namespace gateway::upstream
