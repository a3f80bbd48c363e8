#pragma once

#include "gateway/providers/adapter.hpp"

namespace gateway::providers::bedrock {

// Amazon Bedrock's Converse API, one dialect for every Bedrock model
// (`<base>/model/{model id}/converse`, streamed with `/converse-stream` in AWS's binary event
// stream; the model id is percent-encoded once in the target, so an id's `:` travels as `%3A` and
// an ARN's `/` as `%2F`). The encoder keeps the API's rules: the system prompt is a top-level
// `system` block; roles alternate (same-role turns are merged); every toolUse is answered by its
// toolResult at the start of the very next user message; `toolConfig` goes with every request
// whose history holds tool blocks (declared from the calls when the client sent no tools); no text
// block is empty (an empty tool result is said in words, `empty_tool_result`); images travel as
// bytes (a data: URL of PNG, JPEG, GIF or WebP; a link is refused). Converse has no tool choice
// `none`: its tools are left out, unless the history holds tool blocks and they must be declared.
// adapter_for(provider::bedrock).
const providers::adapter& converse_adapter();

// What the encoder sends for a tool result with no text: Bedrock refuses a blank text block,
// inside a toolResult too.
constexpr std::string_view empty_tool_result = "(no output)";

// What a Bedrock error says, as the client should see it. `error_type` is the x-amzn-ErrorType
// field of the answer ("ValidationException:http://…"), or a streamed exception's :exception-type
// ("throttlingException"); empty, the body's `__type` ("…#ValidationException") names it. The
// status follows the type where the answer's own would mislead a client or a route: throttling and
// exceeded quotas are 429, a model that is not ready (Bedrock's 429) and an unavailable service
// 503, a model's failure 502 and its timeout 504, a credential Bedrock does not accept
// (unrecognized, expired, badly signed) 401; an unknown type keeps `status`. The message is the
// type and the body's `message` ("ThrottlingException: Too many requests…").
provider_error read_error(unsigned status, std::string_view error_type, std::string_view body);

}  // namespace gateway::providers::bedrock
