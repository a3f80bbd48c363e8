#pragma once

// Google Vertex AI as a host of two dialects: Gemini's generateContent under
// publishers/google, and Claude's Messages (rawPredict) under publishers/anthropic, both below a
// project and a location. The dialects' own adapters say the bodies and read the answers; this
// says where they go and what rawPredict changes in a Messages body.

#include "gateway/config/config.hpp"
#include "gateway/providers/adapter.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gateway::providers::vertex {

// The API version a rawPredict body names (Claude on Vertex takes it in the body, not a header).
inline constexpr std::string_view anthropic_version = "vertex-2023-10-16";

// The target of `model`'s `method` on `up` (below its base path): /{version}/projects/{project}/
// locations/{location}/publishers/{google|anthropic}/models/{model}:{method}. `method` may carry
// a query ("streamGenerateContent?alt=sse"); the publisher is the one dialect_for gives;
// `version` is the API's, "v1" unless a client asked Vertex's own paths for "v1beta1".
std::string target(const config::upstream_config& up, std::string_view model,
                   std::string_view method, std::string_view version = "v1");

// Whether `model` can be a segment of Vertex's paths as it is: letters, digits and `-._@`
// (claude-sonnet-4-5@20250929); another name is refused before anything is sent.
bool valid_model(std::string_view model);

// A Messages body as rawPredict takes it: its `model` member (named by the path instead) and any
// `anthropic_version` taken out, `anthropic_version: vertex-2023-10-16` put first; every other
// byte as it came (thinking signatures, cache_control). False, the body unchanged, when it is no
// JSON object.
bool to_raw_predict(std::string& body);

// A native path in, /vertex/{version}/projects/{p}/locations/{l}/publishers/{publisher}/models/
// {m}:{method}, of Vertex AI's v1 or v1beta1 API (Google's SDKs in Vertex mode ask v1beta1 unless
// told otherwise): its parts as views into the path; nullopt when it has another shape, another
// version, or names a method this gateway does not forward (Claude's rawPredict and
// streamRawPredict, Gemini's generateContent, streamGenerateContent and countTokens).
struct native_path {
    std::string_view version;    // "v1" or "v1beta1"
    std::string_view publisher;  // "anthropic" or "google"
    std::string_view model;
    std::string_view method;
};
std::optional<native_path> read_native_path(std::string_view path);

// Whether a Messages body asks for a stream (a top-level `stream: true`): its method on Vertex,
// "streamRawPredict", else "rawPredict".
std::string_view raw_predict_method(std::string_view messages_body);

// The target `up` is sent for `target`, a dialect's model target below its base path:
// /models/{model}:{method}[?query] (Gemini's, and claude_adapter's) becomes target(up, model,
// method[?query]); any other is returned as it is. Pure.
std::string wire_target(const config::upstream_config& up, std::string_view target);

// Claude on Vertex for the clients the gateway translates: Anthropic's encoder and decoders, the
// target /models/{model}:rawPredict or :streamRawPredict (wire_target puts it below the project
// and location), the body changed by to_raw_predict. adapter_for(upstream, model) for claude-* on
// a Vertex upstream; Gemini on Vertex is Gemini's own adapter.
const adapter& claude_adapter();

}  // namespace gateway::providers::vertex
