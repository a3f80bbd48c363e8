#pragma once

// A fake OpenAI upstream for tests, benchmarks and demos. It speaks the real wire format and is
// steered per request by `x-fake-*` headers (which the gateway forwards like any other header):
//
//   (no header)              canned answer by path: POST /v1/chat/completions (JSON, or SSE when
//                            the body has "stream": true; tool calls when it has "tools" and
//                            no tool result yet, so a client that runs tools ends its turn),
//                            POST /v1/responses (JSON or SSE), GET /v1/models
//   x-fake-mode: echo        200 with the exact request bytes received (line, headers, body)
//   x-fake-mode: stall       never answers; notices when the connection is closed
//   x-fake-mode: reset       resets the connection (RST) right after reading the request
//   x-fake-mode: close       closes the connection without answering
//   x-fake-status: N         answers N with OpenAI's error JSON (429 adds retry-after: 7 and
//                            x-ratelimit-* headers)
//   x-fake-delay-ms: D       waits D ms before the response header and between two writes
//   x-fake-chunk-size: N     writes the SSE transcript in N-byte pieces (default: one per event)
//   x-fake-stall-after: K    stalls after K events for x-fake-stall-ms (default: until closed)
//   x-fake-reset-after: K    resets the connection after K events
//   x-fake-content-type: T   the streamed body's Content-Type instead of text/event-stream
//   x-fake-close-after: 1    closes the connection after the response without saying so
//   Upgrade: websocket       101 Switching Protocols, then echoes every byte back
//
// Model lists in each provider's shape: GET /v1/models (OpenAI's; Anthropic's page when the
// request has `anthropic-version`: `limit`, `after_id`, `has_more`, `last_id`) and GET
// /v1beta/models (Gemini's: `pageSize`, `pageToken`, `nextPageToken`); both providers' pages
// hold at most 2 models, so that a client of them reads several.
//
// Anthropic Messages (POST /v1/messages) and Gemini (POST /v1beta/models/{m}:generateContent,
// :streamGenerateContent?alt=sse) are spoken too, JSON and SSE, with each provider's rules
// enforced and its own 400s (see fake_providers.hpp); x-fake-status answers in that provider's
// error format.
//
// Scripted mode, for the agent loop: once script() was called, each POST /v1/chat/completions
// without x-fake-* headers, and each Anthropic or Gemini request, streamed or not, takes the
// next scripted reply (that content, those native calls and finish_reason,
// or an error status); an empty script then answers 500 "fake: script exhausted", so a loop
// that asks more than its test expected fails visibly.
//
// Turn mode, for many agent runs at once (bench/agent_capacity): once script_by_turn() was called,
// the same requests are answered by the reply at the request's turn, the number of assistant
// messages it holds (the last reply for any later turn), so that concurrent conversations each go
// through the same script; nothing is used up. Each answer's arrival and end are kept per
// conversation (its first user message) for turn_timings().
//
// Thread-safe accessors; the server runs on its own threads.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::testing {

struct fake_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    unsigned threads = 1;
    std::string cert_file;  // both set: serve TLS
    std::string key_file;
    // Off: requests() stays empty (a long benchmark would otherwise keep every body).
    bool keep_requests = true;
    // Whether a Vertex AI request's access token is good (fake_vertex::token_check: "" or why
    // not); unset: any token is.
    std::function<std::string(std::string_view token)> vertex_tokens;
    // Whether an Azure OpenAI request's Entra ID token is good (fake_azure::token_check); unset:
    // none is (only the resource's `api-key` is taken).
    std::function<std::string(std::string_view token)> azure_tokens;
};

// A native tool call in a scripted reply: the tool's name and its arguments as JSON text.
struct scripted_call {
    std::string name;
    std::string arguments = "{}";
};

struct scripted_reply {
    std::string content;
    std::string finish_reason = "stop";
    unsigned status = 200;    // not 200: the dialect's error JSON with this status
    std::string retry_after;  // sent as retry-after with an error status
    long delay_ms = 0;        // wait before answering
    // Native tool calls (OpenAI tool_calls, Anthropic tool_use, Gemini functionCall).
    std::vector<scripted_call> calls;
    // Answer one whole application/json body even to a streamed request, as some
    // OpenAI-compatible servers and proxies that ignore `stream: true` do.
    bool whole = false;
    // Streamed OpenAI answers: set, the stream's first event after the role is OpenAI's error
    // event with this message, and the stream ends there (Anthropic: after message_start and a
    // ping, its `event: error` of type overloaded_error); >= 0, the connection is reset after
    // that many events (a stream cut mid-answer).
    std::string stream_error;
    long cut_after = -1;
    // The connection is reset once the request is read, before any response head.
    bool reset_before_head = false;
    // Set: a request whose body does not hold this text is answered 400 instead (a tool round
    // trip's result must reach the model).
    std::string expect;
    // Set: the usage the answer reports, as the JSON text of the object in its dialect's terms
    // (OpenAI's `usage`, Anthropic's `usage` in message_start and message_delta, Gemini's
    // `usageMetadata`) in place of the canned one. An OpenAI stream sends it in a last chunk
    // with empty `choices`, whatever the request asked; without it a scripted OpenAI stream
    // reports none.
    std::string usage;
};

// One request answered in turn mode: whose, which turn, when it arrived and when its answer's last
// byte was written.
struct turn_timing {
    std::string conversation;  // the first user message's text (its first 64 bytes)
    std::size_t turn = 0;
    std::chrono::steady_clock::time_point arrived, answered;
};

struct received_request {
    std::string raw;  // exactly the bytes of this request as they arrived
    std::string method;
    std::string target;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // names as sent
    std::string header(std::string_view name) const;           // case-insensitive; "" if absent
};

class fake_upstream {
public:
    explicit fake_upstream(fake_options options = {});
    ~fake_upstream();
    fake_upstream(const fake_upstream&) = delete;
    fake_upstream& operator=(const fake_upstream&) = delete;

    std::uint16_t port() const;
    std::string base_url() const;  // http(s)://127.0.0.1:PORT/v1

    std::vector<received_request> requests() const;
    std::size_t connections_accepted() const;
    std::size_t connections_open() const;
    // When the most recent connection ended (the peer closed it or it was reset).
    std::chrono::steady_clock::time_point last_close() const;
    // Blocks until connections_open() == n or the timeout passes; returns whether it happened.
    bool wait_connections_open(std::size_t n, std::chrono::milliseconds timeout) const;
    // Blocks until at least n requests were received.
    bool wait_requests(std::size_t n, std::chrono::milliseconds timeout) const;

    void stop();

    // While on, every model list is answered 503 (a list that fails).
    void fail_model_lists(bool on);
    // The model lists asked for so far (any provider's shape).
    std::size_t model_lists_asked() const;

    // Appends replies to the script (see above).
    void script(std::vector<scripted_reply> replies);
    // Once the script is used up, it starts again from its first reply instead of answering
    // "script exhausted" (the binary's --script: a demo's second run, a console chat).
    void loop_script();
    std::size_t script_left() const;
    // Bodies of the chat completion requests answered from the script, parsed, in order.
    std::vector<std::string> scripted_requests() const;
    // Turn mode (see above): `replies[t]` answers turn t.
    void script_by_turn(std::vector<scripted_reply> replies);
    // The requests answered in turn mode so far, and forgets them.
    std::vector<turn_timing> take_turn_timings();

    // The canned bodies, so tests can compare what a client received byte for byte.
    static std::string chat_completion_json(std::string_view model, bool tool_call);
    static std::vector<std::string> chat_stream_events(std::string_view model, bool tool_call,
                                                       bool include_usage);
    static std::string responses_json(std::string_view model);
    static std::vector<std::string> responses_stream_events(std::string_view model);
    static std::string models_json();
    // The models the fake lists in Anthropic's and Gemini's shapes.
    static std::vector<std::string> anthropic_model_ids();
    static std::vector<std::string> gemini_model_ids();

    struct impl;

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace gateway::testing
