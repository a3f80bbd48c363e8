#pragma once

#include "gateway/providers/adapter.hpp"
#include "gateway/providers/ingress.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gateway::providers::openai {

// OpenAI Chat Completions, as an upstream dialect: any OpenAI-compatible server.
const providers::adapter& adapter();

using providers::parse_failure;

// A client's Chat Completions request in the conversation model, for an upstream of another
// dialect. Fields that would change the meaning and have no translation (`n` > 1, `logprobs`,
// `response_format`, audio, legacy `functions`, …) are refused, never dropped; fields that only
// tune or annotate (`user`, `seed`, `store`, `metadata`, penalties) are left out. A tool message
// takes its call's name from the assistant message before it, so the translation stays
// stateless.
bool parse_chat_request(std::string_view body, request& out, parse_failure& failure);

// The reply as a `chat.completion` body.
std::string chat_completion(const reply& r, std::string_view id, std::string_view model,
                            std::int64_t created);

// Streamed replies as `chat.completion.chunk` SSE frames, delta by delta, ending in
// `data: [DONE]`. The first frame carries the role; a call's id, name and provider_meta go in
// its first fragment, as OpenAI sends them; a call that streamed no arguments (Anthropic's
// zero-argument calls) gets "{}" before the end.
class chunk_writer {
public:
    chunk_writer(std::string id, std::string model, std::int64_t created, bool include_usage);
    // The frames for `d` ("data: …\n\n" each), appended to `out`.
    void frames(const stream_delta& d, std::string& out);

private:
    std::string chunk(const json::object& delta, const json::value& finish_reason);

    std::string id_;
    std::string model_;
    std::int64_t created_;
    bool include_usage_;
    bool role_sent_ = false;
    std::vector<bool> has_arguments_;  // per call: some argument text was written
};

// OpenAI's error envelope for what a provider answered.
std::string error_body(const provider_error& e);

// A tool call's provider_meta as OpenAI-shaped `extra_content` (Google's convention:
// {"google": {"thought_signature": …}}), and back.
json::object extra_content(const json::object& provider_meta);
json::object provider_meta_from(const json::value* extra_content);
// A tool call as OpenAI writes it in a message's `tool_calls` (arguments as a JSON string).
json::object call_json(const tool_call& c);

// Provider state that must come back on the next turn, carried inside the call id every client
// echoes (docs/providers.md): a Gemini thought signature survives a client that rebuilds the
// assistant message from its own types and drops `extra_content`. Written into the ids of the
// translated answers the gateway gives clients:
//   cgs1-<n>-<the signature, base64url, n characters><8 hex digits: check>-<the call's own id>
// Only letters, digits, `-` and `_`. A signature longer than max_carried_signature is not carried
// (extra_content still is).
constexpr std::size_t max_carried_signature = 4096;
std::string id_with_state(const std::string& id, const json::object& provider_meta);
// The call's own id from an id a client sent back; the state it carried, when its check holds,
// into `carried` (an id the gateway did not write comes back as it is).
std::string id_without_state(std::string_view id, json::object& carried);
// Usage as OpenAI reports it: prompt, completion and total tokens.
json::object usage_json(const usage& u);

}  // namespace gateway::providers::openai
