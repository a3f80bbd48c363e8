#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// AWS Signature Version 4 (the algorithm of AWS's "Create a signed AWS API request" page) for the
// services that are not S3, such as Bedrock: a request's canonical form, the string to sign, the
// signing key derived from the secret by HMAC-SHA256 for a date, region and service, and the
// fields that carry the signature. Pure functions, no I/O; safe on any thread.
namespace gateway::upstream::aws {

// What a request is signed with: long-term keys, or temporary ones with their session token.
struct credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  // empty: long-term keys
    // When temporary credentials stop working; nullopt: they do not expire.
    std::optional<std::chrono::system_clock::time_point> expiration;
};

// A request to sign, as it goes on the wire. Views: what they show outlives the sign() call.
struct request {
    std::string_view method;
    // The path as sent: each segment already percent-encoded once (uri_encode), e.g.
    // "/model/anthropic.claude-v2%3A1/converse". Signing encodes it again (see canonical_uri).
    std::string_view path;
    std::string_view query;  // without the '?'; "" for none
    // The fields to sign, names in any case, in the order sent (a repeated name keeps its
    // order): at least host; content-type and any x-amz-* the request carries. x-amz-date and
    // x-amz-security-token are sign()'s to add.
    std::vector<std::pair<std::string_view, std::string_view>> headers;
    std::string_view payload_sha256;  // hex, as payload_hash() gives (kept by the caller)
};

// The signature and the fields that carry it.
struct signed_request {
    std::string canonical_request;  // kept for tests and for telling a signature mismatch apart
    std::string string_to_sign;
    std::string signature;      // 64 hex digits
    std::string authorization;  // "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…"
    std::string amz_date;       // "20150830T123600Z"
    std::string security_token;  // the session token, "" for none

    // The fields to add to the request, each "Name: value\r\n": Authorization, X-Amz-Date and,
    // with a session token, X-Amz-Security-Token.
    std::string fields() const;
};

// Signs `r` for `service` ("bedrock") in `region` at `when` with `keys`.
signed_request sign(const request& r, const credentials& keys, std::string_view service,
                    std::string_view region, std::chrono::system_clock::time_point when);

// The SHA-256 of a body as 64 lowercase hex digits (the last line of the canonical request).
std::string payload_hash(std::string_view body);

// Percent-encodes every byte but the unreserved characters (A-Z a-z 0-9 - . _ ~), with
// upper-case hex: how a path segment goes on the wire, e.g. a Bedrock model id (`:` -> %3A) or
// an ARN (`:` -> %3A, `/` -> %2F), and how a query name or value is signed.
std::string uri_encode(std::string_view text);

// The canonical URI of a wire path for a service other than S3: the path normalized (empty
// segments, `.` and `..` removed, a trailing slash kept) and percent-encoded AGAIN, `/` aside,
// so that the `%3A` of a model id is signed as `%253A`.
std::string canonical_uri(std::string_view wire_path);

// The canonical query of a wire query: each name and value decoded and encoded by uri_encode,
// sorted by name then value, joined by '&' (a name without '=' gets an empty value).
std::string canonical_query(std::string_view wire_query);

}  // namespace gateway::upstream::aws
