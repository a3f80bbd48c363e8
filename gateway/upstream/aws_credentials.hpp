#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/environment.hpp"
#include "gateway/upstream/sigv4.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

// Where a Bedrock upstream's AWS credentials come from, and the object that hands them out.
// The order is the AWS SDKs' default chain: the upstream's own `aws:` keys; the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); the shared files
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, AWS_CONFIG_FILE or ~/.aws/config, profile
// AWS_PROFILE or `default`); web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or a
// profile's web_identity_token_file and role_arn, exchanged at STS by
// AssumeRoleWithWebIdentity); then the EC2 instance metadata service (IMDSv2). A Bedrock API key
// (`aws: {bearer_token}`, or AWS_BEARER_TOKEN_BEDROCK) replaces signing altogether.
namespace gateway::upstream {
template <class T>
class refresher;
}

namespace gateway::upstream::aws {

using upstream::environment;
using upstream::process_environment;

// What the composition root tells the chain: the upstream's `aws:` block and its timeouts.
struct settings {
    std::string upstream;  // the upstream's name, for errors, logs and metrics
    std::string region;    // the upstream's region: STS's, when AWS_REGION does not say
    // The `aws:` block: both keys set, or neither (then the chain looks further).
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;
    std::string bearer_token;
    // Each step of a call to STS: connecting, then the answer's head, then each read of its body.
    config::duration sts_timeout{10'000};
    // The same for the instance metadata service, which answers within milliseconds where it
    // exists (the SDKs wait one second).
    config::duration metadata_timeout{1'000};
    // Temporary credentials are replaced this long before they expire.
    config::duration refresh_early{300'000};
    // After a failed refresh the failure is the answer for this long, rather than every request
    // asking again (the credentials in hand serve meanwhile while they have not expired).
    config::duration retry_after_failure{5'000};
};

// One place credentials come from, as find_source() found it.
struct source {
    enum class kind {
        keys,               // fixed keys: the `aws:` block, the environment or a shared file
        bearer_token,       // a Bedrock API key: `Authorization: Bearer`, no signing
        web_identity,       // STS AssumeRoleWithWebIdentity with a token file
        instance_metadata,  // the EC2 instance metadata service, IMDSv2
    };
    kind from = kind::keys;
    // Where they were found, for logs and errors: "the environment (AWS_ACCESS_KEY_ID)",
    // "profile `dev` of /home/ops/.aws/credentials". Never a secret.
    std::string origin;
    credentials keys;          // kind::keys
    std::string bearer_token;  // kind::bearer_token
    // kind::web_identity
    std::string token_file;
    std::string role_arn;
    std::string session_name;
    std::string sts_url;  // AWS_ENDPOINT_URL_STS, or https://sts.<region>.amazonaws.com
    // kind::instance_metadata: AWS_EC2_METADATA_SERVICE_ENDPOINT or http://169.254.169.254
    std::string metadata_url;
};

// Walks the chain in its order and returns the first source that is there. Reads the shared
// files (small, blocking: call it where blocking is allowed, at start-up or a reload). Errors
// name what is wrong: a file's line that is not `key = value`, a profile AWS_PROFILE names that
// neither file has, a key without its secret, or no source at all (AWS_EC2_METADATA_DISABLED).
config::parsed<source> find_source(const settings& s, const environment& env);

// Credentials in hand, or why there are none (the client is answered 502 with `error`).
struct current_credentials {
    std::shared_ptr<const credentials> keys;
    std::string error;
    explicit operator bool() const { return keys != nullptr; }
};

// Hands out one source's credentials to every worker. Fixed keys are handed out as they are.
// Temporary ones (web identity, instance metadata) are fetched at the first request and again
// `refresh_early` before they expire, on a thread of the provider's own: one fetch at a time, the
// credentials in hand serving meanwhile (only callers without any await it). A failed fetch is an
// error value that says why (and, within `retry_after_failure`, the answer without asking again);
// nothing throws into a request, and every wait is bounded by the source's timeouts. Thread-safe.
class credentials_provider {
public:
    credentials_provider(source from, settings s);
    ~credentials_provider();
    credentials_provider(const credentials_provider&) = delete;
    credentials_provider& operator=(const credentials_provider&) = delete;

    // The credentials to sign with now. Resumes on the caller's executor. After stop(): an error.
    boost::asio::awaitable<current_credentials> current();

    // The Bedrock API key when the source is one ("" otherwise): no signing then.
    const std::string& bearer_token() const { return source_.bearer_token; }
    const aws::source& from() const { return source_; }

    // Cancels a fetch under way (its waiters get an error) and joins the thread. Safe twice.
    void stop();

private:
    aws::source source_;
    settings settings_;
    // Fixed keys, handed out as they are; temporary ones come from the refresher.
    std::shared_ptr<const credentials> fixed_;
    std::unique_ptr<refresher<credentials>> refresher_;
};

}  // namespace gateway::upstream::aws
