#pragma once

// Strict validators of the two event grammars the gateway writes when it translates (written from
// the providers' documentation, independently of gateway/providers):
//
// Anthropic Messages: one message_start, first; content blocks opened with consecutive indices
// from 0, one open at a time, each filled only with its own kind of delta and stopped once; one
// message_delta after every block stopped, whose stop_reason is tool_use when a tool_use block
// was sent; message_stop last. ping may come between any two events after message_start; an
// `error` event ends the stream.
//
// OpenAI Responses: sequence_number 0, 1, 2, …; response.created then response.in_progress,
// once each; output items added with consecutive output_index from 0, one open at a time, each
// with a unique id that every event of it names; a message's text in one content part
// (content_part.added → output_text.delta… → output_text.done whose text is the deltas joined →
// content_part.done); a call's arguments as deltas whose join equals function_call_arguments.done
// and parses as a JSON object; output_item.done for every item; then exactly one of
// response.completed / response.incomplete (whose output lists the items in order) or
// response.failed, last.

#include <string>
#include <string_view>
#include <vector>

namespace gateway::testing {

// An SSE transcript's events: (event name, data).
std::vector<std::pair<std::string, std::string>> sse_events(std::string_view transcript);

// "" when `transcript` keeps the grammar, else the first rule it breaks and where.
std::string check_messages_stream(std::string_view transcript);
std::string check_responses_stream(std::string_view transcript);
// Gemini's streamGenerateContent: with alt=sse one GenerateContentResponse per `data:` event,
// without it one JSON array of them. Each has one candidate whose content (role `model`) has
// parts; a part is text (a thought when `thought` is true) or a functionCall whose `name` is set
// and whose `args` is an object, whole in that one part; `finishReason` and `usageMetadata` come
// in the last response only, nothing after it; an `{"error": {code, message, status}}` event
// ends the stream instead.
std::string check_gemini_stream(std::string_view transcript, bool sse = true);

}  // namespace gateway::testing
