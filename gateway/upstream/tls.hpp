#pragma once

#include "gateway/config/config.hpp"

#include <boost/asio/ssl/context.hpp>

#include <memory>

namespace gateway::upstream {

// A client TLS context for one upstream: TLS 1.2+, peer verification against the system CA store
// or `ca_file`, unless `tls_insecure`. Shared by all workers (OpenSSL contexts are thread-safe once
// configured). The error names the file or the OpenSSL failure.
config::parsed<std::shared_ptr<boost::asio::ssl::context>> make_client_context(
    const config::upstream_config& upstream);

}  // namespace gateway::upstream
