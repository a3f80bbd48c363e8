#pragma once

#include "gateway/base64url.hpp"

#include "gateway/config/config.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

typedef struct evp_pkey_st EVP_PKEY;

// ID tokens as OpenID Connect signs them: a JWS in compact form, checked against the provider's
// JSON Web Key Set (RS256 with RSA keys of 2048 bits or more, ES256 with P-256 keys; nothing
// else, and never `none` or a shared-secret algorithm), then its claims against what this
// sign-in expects.
namespace gateway::auth {

using gateway::base64url_decode;
using gateway::base64url_encode;

// A provider's JSON document (an ID token's parts, a JWKS, discovery, a token answer), parsed no
// deeper than such documents go; null when it is no JSON.
boost::json::value parse_json(std::string_view text);

// A provider's signing keys, by `kid`: its JWKS's RSA and P-256 keys meant for signatures (no
// `use`, or `use: sig`); other keys are left out. Immutable; thread-safe.
class key_set {
public:
    // The keys of a JWKS document ({"keys": [...]}); the error says what is wrong with it.
    static config::parsed<key_set> parse(std::string_view jwks);

    std::size_t size() const { return keys_.size(); }
    bool has(std::string_view kid) const;

    struct key {
        std::string kid;
        std::string alg;  // "RS256" or "ES256": what its type signs with
        std::shared_ptr<EVP_PKEY> public_key;
    };
    const key* find(std::string_view kid) const;

private:
    std::vector<key> keys_;
};

// What this sign-in expects of its ID token.
struct token_expectations {
    std::string issuer;    // `iss`, exactly
    std::string audience;  // our client_id: in `aud`, and `azp` when it is there
    std::string nonce;     // the sign-in's
    std::int64_t now_s = 0;
    std::int64_t leeway_s = 60;  // clocks disagree a little
};

struct token_check {
    enum class outcome {
        valid,
        unknown_key,  // signed with a `kid` the key set lacks: refetch the JWKS once
        refused,      // malformed, a bad signature, or a claim that does not hold
    };
    outcome result = outcome::refused;
    std::string error;           // why, for the refusal's message and the log
    boost::json::object claims;  // when valid
};

// Verifies `token`'s signature with `keys` and its claims against `expect`.
token_check verify_id_token(std::string_view token, const key_set& keys,
                            const token_expectations& expect);

}  // namespace gateway::auth
