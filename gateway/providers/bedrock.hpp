#pragma once

#include "gateway/providers/adapter.hpp"

namespace gateway::providers::bedrock {

// Amazon Bedrock's Converse API, one dialect for every Bedrock model (Claude's go through
// InvokeModel instead: bedrock_invoke.hpp)
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

// A model id as one segment of a target: percent-encoded once (`:` as %3A, `/` as %2F), and a
// segment of dots (which would move the path) encoded too.
std::string model_segment(std::string_view model);

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

// Whether `model_id` names an inference profile: a geography's prefix before a model provider's
// id (us.anthropic.…, global.anthropic.…, eu.amazon.…), or an ARN of one
// (arn:aws:bedrock:…:inference-profile/…).
bool is_inference_profile(std::string_view model_id);

// Bedrock's control-plane ListInferenceProfiles answer (GET /inference-profiles), made of what the
// gateway serves rather than asked of AWS: {"inferenceProfileSummaries": [{inferenceProfileArn,
// inferenceProfileId, inferenceProfileName, description, models: [{modelArn}], status: ACTIVE,
// type: SYSTEM_DEFINED}]}, one page. Listed: each Bedrock upstream's exact `models` that are
// inference profiles, and each route (not a glob) with a target that hears one on a Bedrock
// upstream, under the route's name; only the names `allowed` takes (a virtual key's model globs;
// empty: every name). `type` (the query's `type`): SYSTEM_DEFINED or empty lists them,
// APPLICATION none (the gateway defines no application profiles). The ARNs are in each Bedrock
// upstream's region, with no account (the gateway's is not its clients' business).
std::string inference_profiles(const std::vector<config::upstream_config>& upstreams,
                               const std::vector<config::route_config>& routes,
                               const std::vector<std::string>& allowed, std::string_view type);

}  // namespace gateway::providers::bedrock
