#include "gateway/upstream/entra_credentials.hpp"

#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/sigv4.hpp"
#include "gateway/upstream/token_sources.hpp"

namespace gateway::upstream::entra {

namespace net = boost::asio;

std::string authority_of(const std::string& configured, const std::string& from_environment) {
    std::string authority = !configured.empty()         ? configured
                            : !from_environment.empty() ? from_environment
                                                        : std::string(default_authority);
    if (authority.find("://") == std::string::npos) authority = "https://" + authority;
    while (authority.ends_with('/')) authority.pop_back();
    return authority;
}

net::awaitable<config::parsed<access_token>> client_credentials_token(
    const std::string& authority, const config::azure_entra& application, config::duration timeout,
    const exchange_hooks& hooks) {
    using fetched = config::parsed<access_token>;
    auto url = authority + "/" + aws::uri_encode(application.tenant_id) + "/oauth2/v2.0/token";
    auto endpoint = credential_service("entra-id", url, timeout);
    if (!endpoint) co_return fetched::fail("Entra ID token endpoint " + endpoint.error);
    auto form =
        "grant_type=client_credentials&client_id=" + aws::uri_encode(application.client_id) +
        "&client_secret=" + aws::uri_encode(application.client_secret) +
        "&scope=" + aws::uri_encode(cognitive_services_scope);
    auto head = credential_request_head(
        "POST", *endpoint.value, "",
        "Content-Type: application/x-www-form-urlencoded\r\nAccept: application/json\r\n",
        form.size());
    auto answered = co_await call_credential_service(*endpoint.value, head, form, hooks);
    std::string where = "Entra ID at " + url;
    if (!answered) co_return fetched::fail(where + " did not answer: " + answered.error);
    co_return read_token_answer(where, answered.value->status, answered.value->body,
                                std::chrono::system_clock::now());
}

}  // namespace gateway::upstream::entra
