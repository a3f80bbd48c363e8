#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>
#include <string_view>

// An OAuth 2 access token that authorises an upstream's requests (`Authorization: Bearer`):
// Google's for Vertex AI (a service account's JWT assertion, or the metadata server), Microsoft
// Entra ID's for Azure OpenAI (client credentials). Bedrock's SigV4 credentials are
// aws::credentials_provider's.
namespace gateway::upstream {

// A token in hand, or why there is none (the client is answered 502 with `error`).
struct access_token {
    std::string token;
    std::chrono::system_clock::time_point expires_at{};
    std::string error;
    explicit operator bool() const { return error.empty() && !token.empty(); }
};

// Hands out one upstream's token to every worker: fetched at the first request and again before
// it expires, one fetch at a time (the token in hand serves meanwhile; only callers without one
// await the fetch), a failure an error value that says why, every wait bounded. Thread-safe; one
// per upstream per generation, held by its pool as aws::credentials_provider is.
class token_source {
public:
    virtual ~token_source() = default;
    // The token to send now. Resumes on the caller's executor. After stop(): an error.
    virtual boost::asio::awaitable<access_token> current() = 0;
    // Told that the upstream answered 401 to a request that carried `refused`: drops it if it is
    // still the token in hand (revoked, or the service forgot it before its expiry), so that the
    // next caller awaits a new one. A newer token stays.
    virtual void invalidate(std::string_view refused) = 0;
    // Where the token comes from, for logs and errors ("service account ci@p.iam… (sa.json)",
    // "the metadata server"). Never a secret.
    virtual const std::string& origin() const = 0;
    // Cancels a fetch under way (its waiters get an error) and joins any thread. Safe twice.
    virtual void stop() = 0;
};

}  // namespace gateway::upstream
