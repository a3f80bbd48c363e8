#pragma once

// Fake token services for the clouds' access tokens, on 127.0.0.1 at ports of their own (each a
// fake_aws_service with a handler of its own): Google's OAuth 2.0 token endpoint, which verifies a
// service account's JWT assertion as Google does (RS256 over the account's public key, iss, aud,
// scope, iat, exp) and takes an authorized_user's refresh token; Google's metadata server; and
// Microsoft Entra ID's token endpoint for the client credentials grant. Each issues tokens that
// live `lifetime` and says of a token whether it is good now (check()), so that the fake Vertex AI
// and Azure OpenAI upstreams refuse an expired or unknown one as the real services do. Errors are
// the real services' shapes. Thread-safe.

#include "tests/support/fake_aws.hpp"

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace gateway::testing {

// A service account made for a test: an RSA key generated at construction (2048 bits, with
// OpenSSL), never one from a file.
struct test_service_account {
    std::string client_email = "gateway-test@test-project.iam.gserviceaccount.com";
    std::string private_key_id = "test-key-1";
    std::string private_key_pem;  // PKCS#8, as Google's key files hold it
    std::string public_key_pem;

    test_service_account();
    // Its key file as Google writes one, with `token_uri` where its tokens come from.
    std::string key_file(const std::string& token_uri) const;
};

// The tokens a fake issued and until when each is good.
class token_ledger {
public:
    explicit token_ledger(std::string prefix) : prefix_(std::move(prefix)) {}
    // A new token that lives `lifetime` from now.
    std::string issue(std::chrono::seconds lifetime);
    // "" when `token` is one issued here that has not expired at `now`; else why not.
    std::string check(std::string_view token, std::chrono::system_clock::time_point now =
                                                  std::chrono::system_clock::now()) const;
    std::size_t issued() const;
    // Refuses `token` from now on, as a revoked one is ("revoked token").
    void revoke(std::string_view token);

private:
    std::string prefix_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::chrono::system_clock::time_point> expiries_;
    std::unordered_set<std::string> revoked_;
};

class fake_google_oauth {
public:
    // Takes assertions of `account` (and, when set, the refresh token of an authorized user
    // with `client_id`, `client_secret`, `refresh_token`).
    explicit fake_google_oauth(const test_service_account& account,
                               std::chrono::seconds lifetime = std::chrono::seconds(3600));
    std::string token_uri() const;  // its token endpoint: url() + "/token"
    void set_lifetime(std::chrono::seconds lifetime);
    void accept_user(std::string client_id, std::string client_secret, std::string refresh_token);
    std::string check(std::string_view token) const { return tokens_.check(token); }
    bool valid(std::string_view token, std::chrono::system_clock::time_point now) const {
        return tokens_.check(token, now).empty();
    }
    std::size_t issued() const { return tokens_.issued(); }
    void revoke(std::string_view token) { tokens_.revoke(token); }
    // Every later request is never answered (a hanging token endpoint).
    void stall();
    fake_aws_service& service() { return service_; }

private:
    aws_reply answer(const aws_request& r);

    std::string public_key_pem_;
    std::string client_email_;
    std::string key_id_;
    mutable std::mutex mutex_;
    std::chrono::seconds lifetime_;
    bool stalled_ = false;
    std::string user_client_id_, user_client_secret_, user_refresh_token_;
    token_ledger tokens_{"ya29.fake-"};
    fake_aws_service service_;  // last: it answers from what is above
};

class fake_metadata_server {
public:
    explicit fake_metadata_server(std::chrono::seconds lifetime = std::chrono::seconds(3600));
    std::string host() const;  // "127.0.0.1:<port>", as GCE_METADATA_HOST gives it
    std::string check(std::string_view token) const { return tokens_.check(token); }
    std::size_t issued() const { return tokens_.issued(); }
    fake_aws_service& service() { return service_; }

private:
    std::chrono::seconds lifetime_;
    token_ledger tokens_{"ya29.metadata-"};
    fake_aws_service service_;
};

class fake_entra {
public:
    fake_entra(std::string tenant_id, std::string client_id, std::string client_secret,
               std::chrono::seconds lifetime = std::chrono::seconds(3600));
    std::string authority() const { return service_.url(); }  // authority_host
    void set_lifetime(std::chrono::seconds lifetime);
    std::string check(std::string_view token) const { return tokens_.check(token); }
    bool valid(std::string_view token, std::chrono::system_clock::time_point now) const {
        return tokens_.check(token, now).empty();
    }
    std::size_t issued() const { return tokens_.issued(); }
    fake_aws_service& service() { return service_; }

private:
    aws_reply answer(const aws_request& r);

    std::string tenant_id_, client_id_, client_secret_;
    mutable std::mutex mutex_;
    std::chrono::seconds lifetime_;
    token_ledger tokens_{"eyJ0eXAiOiJKV1Qi.fake-entra-"};
    fake_aws_service service_;
};

}  // namespace gateway::testing
