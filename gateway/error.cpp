#include "gateway/error.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace gateway {

namespace {

struct error_info {
    unsigned status;
    const char* type;
    const char* code;
    const char* message;
};

error_info info(errc e) {
    switch (e) {
        case errc::bad_request:
            return {400, "invalid_request_error", "bad_request", "The request is malformed."};
        case errc::header_too_large:
            return {400, "invalid_request_error", "request_header_too_large",
                    "The request line and headers exceed the gateway's header_limit."};
        case errc::body_too_large:
            return {413, "invalid_request_error", "request_too_large",
                    "The request body exceeds the gateway's body_limit."};
        case errc::unsupported_transfer_coding:
            return {501, "invalid_request_error", "unsupported_transfer_coding",
                    "The request's transfer coding is not supported."};
        case errc::message_too_large:
            return {413, "invalid_request_error", "message_too_large",
                    "The message exceeds the gateway's context.max_message_bytes."};
        case errc::too_many_streams:
            return {429, "invalid_request_error", "too_many_streams",
                    "This run already has as many event streams as the gateway allows."};
        case errc::not_found:
            return {404, "invalid_request_error", "not_found", "No such endpoint on this gateway."};
        case errc::unauthorized:
            return {401, "authentication_error", "invalid_api_key", "A valid API key is required."};
        case errc::forbidden:
            return {403, "permission_error", "forbidden", "This request is not allowed."};
        case errc::model_not_allowed:
            return {403, "permission_error", "model_not_allowed",
                    "This API key may not use the model requested."};
        case errc::model_not_priced:
            return {403, "permission_error", "model_not_priced",
                    "This API key has a USD budget, and the gateway has no price for the model "
                    "requested."};
        case errc::guardrail_blocked:
            return {400, "invalid_request_error", "guardrail_blocked",
                    "A guardrail of this gateway blocked the request."};
        case errc::model_not_found:
            return {404, "invalid_request_error", "model_not_found",
                    "The model does not exist on this gateway."};
        case errc::rate_limited:
            return {429, "requests", "rate_limit_exceeded",
                    "Rate limit reached for this API key; retry after the time retry-after gives."};
        case errc::token_rate_limited:
            // OpenAI's own: a tokens-per-minute refusal has the type "tokens".
            return {429, "tokens", "rate_limit_exceeded",
                    "Token rate limit reached for this API key; retry after the time retry-after "
                    "gives."};
        case errc::quota_exceeded:
            return {429, "insufficient_quota", "insufficient_quota",
                    "This API key has used its budget for the period."};
        case errc::method_not_allowed:
            return {405, "invalid_request_error", "method_not_allowed",
                    "This method is not allowed on this endpoint."};
        case errc::conflict:
            return {409, "invalid_request_error", "conflict",
                    "The resource is not in a state that allows this request."};
        case errc::run_in_progress:
            return {409, "invalid_request_error", "run_in_progress",
                    "The chat already has a run in progress."};
        case errc::call_not_pending:
            return {409, "invalid_request_error", "call_not_pending",
                    "The call is not awaiting approval."};
        case errc::run_ended:
            return {409, "invalid_request_error", "run_ended", "The run has already ended."};
        case errc::invalid_parameters:
            return {400, "invalid_request_error", "invalid_parameters",
                    "The parameters do not match the tool's schema."};
        case errc::version_conflict:
            return {409, "invalid_request_error", "version_conflict",
                    "The resource changed since the version the request was based on."};
        case errc::session_not_found:
            return {404, "invalid_request_error", "session_not_found", "No such edit session."};
        case errc::session_resolved:
            return {409, "invalid_request_error", "session_resolved",
                    "The edit session has been accepted or rejected already."};
        case errc::merge_conflict:
            return {409, "invalid_request_error", "merge_conflict",
                    "The suggested changes overlap changes made to the target since; nothing "
                    "was written."};
        case errc::nothing_to_undo:
            return {409, "invalid_request_error", "nothing_to_undo", "There is no write to undo."};
        case errc::websocket_refused:
            return {501, "invalid_request_error", "websocket_not_supported",
                    "WebSocket tunnelling is switched off on this gateway; use HTTP."};
        case errc::unsupported_media_type:
            return {415, "invalid_request_error", "unsupported_media_type",
                    "The request body's Content-Type is not one this endpoint takes."};
        case errc::invalid_config:
            return {400, "invalid_request_error", "invalid_config",
                    "The configuration file does not validate; the running configuration stays."};
        case errc::shutting_down:
            return {503, "server_error", "shutting_down", "The gateway is shutting down."};
        case errc::upstream_unreachable:
            return {502, "upstream_error", "upstream_unreachable",
                    "The upstream could not be reached."};
        case errc::upstream_reset:
            return {502, "upstream_error", "upstream_connection_closed",
                    "The upstream closed the connection before it answered."};
        case errc::upstream_tls:
            return {502, "upstream_error", "upstream_tls_error",
                    "The TLS handshake with the upstream failed."};
        case errc::upstream_bad_response:
            return {502, "upstream_error", "upstream_bad_response",
                    "The upstream sent a malformed HTTP response."};
        case errc::upstream_connect_timeout:
            return {504, "timeout_error", "upstream_connect_timeout",
                    "Connecting to the upstream timed out."};
        case errc::upstream_first_byte_timeout:
            return {504, "timeout_error", "upstream_timeout",
                    "The upstream did not answer in time."};
        case errc::upstream_idle_timeout:
            return {504, "timeout_error", "upstream_idle_timeout",
                    "The upstream stopped sending in the middle of the response."};
        case errc::upstream_credentials:
            return {502, "upstream_error", "upstream_credentials",
                    "The gateway could not get the credentials to sign the upstream request."};
        case errc::replica_unreachable:
            return {503, "server_error", "replica_unreachable",
                    "The gateway replica driving this run did not answer; try again."};
        case errc::internal:
            break;
    }
    return {500, "server_error", "internal_error", "The gateway failed to handle the request."};
}

class category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "gateway"; }
    std::string message(int ev) const override { return info(static_cast<errc>(ev)).message; }
};

}  // namespace

std::string_view error_code_name(errc e) {
    return info(e).code;
}

std::optional<errc> errc_from_code_name(std::string_view name) {
    for (int i = static_cast<int>(errc::bad_request); i <= static_cast<int>(errc::internal); ++i)
        if (info(static_cast<errc>(i)).code == name) return static_cast<errc>(i);
    return std::nullopt;
}

const boost::system::error_category& gateway_category() noexcept {
    static const category instance;
    return instance;
}

std::string error_json(boost::system::error_code ec, std::string_view message) {
    error_info i = ec.category() == gateway_category() ? info(static_cast<errc>(ec.value()))
                                                       : info(errc::internal);
    boost::json::value body = {
        {"error",
         {{"message", message.empty() ? std::string_view(i.message) : message},
          {"type", i.type},
          {"param", nullptr},
          {"code", i.code}}}};
    return boost::json::serialize(body);
}

error_response to_error_response(boost::system::error_code ec, std::string_view message) {
    unsigned status =
        ec.category() == gateway_category() ? info(static_cast<errc>(ec.value())).status : 500;
    return {status, error_json(ec, message)};
}

}  // namespace gateway
