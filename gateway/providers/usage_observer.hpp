#pragma once

#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/sse/event_parser.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::providers {

// Reads the token usage a model answer reports from a copy of the bytes relayed to the client;
// the relayed bytes themselves are never touched. A JSON body is kept (up to `max_body` bytes)
// and read at the end; an event stream is parsed as it goes and only events that carry a usage
// object are decoded. Understands every dialect the gateway forwards: OpenAI Chat Completions
// (`usage.prompt_tokens`/`completion_tokens`, the last chunk with `include_usage`), the Responses
// API (`usage.input_tokens`/`output_tokens`, `response.completed`'s `response.usage`), Anthropic
// (`message.usage` at message_start, cumulative `usage` at message_delta, cache tokens counted as
// input) and Gemini (`usageMetadata`), with the parts each bills apart (providers::usage): cached
// and reasoning tokens in OpenAI's `*_tokens_details`, Anthropic's cache reads and its writes
// (`cache_creation`'s 5m/1h split), Gemini's `cachedContentTokenCount` and `thoughtsTokenCount`.
// In a stream the largest value seen for each counts.
// Not thread-safe; one per response.
class usage_observer {
public:
    // How the answer is framed: one JSON body, a text/event-stream, or AWS's binary event stream
    // (Bedrock's ConverseStream, whose `metadata` event carries the usage, and
    // InvokeModelWithResponseStream, whose `chunk` events carry Anthropic's stream events in
    // base64 `bytes`).
    enum class framing { json, sse, aws_event_stream };
    explicit usage_observer(framing how, std::size_t max_body = 4 << 20);
    explicit usage_observer(bool event_stream, std::size_t max_body = 4 << 20)
        : usage_observer(event_stream ? framing::sse : framing::json, max_body) {}

    void feed(std::string_view bytes);
    // The usage found, `known` false when the answer reported none. `complete`: the answer was
    // relayed whole; a whole JSON body's usage is looked up from its end. A whole JSON body that
    // reported its usage is then charged that usage alone (settled_usage reads no delivered bytes),
    // so its content is not counted: the parse that counts it costs more than the rest of the
    // observer.
    providers::usage finish(bool complete = false);
    // A whole JSON answer that is held elsewhere, read as feed(body) and then finish(true) would
    // read it, without a copy of it being kept.
    providers::usage finish_whole(std::string_view body);
    // Bytes of content the relayed copy carried so far: the strings of answer text, reasoning
    // and call arguments in every dialect (`content`, `text`, `arguments`, `partial_json`,
    // `thinking`, a Responses `delta`…), counted in stream events that add content (no name,
    // or a name ending in `delta`; `.done` and `response.completed` repeat what came before)
    // and in a whole JSON body once finish() has read it (unless it needs no counting, above).
    // What the client received, for the settlement rule (settled_usage).
    std::uint64_t delivered_bytes() const { return delivered_; }

private:
    // A JSON answer's usage, and its content unless it is `complete` and reported its usage.
    void read_body(std::string_view body, bool complete);
    void read_document(std::string_view text);
    // When the key at `at` is one of the whole JSON object `text`'s top-level `usage` or
    // `usageMetadata` members, with an object for its value, reads that object and says true; only
    // the text after `at` is read. False when it is not such a member (or `text` not such an
    // object) as far as that text tells.
    bool read_member_at(std::string_view text, std::size_t at);
    void count_content(std::string_view json_text);
    // One event's JSON: its usage read, its content counted when it adds content (`adds`).
    void read_event(std::string_view data, bool adds);
    void feed_aws(std::string_view bytes);

    framing framing_;
    std::size_t max_body_;
    sse::event_parser parser_;
    std::vector<sse::event> events_;
    aws_eventstream::decoder aws_decoder_{max_body_};
    std::vector<aws_eventstream::message> aws_messages_;
    std::string body_;
    bool overflow_ = false;
    providers::usage used_;
    std::uint64_t delivered_ = 0;
};

// The tokens to charge for a 2xx answer. The upstream's count when it reported one and the
// answer was relayed whole; otherwise an estimate that is never less than what the client
// received: output is at least `delivered_bytes` / 4 (about a token each, rounded up), and input,
// when unreported, is the request's bytes / 4. `estimated` says the estimate decided.
struct settled {
    providers::usage used;
    bool estimated = false;
};
settled settled_usage(const providers::usage& reported, std::uint64_t delivered_bytes,
                      std::size_t request_bytes, bool complete);

// `stream_usage: inject`: a Chat Completions body with `"stream": true` and no
// `stream_options.include_usage` gets `stream_options: {include_usage: true}` (other members of
// stream_options kept), so the final chunk reports usage. True when `body` was changed; a body
// that is not such a JSON object is left as it is.
bool inject_include_usage(std::string& body);

// Whether JSON text mentions a usage object (`"usage": {` or `"usageMetadata": {`): the cheap
// test that keeps most stream events from being parsed.
bool mentions_usage(std::string_view text);

}  // namespace gateway::providers
