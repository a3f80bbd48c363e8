#pragma once

#include "gateway/json_fields.hpp"
#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/sse/event_parser.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::providers {

// Turns a provider's streamed events into deltas. One per stream; not thread-safe.
class stream_decoder {
public:
    virtual ~stream_decoder() = default;
    // The deltas `e` carries, appended to `out`. False when the event is the provider's error
    // (or unreadable): `error` then says what it said.
    virtual bool feed(const sse::event& e, std::vector<stream_delta>& out,
                      provider_error& error) = 0;
    // The upstream's body ended: the `finished` delta when the provider has no end event of its
    // own (Gemini), or nothing. False when the stream ended before the reply was complete.
    virtual bool end(std::vector<stream_delta>& out) = 0;
};

// How a dialect frames its event streams: Server-Sent Events (OpenAI, Anthropic, Gemini) or AWS's
// binary event stream (Bedrock).
enum class stream_framing { sse, aws_eventstream };

// One upstream dialect: how a conversation request goes on its wire and how its answers come
// back. Stateless; one instance per provider (adapter_for).
class adapter {
public:
    virtual ~adapter() = default;
    virtual provider kind() const = 0;
    // The request target below the upstream's base path, with its query.
    virtual std::string target(const request& r) const = 0;
    // The request body. Empty with `error` set when the request cannot be said in this dialect.
    virtual std::string encode(const request& r, std::string& error) const = 0;
    // A whole (non-streamed) answer. False with `error` set when it is not one.
    virtual bool decode(std::string_view body, reply& out, std::string& error) const = 0;
    virtual std::unique_ptr<stream_decoder> decoder() const = 0;
    // How its streams are framed. An event-stream message reaches decoder() as an sse::event
    // whose `type` is its :event-type (an exception's :exception-type, an error's :error-code)
    // and whose `data` is its payload (an error's :error-message as {"message": …}).
    virtual stream_framing framing() const { return stream_framing::sse; }
    // Whether an answer with this Content-Type is one of its event streams (text/event-stream,
    // or application/vnd.amazon.eventstream), rather than one whole reply.
    bool streams_as(std::string_view content_type) const;
    // What an error answer (status >= 400) says.
    virtual provider_error decode_error(unsigned status, std::string_view body) const = 0;
    // The header field that carries this dialect's key, and what precedes the key in it
    // ({"Authorization", "Bearer "}, {"x-api-key", ""}).
    virtual std::pair<std::string_view, std::string_view> key_field() const = 0;
    // The request header fields that carry `key` and the fixed fields this dialect needs, each
    // "Name: value\r\n".
    std::string auth_fields(std::string_view key) const;
};

const adapter& adapter_for(provider p);

// The header field that carries upstream `up`'s key when `a` speaks to it, and what precedes the
// key there: the dialect's (adapter::key_field), except Azure OpenAI's `api-key`.
std::pair<std::string_view, std::string_view> key_field_of(const config::upstream_config& up,
                                                           const adapter& a);
// adapter::auth_fields for `up`: `key` in key_field_of's field.
std::string auth_fields_of(const config::upstream_config& up, const adapter& a,
                           std::string_view key);
// The dialect a model call to `model` (as the upstream names it) is said in on `up`: its
// provider's, but InvokeModel's for Claude on Bedrock (bedrock::invokes) and rawPredict's for
// Claude on Vertex AI (config::dialect_for, vertex::claude_adapter).
const adapter& adapter_for(const config::upstream_config& up, std::string_view model);

// What an error answer of `a`'s upstream says: decode_error, or for Bedrock, which names its
// errors in a header field, bedrock::read_error with that field (`error_type`, its
// x-amzn-ErrorType; the other dialects have none).
provider_error error_of(const adapter& a, unsigned status, std::string_view error_type,
                        std::string_view body);

// Reads one reply's event stream in the pieces it arrives in: framed as the dialect frames it (SSE
// events or event-stream messages up to `max_event_bytes`), each event decoded by the dialect, the
// deltas handed out in order. Not thread-safe; one per stream.
class stream_reader {
public:
    stream_reader(const adapter& a, std::size_t max_event_bytes);
    // Appends to `out` the deltas these bytes complete. False, with `error`, when the stream is
    // broken or is the provider's error; `out` then holds the deltas that came before it.
    bool feed(std::string_view bytes, std::vector<stream_delta>& out, std::string& error);
    // The body ended: appends the last deltas (Gemini's `finished`). False, with `error`, when
    // the reply was not complete.
    bool finish(std::vector<stream_delta>& out, std::string& error);

private:
    // The events `bytes` completes, into parsed_; false, with `error`, when the framing is broken.
    bool frame(std::string_view bytes, std::string& error);

    std::unique_ptr<stream_decoder> decoder_;
    stream_framing framing_;
    sse::event_parser events_;
    aws_eventstream::decoder messages_;
    std::vector<aws_eventstream::message> framed_;
    std::vector<sse::event> parsed_;
    bool finished_ = false;
};

// Shared by the adapters.
namespace detail {
// Parses `text` as a JSON object; an empty or blank text is {}. nullopt when it is not one.
std::optional<json::object> arguments_object(std::string_view text);
// OpenAI's error type for an HTTP status.
std::string_view error_type_for(unsigned status);
// What an error answer says when it has the shape all three providers share:
// {"error": {"message", …}} (Gemini's streamed errors come as an array of one). The type is
// OpenAI's for the status, or the body's own `error.type` when `keep_type`.
provider_error read_error(unsigned status, std::string_view body, bool keep_type);
// A member's integer, or 0 when it is not one or out of int64's range (integer_of; its string:
// gateway::string_of).
std::int64_t int_of(const json::value* v);
// The largest count of tokens an upstream's usage is believed (2^40): a larger or broken figure
// (1e300, -5, 2^64 - 1) counts 0, and sums of a few counts cannot overflow.
constexpr std::int64_t max_reported_tokens = std::int64_t(1) << 40;
// A token count an upstream reported: a number from 0 to max_reported_tokens (a fraction
// truncated), else 0; a number out of that range also sets `into.unreadable`.
std::int64_t count_of(const json::value* v, usage& into);
// A member's number, or nullopt when it is not one.
std::optional<double> number_of(const json::value* v);
using gateway::string_of;
}  // namespace detail

}  // namespace gateway::providers
