#include "gateway/upstream/authorize.hpp"

#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/aws_signing.hpp"
#include "gateway/upstream/pool.hpp"

namespace gateway::upstream {

namespace {

// How authorize() writes a token, and how bearer_token_in() finds it.
constexpr std::string_view bearer_field = "Authorization: Bearer ";

}  // namespace

bool authorized_by_gateway(const config::upstream_config& up) {
    return up.provider == config::provider_kind::bedrock || up.host == config::hosting::vertex ||
           (up.host == config::hosting::azure && up.azure.configured());
}

boost::asio::awaitable<gateway_authorization> authorize(pool& pool, std::string_view target,
                                                        std::string_view body) {
    if (auto* credentials = pool.aws_credentials()) {
        auto signed_fields = co_await aws::authorize(pool.upstream(), *credentials, target, body);
        co_return gateway_authorization{std::move(signed_fields.fields),
                                        std::move(signed_fields.error)};
    }
    if (auto* tokens = pool.tokens()) {
        auto token = co_await tokens->current();
        if (!token)
            co_return gateway_authorization{{},
                                            token.error.empty()
                                                ? "upstream `" + pool.upstream().name +
                                                      "`: no access token from " + tokens->origin()
                                                : std::move(token.error)};
        co_return gateway_authorization{std::string(bearer_field) + token.token + "\r\n", {}};
    }
    co_return gateway_authorization{
        {}, "upstream `" + pool.upstream().name + "` holds no credentials of the gateway's"};
}

std::string_view bearer_token_in(std::string_view head) {
    // A field of its own, below the request line (the client's Authorization never reaches an
    // upstream the gateway authorises).
    auto at = head.find("\r\n" + std::string(bearer_field));
    if (at == std::string_view::npos) return {};
    auto token = head.substr(at + 2 + bearer_field.size());
    return token.substr(0, token.find("\r\n"));
}

}  // namespace gateway::upstream
