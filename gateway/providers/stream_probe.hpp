#pragma once

#include "gateway/sse/event_parser.hpp"

// What one event of a streamed answer is, in any of the dialects the gateway relays (OpenAI Chat
// Completions and Responses, Anthropic Messages, Gemini): the attempt loop holds a stream back
// until its first content event (docs/routing.md, the commit point), and tries another target when
// the stream errs or ends before one.
namespace gateway::providers {

enum class stream_event {
    preamble,  // before the answer: a role-only delta, message_start, ping, response.created, …
    content,   // the answer has begun (text, a call, reasoning, a finish): commit to it
    error,     // the provider's error event
    done,      // the end of the stream ([DONE])
};

stream_event probe_event(const sse::event& e);

}  // namespace gateway::providers
