#pragma once

#include <boost/system/error_code.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace gateway {

// The gateway's own failures. Each maps to one HTTP status and one OpenAI error `code`.
enum class errc {
    bad_request = 1,
    header_too_large,
    body_too_large,
    unsupported_transfer_coding,
    message_too_large,
    too_many_streams,
    not_found,
    unauthorized,
    forbidden,
    model_not_allowed,
    model_not_priced,
    model_not_found,
    guardrail_blocked,  // a guardrail's `block` (the message names the guardrail and the rule)
    rate_limited,
    token_rate_limited,
    quota_exceeded,
    method_not_allowed,
    conflict,
    run_in_progress,
    call_not_pending,
    run_ended,
    invalid_parameters,
    version_conflict,
    nothing_to_undo,
    session_not_found,
    session_resolved,
    merge_conflict,
    websocket_refused,
    unsupported_media_type,
    invalid_config,
    shutting_down,
    upstream_unreachable,
    upstream_reset,
    upstream_tls,
    upstream_bad_response,
    upstream_connect_timeout,
    upstream_first_byte_timeout,
    upstream_idle_timeout,
    upstream_credentials,  // a cloud upstream's credentials could not be had (the reason says why)
    replica_unreachable,
    internal,
};

const boost::system::error_category& gateway_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), gateway_category()};
}

// What a client receives for an error: the status and OpenAI's envelope
// {"error":{"message","type","param":null,"code"}}.
struct error_response {
    unsigned status;
    std::string body;
};

// Maps any error code to the response the client sees; `message` overrides the default text.
// Codes that are not gateway::errc (I/O errors) are answered as 500.
error_response to_error_response(boost::system::error_code ec, std::string_view message = {});

// The envelope alone, e.g. for an SSE `event: error` frame.
std::string error_json(boost::system::error_code ec, std::string_view message = {});

// The error's OpenAI `code` ("run_in_progress"), and the first errc with that code: how a
// refusal travels between replicas (names stay stable across versions; numbers need not).
std::string_view error_code_name(errc e);
std::optional<errc> errc_from_code_name(std::string_view name);

// An expected refusal of a request by the gateway: a code and the message for the client.
// Components below the HTTP layer return it; the handler layer turns it into a response.
struct refusal {
    errc code;
    std::string message;
};

}  // namespace gateway

template <>
struct boost::system::is_error_code_enum<gateway::errc> : std::true_type {};
