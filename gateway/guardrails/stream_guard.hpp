#pragma once

// The guardrails' response stage over a streamed answer (docs/operations.md "Guardrails"): the
// answer's SSE events, in the client's API, checked on their way to the client. Pure code: the
// relay (passthrough/relay.cpp) and the translator feed it what they would write and write what
// it gives back.
#include "gateway/guardrails/engine.hpp"
#include "gateway/sse/event_parser.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::guardrails {

// The streamed answers stream_guard reads: the text deltas of each is where its text is.
enum class stream_api : std::uint8_t {
    chat_completions,  // chat.completion.chunk: choices[i].delta.content
    responses,         // response.output_text.delta: delta (by output_index, content_index)
    messages,          // content_block_delta: delta.text | delta.thinking (by index)
    generate_content,  // candidates[i].content.parts[0].text
};

// A bounded hold-back over one answer's event stream. The text of each channel (a choice, a
// content block, an output part, a candidate, and a tool call's arguments as their JSON text: a
// Chat Completions call's `function.arguments`, a Messages `input_json_delta`, a Responses
// `function_call_arguments.delta`) is held until `max_match_bytes` of later text show
// that no match can span the point released: then it goes out masked, in one event made from the
// last held one (so the client's events keep their grammar; a Responses stream's
// sequence_number is counted again). An event that is not a plain text delta (a block's end, a
// finish reason, a tool call's start, `[DONE]`) first releases everything held, and the texts it
// carries itself (a Responses `…done` event's whole text, a final chunk's last words) are checked
// whole. A `block` hit ends the stream with the API's error event, and what follows is dropped.
// Hits are counted (guardrails::record) as their text is released.
//
// A masked span in arguments is `[REDACTED:<rule>]`, which needs no escaping, so the arguments
// the client assembles stay the JSON they were. Comments (heartbeats) are dropped. Not
// thread-safe: one per stream.
class stream_guard {
public:
    // `rules` and `chosen` (the response stage's selection, not empty) outlive the guard.
    stream_guard(stream_api api, const engine& rules, const selection& chosen);

    // Reads `bytes` of the stream (split anywhere); appends to `out` the events that may go to
    // the client now.
    void feed(std::string_view bytes, std::string& out);
    // The stream ended: appends what is still held.
    void finish(std::string& out);
    // A block hit ended the stream (its error event is written): nothing more goes out.
    bool blocked() const { return blocked_; }

private:
    // One channel's text not yet released, and the last event that carried some of it (the
    // shape the released text goes out in).
    struct channel {
        std::string text;
        std::string type;  // its SSE event name
        boost::json::value last;
    };
    void on_event(const sse::event& e, std::string& out);
    // Releases what no match can reach any more (`all`: everything) of channel `c`.
    void release(channel& c, bool all, std::string& out);
    void release_all(std::string& out);
    // Checks a text whole: its masked form, or false when it blocked (the error is in `out`).
    bool check_whole(boost::json::string& text, std::string& out);
    void end_blocked(const finding& by, std::string& out);
    void write(std::string_view type, boost::json::value& data, std::string& out);

    stream_api api_;
    const engine& rules_;
    const selection& chosen_;
    std::size_t hold_;  // max_match_bytes: a match spans at most this many bytes
    sse::event_parser parser_;
    std::vector<sse::event> events_;
    std::map<std::string, channel, std::less<>> channels_;  // by the API's channel key
    std::int64_t sequence_ = 0;                             // Responses' sequence_number
    bool blocked_ = false;
};

}  // namespace gateway::guardrails
