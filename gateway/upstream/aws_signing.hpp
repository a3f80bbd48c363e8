#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/aws_credentials.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

namespace gateway::upstream::aws {

// What authorises one request to a Bedrock upstream, or why nothing can.
struct authorization {
    // Each "Name: value\r\n": Authorization (a Bedrock API key as Bearer, or SigV4's) with, when
    // signed, X-Amz-Date and X-Amz-Security-Token.
    std::string fields;
    // Set: no credentials could be had; says why (the client is answered 502 with it).
    std::string error;
};

// The fields that authorise POST `target` (below the upstream's base path) with `body` to the
// Bedrock upstream `up`, as upstream::json_post_head writes the request: its Bedrock API key, or
// a SigV4 signature for service `bedrock` in up.region of the wire path, the Host and
// Content-Type fields and the body's hash, dated now. Called once the body is final, for every
// attempt: a signature holds for five minutes after its date. Waits at most as long as
// credentials_provider::current(); never throws.
boost::asio::awaitable<authorization> authorize(const config::upstream_config& up,
                                                credentials_provider& credentials,
                                                std::string_view target, std::string_view body);

}  // namespace gateway::upstream::aws
