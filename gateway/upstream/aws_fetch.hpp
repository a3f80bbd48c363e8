#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/aws_credentials.hpp"
#include "gateway/upstream/exchange.hpp"

#include <boost/asio/awaitable.hpp>

#include <string_view>

// Temporary AWS credentials fetched over HTTP with the gateway's own upstream client: from STS
// (AssumeRoleWithWebIdentity, an unsigned POST of the web identity token) and from the EC2
// instance metadata service (IMDSv2: a session token, the instance's role, its credentials).
// Each call opens a new connection and closes it; every step is bounded by `timeout`.
namespace gateway::upstream::aws {

// `hooks`: in_use and abandoned as start_exchange takes them (the provider closes the connection
// in use to stop); the timeouts are `timeout`. The error names the service, its address and
// what failed.
boost::asio::awaitable<config::parsed<credentials>> assume_role_with_web_identity(
    const source& from, config::duration timeout, const exchange_hooks& hooks);
boost::asio::awaitable<config::parsed<credentials>> instance_metadata_credentials(
    const source& from, config::duration timeout, const exchange_hooks& hooks);

// STS's answer to AssumeRoleWithWebIdentity: its Credentials, or its Error's code and message.
config::parsed<credentials> read_sts_answer(unsigned status, std::string_view body);
// The instance metadata service's JSON for a role: Code, AccessKeyId, SecretAccessKey, Token,
// Expiration.
config::parsed<credentials> read_metadata_credentials(std::string_view body);

}  // namespace gateway::upstream::aws
