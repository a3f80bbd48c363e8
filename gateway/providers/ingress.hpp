#pragma once

// The client's side of a translation (docs/providers.md, "Directions"): a client that speaks one
// API (Chat Completions, Messages, Responses) and a target of another provider. The request is
// read into the conversation model — a field that would change the answer and cannot be said on
// another provider is refused by name, one that only tunes or annotates is left out — and the
// target's reply, whole or as stream deltas, is written back in the client's API: its JSON, its
// event grammar (one lifecycle, every block or item opened and closed once, consecutive
// indices), its error envelope. Provider state that must come back on the next turn travels in
// the call ids every client echoes (openai::id_with_state).

#include "gateway/providers/conversation.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gateway::providers {

// Why a client's request cannot be translated: the field (`messages[2].content[0].type`) and
// what is wrong with it.
struct parse_failure {
    std::string param;
    std::string message;
    // OpenAI's error code for it: "" is unsupported_parameter (a field the gateway cannot
    // translate); missing_required_parameter, invalid_json.
    std::string code;
};

namespace detail {
// Sets `f` to the field and why, and returns false (the parsers' refusal).
inline bool fail(parse_failure& f, std::string param, std::string message) {
    f.param = std::move(param);
    f.message = std::move(message);
    return false;
}
// The same for a required field that is absent or empty.
inline bool missing(parse_failure& f, std::string param, std::string message) {
    fail(f, std::move(param), std::move(message));
    f.code = "missing_required_parameter";
    return false;
}
// Calls `each(item, "key[i]")` for each element of the array `o[key]` (none when it is absent or
// null). False with `f` set when it is not an array of objects, or when `each` returned false.
template <class Each>
bool for_each_object(const json::object& o, std::string_view key, parse_failure& f, Each each) {
    const auto* list = o.if_contains(key);
    if (!list || list->is_null()) return true;
    if (!list->is_array()) return fail(f, std::string(key), "must be an array");
    const auto& items = list->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto at = std::string(key) + "[" + std::to_string(i) + "]";
        const auto* item = items[i].if_object();
        if (!item) return fail(f, at, "must be an object");
        if (!each(*item, at)) return false;
    }
    return true;
}
// What ends a stream whose provider continued call `index` after another part began.
provider_error interleaved(std::size_t index);
// A client's body as a JSON object (nesting bounded), or nullopt with `f` set.
std::optional<json::value> parse_body(std::string_view body, parse_failure& f);
// OpenAI's invalid_request_error envelope for a refused field (Chat Completions and Responses).
std::string unsupported_parameter(const parse_failure& f);
// The most tokens a client may ask for (max_tokens, a thinking budget): every provider reads
// them as 32-bit integers.
constexpr std::int64_t max_requested_tokens = 2'147'483'647;
// A client's integer field `v` (named `param`): true when it is absent or null (`out` left as
// it is) or an integer from `min` to `max` (integer_of: 2.0 is one; stored in `out`); false with
// `f` naming the field for anything else (1.5, -1 below `min`, 1e300, a string).
bool read_integer(const json::value* v, std::string param, std::int64_t min, std::int64_t max,
                  std::optional<std::int64_t>& out, parse_failure& f);
// A client's number field: true when absent or null, or finite (stored in `out`); false with `f`
// set when it is not a number or not finite (1e309, which Boost.JSON reads as infinity).
bool read_number(const json::value* v, std::string param, std::optional<double>& out,
                 parse_failure& f);
}  // namespace detail

// What the gateway names an answer it writes: its id, the model as the client named it, and
// when it was made (seconds since the epoch).
struct answer_names {
    std::string id;
    std::string model;
    std::int64_t created = 0;
    std::string_view target;  // the client's request target (Gemini's alt=sse is in its query)
};

// Writes one streamed answer in the client's event grammar, delta by delta. Not thread-safe; one
// per stream.
class event_writer {
public:
    virtual ~event_writer() = default;
    // The events `d` completes ("event: …\ndata: …\n\n" each), appended to `out`.
    virtual void frames(const stream_delta& d, std::string& out) = 0;
    // The stream broke after it was committed to: the protocol's terminal error, closing what
    // is open where the grammar asks it.
    virtual void failed(const provider_error& e, std::string& out) = 0;
    // The streamed answer's Content-Type (Gemini without alt=sse streams a JSON array).
    virtual std::string_view content_type() const { return "text/event-stream; charset=utf-8"; }
};

// The API a client speaks, as the gateway answers it for a target of another provider.
class ingress {
public:
    virtual ~ingress() = default;
    // The client's request in the conversation model. False with `failure` when it cannot be
    // translated (or is not a request of this API at all).
    virtual bool parse(std::string_view body, request& out, parse_failure& failure) const = 0;
    // What the request's target adds (Gemini's path names the model and whether to stream:
    // /v1beta/models/{model}:streamGenerateContent?alt=sse). False when it names no model.
    virtual bool from_target(std::string_view, request&) const { return true; }
    // A whole answer to `asked` in this API's JSON.
    virtual std::string answer(const reply& r, const answer_names& names,
                               const request& asked) const = 0;
    virtual std::unique_ptr<event_writer> writer(const answer_names& names,
                                                 const request& r) const = 0;
    // The error answer's body for what a provider said (its status is `e.status`).
    virtual std::string error_body(const provider_error& e) const = 0;
    // The 400 for a request that cannot be translated.
    virtual std::string refusal(const parse_failure& f) const = 0;
    // The prefix of the ids of answers the gateway writes ("chatcmpl-", "msg_", "resp_").
    virtual std::string_view id_prefix() const = 0;
};

// Chat Completions (openai.hpp), Anthropic Messages (anthropic_ingress.cpp), OpenAI Responses
// (responses.cpp), Gemini generateContent (gemini_ingress.cpp).
const ingress& chat_completions();
const ingress& messages();
const ingress& responses();
const ingress& generate_content();

// The model a Gemini path names, given the text after `/models/` (no query): `{model}:{method}`
// is split at the LAST colon, as the API's method names hold none and a model name may
// (`llama3:70b`); without a colon it is all model (`GET /v1beta/models/{model}`). Every reader of
// the path (routing, a key's model list, the ledger, the translation) uses this, so that each
// reads the model the upstream will hear.
inline std::string_view gemini_path_model(std::string_view model_and_method) {
    return model_and_method.substr(0, model_and_method.rfind(':'));
}

// Anthropic's `count_tokens` answer on a translated route: an estimate of the tokens `r` would
// send, from the same text (system, messages, calls and results, tool declarations): one token
// per four bytes of UTF-8, rounded up, and 1,600 per image (Anthropic's figure for a
// 1.15-megapixel image). Documented in docs/providers.md.
std::int64_t estimate_input_tokens(const request& r);

}  // namespace gateway::providers

namespace gateway::providers {

// The grammar both Messages and Responses streams keep: the answer is a sequence of blocks
// (reasoning, text, one per call), one open at a time, each opened, filled and closed once, in
// the order they began. This turns deltas into those steps; a writer says each in its events.
// A call's arguments that arrive after another block began (a provider that interleaves its
// calls) break the stream: `frames` then writes failed() with that reason.
class block_writer : public event_writer {
public:
    enum class block { none, reasoning, text, call };

    void frames(const stream_delta& d, std::string& out) final;

protected:
    // The stream began (`d` is `started`); it ends (`d` is `finished`) after the last close.
    virtual void begin(const stream_delta& d, std::string& out) = 0;
    virtual void end(const stream_delta& d, std::string& out) = 0;
    // A block opens (a call's: `d` is its call_started), takes text, closes.
    virtual void open(block b, const stream_delta& d, std::string& out) = 0;
    virtual void append(block b, const std::string& text, std::string& out) = 0;
    virtual void close(block b, std::string& out) = 0;
    // How many calls were opened so far.
    std::size_t calls() const { return calls_; }

private:
    void ensure_begun(std::string& out);
    void switch_to(block b, const stream_delta& d, std::string& out);

    bool begun_ = false;
    bool ended_ = false;
    block open_ = block::none;
    std::size_t open_call_ = 0;
    std::size_t calls_ = 0;
};

}  // namespace gateway::providers
