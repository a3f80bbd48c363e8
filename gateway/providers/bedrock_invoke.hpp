#pragma once

#include "gateway/providers/adapter.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gateway::providers::bedrock {

// Claude on Bedrock through InvokeModel (`<base>/model/{id}/invoke`, streamed with
// `/invoke-with-response-stream`) rather than Converse: its body is Anthropic's Messages body with
// `anthropic_version: bedrock-2023-05-31` and without `model` and `stream` (Bedrock refuses both
// as extraneous keys), and its answer is Anthropic's Messages answer, streamed as `chunk` messages
// of AWS's event stream whose `bytes` are the base64 of one Anthropic stream event. What Converse
// cannot say survives: thinking blocks with their signatures, `cache_control`.

// The version InvokeModel's Messages body names.
constexpr std::string_view anthropic_version = "bedrock-2023-05-31";

// Whether Bedrock serves `model_id` through InvokeModel with the Messages body: Anthropic's
// models (`anthropic.claude-…`), their inference profiles (`us.anthropic.…`, `eu.`, `apac.`,
// `global.` and any other geography's prefix) and ARNs whose last segment names one
// (`arn:aws:bedrock:…:inference-profile/us.anthropic.…`).
bool invokes(std::string_view model_id);

// `/model/{id}/invoke` or `/model/{id}/invoke-with-response-stream`, the id encoded once.
std::string invoke_target(std::string_view model_id, bool stream);

// A Messages request body (a /v1/messages client's) as InvokeModel takes it: the same members in
// the same order, `model` and `stream` taken out, `anthropic_version` first. `stream` says
// whether the client asked for a stream. Empty with `error` when the body is no JSON object.
std::string invoke_body(std::string_view messages_body, bool& stream, std::string& error);

// The Anthropic stream event a `chunk` message's payload ({"bytes": "<base64>"}) carries, as
// JSON text; nullopt when the payload is not one.
std::optional<std::string> chunk_event(std::string_view payload);

// Rewrites InvokeModelWithResponseStream's event stream, in the pieces it arrives in, as the
// Server-Sent Events Anthropic's Messages API streams: each chunk's event as `event: {type}` and
// its data. An exception message (throttlingException, modelStreamErrorException…), AWS's error
// message, a broken frame or a stream cut inside a message ends the stream with Anthropic's
// `error` event, in the type the client would get for the same refusal as a whole answer
// (read_error). Not thread-safe; one per stream.
class messages_events {
public:
    explicit messages_events(std::size_t max_message_bytes);
    // Appends to `out` the events `bytes` completes. False once the stream ended in an error:
    // `out` then ends with its `error` event and nothing more is written.
    bool feed(std::string_view bytes, std::string& out);
    // The body ended: false, with the `error` event appended, when it ended inside a message.
    bool finish(std::string& out);

private:
    void fail(unsigned status, std::string_view type, std::string_view payload, std::string& out);

    aws_eventstream::decoder messages_;
    std::vector<aws_eventstream::message> framed_;
    bool failed_ = false;
};

// The InvokeModel dialect for the clients the gateway translates (Chat Completions, Responses,
// generateContent) to Claude on Bedrock: Anthropic's encoder and decoders, Bedrock's target, body
// rules, framing and errors. adapter_for(upstream, model) for a model that invokes().
const providers::adapter& invoke_adapter();

}  // namespace gateway::providers::bedrock
