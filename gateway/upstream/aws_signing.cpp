#include "gateway/upstream/aws_signing.hpp"

#include "gateway/upstream/connection.hpp"

#include <chrono>

namespace gateway::upstream::aws {

boost::asio::awaitable<authorization> authorize(const config::upstream_config& up,
                                                credentials_provider& credentials,
                                                std::string_view target, std::string_view body) {
    if (!credentials.bearer_token().empty())
        co_return authorization{"Authorization: Bearer " + credentials.bearer_token() + "\r\n", {}};
    auto keys = co_await credentials.current();
    // The error names the upstream and where the credentials were to come from.
    if (!keys) co_return authorization{{}, keys.error};
    // What json_post_head sends, as it sends it.
    std::string path = up.endpoint.base_path + std::string(target);
    std::string host = host_header(up.endpoint);
    std::string hash = payload_hash(body);
    request r;
    r.method = "POST";
    r.path = path;
    r.headers = {{"host", host}, {"content-type", "application/json"}};
    r.payload_sha256 = hash;
    auto signed_request =
        sign(r, *keys.keys, "bedrock", up.region, std::chrono::system_clock::now());
    co_return authorization{signed_request.fields(), {}};
}

}  // namespace gateway::upstream::aws
