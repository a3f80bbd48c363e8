#pragma once

// The one conversation model inside the gateway. Every provider adapter encodes a `request` to
// its wire format and decodes its replies (whole or streamed) back to a `reply`; the agent loop
// and the /v1/chat/completions translation speak only this.

#include "gateway/config/config.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::providers {

// The longest model name the gateway takes (OpenAI's, Anthropic's and Gemini's names, fine-tuned
// ones and ARNs included, are far shorter): a longer one is refused at the edge, before it can
// become a metric label, a usage row or a log field.
constexpr std::size_t max_model_name_bytes = 256;

namespace json = boost::json;

using provider = config::provider_kind;

std::string_view provider_name(provider p);

// A call the model asked for. `arguments` is always an object (OpenAI's string is parsed, an
// empty streamed Anthropic input is {}). `provider_meta` is carried opaque and echoed back to
// the provider that made it: Gemini's {"thought_signature": "…"}; the agent's JSON protocol keeps
// its {"terminate": true} there (no adapter sends a member it does not know).
struct tool_call {
    std::string id;
    std::string name;
    json::object arguments;
    json::object provider_meta;
};

// The outcome of a call, for the model's next turn.
struct tool_result {
    std::string call_id;
    std::string name;  // the call's name (Gemini answers by name)
    std::string content;
    bool is_error = false;
};

struct part {
    enum class kind {
        text,
        image,  // `text` is the URL: https://… or data:<media type>;base64,…
        tool_call,
        tool_result,
        opaque,     // a provider's own block (Anthropic thinking), echoed to that provider only
        reasoning,  // the model's reasoning text as a provider showed it (Gemini's thoughts,
                    // reasoning_content); shown to clients, never sent to a provider again
    };
    kind what = kind::text;
    std::string text;
    tool_call call;
    tool_result result;
    // text: Gemini's {"thought_signature"}; opaque: {"provider": "anthropic", "block": {…}}.
    json::object provider_meta;

    static part of_text(std::string text) { return {kind::text, std::move(text), {}, {}, {}}; }
    static part of_image(std::string url) { return {kind::image, std::move(url), {}, {}, {}}; }
    static part of_call(tool_call c) { return {kind::tool_call, {}, std::move(c), {}, {}}; }
    static part of_result(tool_result r) { return {kind::tool_result, {}, {}, std::move(r), {}}; }
    static part of_reasoning(std::string text) {
        return {kind::reasoning, std::move(text), {}, {}, {}};
    }
};

// Tool results travel in `tool` messages (one per result, as OpenAI has them); adapters group
// them as their provider wants (Anthropic: all results of a turn in one user message).
enum class role { user, assistant, tool };
std::string_view role_name(role r);
std::optional<role> parse_role(std::string_view name);

struct message {
    role who = role::user;
    std::vector<part> parts;

    static message of_text(role who, std::string text) {
        return {who, {part::of_text(std::move(text))}};
    }

    // The text parts joined, in order.
    std::string text() const;
    std::vector<const tool_call*> calls() const;
};

struct tool_spec {
    std::string name;
    std::string description;
    json::object parameters;  // JSON Schema of the arguments object
    // Declared by the client as taking raw text (a Responses `custom` tool such as Codex's
    // apply_patch): the target sees a function of one string, `input`.
    bool freeform = false;
    // The client's namespace the tool came in (Responses' `namespace` tools, flattened for the
    // target), given back with its calls.
    std::string group;
};

enum class tool_choice { automatic, none, required, named };

// A reply constrained to a JSON Schema (OpenAI's response_format json_schema, Gemini's
// responseJsonSchema; Anthropic has no such field and is sent the request without it).
struct json_format {
    std::string name;
    json::object schema;
    bool strict = false;
};

struct request {
    std::string model;  // as the upstream names it (after model_map)
    std::string system;
    std::vector<message> messages;
    std::vector<tool_spec> tools;
    tool_choice choice = tool_choice::automatic;
    std::string choice_name;  // tool_choice::named
    std::optional<bool> parallel_tool_calls;
    std::optional<std::int64_t> max_tokens;
    std::optional<double> temperature;
    std::optional<double> top_p;
    std::vector<std::string> stop;
    std::optional<json_format> format;
    bool stream = false;
    bool include_usage = false;  // OpenAI stream_options.include_usage
    // The reasoning the client asked for (Anthropic's `thinking`, Responses' `reasoning`): a
    // budget in tokens, or an effort (low, medium, high). Only Gemini's encoder maps it
    // (thinkingConfig, thoughts included); the others leave it out (docs/providers.md).
    std::optional<std::int64_t> reasoning_budget;
    std::string reasoning_effort;
};

enum class finish { stop, length, tool_calls, content_filter, error };
std::string_view openai_finish_reason(finish f);

// The tokens an answer used, split as the providers bill them. `input` and `output` are the
// totals (what limits and the ledger count); the rest are parts of them, whichever way the
// provider reported them: `cache_read`, `cache_write` (a 5-minute cache) and `cache_write_1h` are
// part of `input` (OpenAI's and Gemini's cached tokens are part of their prompt count, Anthropic's
// cache reads and writes come apart from input_tokens and are added to it), `reasoning` is part of
// `output` (OpenAI's reasoning_tokens are part of completion_tokens, Gemini's thoughts come apart
// from its candidates and are added). pricing::cost charges each part once.
struct usage {
    bool known = false;
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    std::int64_t cache_write_1h = 0;
    std::int64_t reasoning = 0;
    // A figure was a number but no token count (negative, not finite, past
    // detail::max_reported_tokens): it counted 0, and whoever settles the usage logs it.
    bool unreadable = false;
};

struct reply {
    std::string id;
    std::string model;
    message content{role::assistant, {}};
    finish why = finish::stop;
    usage used;
};

// A piece of a streamed reply, in the order the provider sent it. Calls are numbered from 0 in
// the order they started.
struct stream_delta {
    enum class kind {
        started,         // the reply's id and model are known
        text,            // `text` continues the answer
        call_started,    // call `index` begins: its id, name and provider_meta
        call_arguments,  // `text` continues the arguments JSON of call `index`
        finished,        // `why` and `used`; nothing follows
        reasoning,       // `text` continues the model's shown reasoning
    };
    kind what = kind::text;
    std::size_t index = 0;
    std::string text;
    std::string id;
    std::string name;
    json::object provider_meta;
    finish why = finish::stop;
    usage used;
};

// What a provider's error answer says, in OpenAI's terms.
struct provider_error {
    unsigned status = 502;
    std::string type = "upstream_error";  // OpenAI's error `type`
    std::string message;
};

// A message in its stored form, and back (the agent keeps runs' conversations so):
// {"role": "assistant", "parts": [{"type": "text", "text"}, {"type": "tool_call", "id", "name",
// "arguments", "meta"}, {"type": "tool_result", "call_id", "name", "content", "is_error"},
// {"type": "image", "url"}, {"type": "opaque", "meta"}, {"type": "reasoning", "text"}]}. Reading
// never throws: a value that is not such a message is an error.
void tag_invoke(const json::value_from_tag&, json::value& v, const message& m);
boost::system::result<message> tag_invoke(const json::try_value_to_tag<message>&,
                                          const json::value& v);

// Assembles stream deltas into the whole reply (the same result as the provider's JSON answer).
class reply_builder {
public:
    void add(const stream_delta& d);
    // True once a `finished` delta arrived.
    bool finished() const { return finished_; }
    // The reply; arguments that do not parse as a JSON object make `error` non-empty.
    reply take(std::string& error);

private:
    reply reply_;
    std::string reasoning_;
    std::string text_;
    struct pending_call {
        tool_call call;
        std::string arguments;
    };
    std::vector<pending_call> calls_;
    bool finished_ = false;
};

}  // namespace gateway::providers
