#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

// Microsoft Entra ID access tokens for an Azure OpenAI upstream: the OAuth 2.0 client credentials
// grant of an application (tenant, client id and secret), for Azure AI services' scope.
namespace gateway::upstream::entra {

inline constexpr std::string_view cognitive_services_scope =
    "https://cognitiveservices.azure.com/.default";
inline constexpr std::string_view default_authority = "https://login.microsoftonline.com";

// The authority an application's tokens come from: `configured` (the upstream's authority_host),
// else AZURE_AUTHORITY_HOST (`from_environment`), else login.microsoftonline.com; a bare host
// gets https://, a trailing slash goes.
std::string authority_of(const std::string& configured, const std::string& from_environment);

// One token: POST {authority}/{tenant}/oauth2/v2.0/token with grant_type=client_credentials,
// client_id, client_secret and the scope. Each step bounded by `timeout`; `hooks` as
// start_exchange takes them. The error says who refused what, with Entra ID's own words.
boost::asio::awaitable<config::parsed<access_token>> client_credentials_token(
    const std::string& authority, const config::azure_entra& application, config::duration timeout,
    const exchange_hooks& hooks);

}  // namespace gateway::upstream::entra
