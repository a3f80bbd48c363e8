#pragma once

// The fake upstream's Anthropic Messages, Gemini generateContent and Bedrock Converse dialects:
// each answers in the provider's real wire format (JSON, and SSE or AWS's binary event stream) and
// refuses, with the provider's own 400, what the real API refuses. Written from the providers'
// documentation, independently of gateway/providers (only the event-stream framing is shared, and
// it is checked against AWS's published vectors), so the gateway's adapters are checked against it
// rather than against themselves.

#include "tests/support/fake_upstream.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::testing::fake_providers {

// What the model says in one turn, whatever the dialect.
struct turn {
    std::string text;
    std::vector<scripted_call> calls;
    std::string usage;  // set: the usage object to report (JSON text), else the canned one
    // Set: the answer starts with a thinking block of this text, signed (thinking_signature).
    std::string thinking;
};

struct answer {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;                 // a JSON answer
    std::vector<std::string> events;  // a streamed answer, one SSE frame or AWS message each
    std::string extra_headers;        // "Name: value\r\n" each
};

// The provider's error answer when `r` breaks one of its rules, else nullopt.
std::optional<answer> anthropic_refusal(const received_request& r, const boost::json::value& body);
std::optional<answer> gemini_refusal(const received_request& r, const boost::json::value& body);
// The body rules of those two, after their credential checks (Vertex AI has its own):
// Messages' (`names_model`: `model` is required; rawPredict names it in the path instead) and
// generateContent's.
std::optional<answer> messages_refusal(const boost::json::value& body, bool names_model);
std::optional<answer> generate_content_refusal(const boost::json::value& body);
// Bedrock Converse (`/model/{id}/converse`, `/converse-stream`): the credential (see
// converse_credential_refusal), then the body as Converse's ValidationException has it: no field
// it does not know, roles alternating from a user turn, no blank text (in a toolResult neither),
// toolUse only from the assistant and each answered by a toolResult in the very next user turn
// (and no toolResult without its toolUse there), images as base64 bytes of a format it takes,
// `toolConfig` whenever the history holds tool blocks, a toolChoice naming a declared tool.
std::optional<answer> converse_refusal(const received_request& r, const boost::json::value& body);
// The credential of a Converse request: a Bedrock API key (`Authorization: Bearer …`) or an AWS
// SigV4 `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` with its
// x-amz-date, verified as Bedrock does: recomputed from the request as received (its wire path,
// the fields it names, the body's hash) with the fake's keys (fake_aws_*), for service `bedrock`.
// An unknown key id or a temporary one without its session token is UnrecognizedClientException,
// fake_aws_expired_token ExpiredTokenException, another signature or a date more than five minutes
// off InvalidSignatureException, each a 403.
std::optional<answer> converse_credential_refusal(const received_request& r);

// The keys the fake Bedrock knows: long-term ones, and temporary ones (any session token but the
// expired one) with the same secret.
inline constexpr std::string_view fake_aws_key_id = "AKIAFAKEBEDROCK00001";
inline constexpr std::string_view fake_aws_temporary_key_id = "ASIAFAKEBEDROCK00001";
inline constexpr std::string_view fake_aws_secret = "fakeBedrockSecretKey/0123456789abcdefghij";
inline constexpr std::string_view fake_aws_expired_token = "expired-session-token";

// `t` in the provider's format. `serial` makes ids and signatures unique per answer.
answer anthropic_answer(const turn& t, std::string_view model, bool stream, int serial);
answer gemini_answer(const turn& t, std::string_view model, bool stream, int serial);
// Converse's answer; streamed, one event-stream message per event (messageStart, the text's
// deltas, each call's contentBlockStart and its input in two deltas, messageStop, metadata), each
// payload padded with Bedrock's `p` field.
answer converse_answer(const turn& t, bool stream, int serial);

// Bedrock's InvokeModel for a Claude model (`/model/anthropic.…/invoke`): Anthropic's Messages
// answer; streamed (`/invoke-with-response-stream`), each of Anthropic's stream events as the
// base64 `bytes` of one `chunk` event-stream message, padded as Bedrock pads them.
answer invoke_answer(const turn& t, std::string_view model, bool stream, int serial);
// InvokeModel's refusals, as Bedrock's ValidationException has them: the credential
// (converse_credential_refusal); a model (`segment`, the path's, encoded once) that is no Claude
// (anthropic.…, or an inference profile such as us.anthropic.…); a body that is no JSON object,
// names a key Claude's InvokeModel body has not ("extraneous key [model] is not permitted":
// `model` and `stream` too) or an anthropic_version other than bedrock-2023-05-31; then the
// Messages rules (messages_refusal), and Anthropic's for thinking: every thinking block sent back
// carries the signature the fake gave it (thinking_signature).
std::optional<answer> invoke_refusal(const received_request& r, const boost::json::value& body,
                                     std::string_view segment);
// Whether an InvokeModel body asks for thinking ({"thinking": {"type": "enabled", …}}).
bool thinking_enabled(const boost::json::value& body);
// The signature the fake gives a thinking block of `text`, and checks when it comes back.
std::string thinking_signature(std::string_view text);

// An error in the provider's format (status 429 adds retry-after: 7).
answer anthropic_error(unsigned status, std::string_view type, std::string_view message);
answer gemini_error(unsigned status, std::string_view message);
// Bedrock's error answer: {"message"} with the type ("ThrottlingException") in x-amzn-ErrorType.
answer converse_error(unsigned status, std::string_view type, std::string_view message);
// One event-stream exception message as ConverseStream sends one mid-stream (`type`:
// "throttlingException", "modelStreamErrorException"…).
std::string converse_stream_exception(std::string_view type, std::string_view message);

// The unscripted answer: text, or, when the request declares tools and holds no tool result
// yet, a call to the first tool (and to the second too, in parallel, when there are two or
// more), with arguments made from the required properties of its schema. Once a result came
// back the answer is text, so a client that runs tools (Claude Code, Gemini CLI) ends its turn
// instead of calling them forever.
turn canned_turn(const boost::json::value& body, bool gemini);

// Whether a request body holds a tool's result in any dialect: an OpenAI `tool` message, an
// Anthropic `tool_result` block, a Gemini `functionResponse` part, a Responses
// `function_call_output` item, a Converse `toolResult` block.
bool holds_tool_result(const boost::json::value& body);

// A JSON answer with its usage object (`usage`, or Gemini's `usageMetadata`) replaced by the
// JSON text `usage` (the x-fake-usage header: cached and reasoning tokens on request); the body
// as it was when either is no JSON object.
std::string with_usage(const std::string& body, std::string_view usage);

}  // namespace gateway::testing::fake_providers
