// Anthropic Messages as a client speaks it, answered from a target of another provider
// (docs/providers.md, "Messages to OpenAI-compatible and Gemini targets").
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/openai.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <unordered_map>

namespace gateway::providers {

namespace {

using detail::fail;
using detail::missing;
using detail::number_of;
using detail::string_of;

// A usage as Anthropic reports it: input_tokens without the cache reads and writes, which come
// apart (so that a client adding them up counts each token once).
json::object usage_json(const usage& u) {
    auto cached = u.cache_read + u.cache_write + u.cache_write_1h;
    json::object out{{"input_tokens", std::max<std::int64_t>(u.input - cached, 0)},
                     {"output_tokens", u.output}};
    if (u.cache_read > 0) out["cache_read_input_tokens"] = u.cache_read;
    if (u.cache_write + u.cache_write_1h > 0) {
        out["cache_creation_input_tokens"] = u.cache_write + u.cache_write_1h;
        out["cache_creation"] = {{"ephemeral_5m_input_tokens", u.cache_write},
                                 {"ephemeral_1h_input_tokens", u.cache_write_1h}};
    }
    return out;
}

// An image block's source as the conversation model keeps images: a data: URL or a URL.
bool image_url(const json::object& block, std::string& url) {
    const auto* source = block.if_contains("source");
    if (!source || !source->is_object()) return false;
    const auto& s = source->as_object();
    auto type = string_of(s.if_contains("type"));
    if (type == "base64") {
        auto media = string_of(s.if_contains("media_type"));
        auto data = string_of(s.if_contains("data"));
        if (media.empty() || data.empty()) return false;
        url = "data:" + media + ";base64," + data;
        return true;
    }
    if (type == "url") {
        url = string_of(s.if_contains("url"));
        return !url.empty();
    }
    return false;
}

// A tool_result's content: a string, or text and image blocks (the images go to the user
// message that follows the results: no provider takes them inside a result).
bool read_result_content(const json::value* content, const std::string& at, std::string& text,
                         std::vector<part>& images, parse_failure& f) {
    if (!content || content->is_null()) return true;
    if (content->is_string()) {
        text = content->as_string();
        return true;
    }
    if (!content->is_array()) return fail(f, at, "must be a string or an array of blocks");
    const auto& blocks = content->as_array();
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        auto bat = at + "[" + std::to_string(k) + "]";
        const auto* b = blocks[k].if_object();
        if (!b) return fail(f, bat, "must be an object");
        auto type = string_of(b->if_contains("type"));
        if (type == "text") {
            if (!text.empty()) text += "\n";
            text += string_of(b->if_contains("text"));
        } else if (type == "image") {
            std::string url;
            if (!image_url(*b, url)) return fail(f, bat + ".source", "is not an image source");
            images.push_back(part::of_image(std::move(url)));
        } else {
            return fail(f, bat + ".type",
                        "`" + type + "` blocks cannot be translated for this model's provider");
        }
    }
    return true;
}

bool read_tools(const json::object& o, request& out, parse_failure& f) {
    return detail::for_each_object(
        o, "tools", f, [&](const json::object& t, const std::string& at) {
            auto type = string_of(t.if_contains("type"));
            // Anthropic's own tools (web search, code execution, the computer) run on its servers.
            if (!type.empty() && type != "custom")
                return fail(f, at + ".type",
                            "`" + type +
                                "` is one of Anthropic's server tools, which this model's "
                                "provider does not have");
            tool_spec spec;
            spec.name = string_of(t.if_contains("name"));
            spec.description = string_of(t.if_contains("description"));
            if (spec.name.empty()) return fail(f, at + ".name", "is required");
            if (const auto* schema = t.if_contains("input_schema"); schema && schema->is_object())
                spec.parameters = schema->as_object();
            else
                spec.parameters = {{"type", "object"}, {"properties", json::object{}}};
            out.tools.push_back(std::move(spec));
            return true;
        });
}

bool read_tool_choice(const json::object& o, request& out, parse_failure& f) {
    const auto* choice = o.if_contains("tool_choice");
    if (!choice || choice->is_null()) return true;
    if (!choice->is_object()) return fail(f, "tool_choice", "must be an object");
    const auto& c = choice->as_object();
    auto type = string_of(c.if_contains("type"));
    if (type == "auto") {
        out.choice = tool_choice::automatic;
    } else if (type == "any") {
        out.choice = tool_choice::required;
    } else if (type == "none") {
        out.choice = tool_choice::none;
    } else if (type == "tool") {
        out.choice = tool_choice::named;
        out.choice_name = string_of(c.if_contains("name"));
        if (out.choice_name.empty()) return fail(f, "tool_choice.name", "is required");
    } else {
        return fail(f, "tool_choice.type", "must be auto, any, tool or none");
    }
    if (const auto* d = c.if_contains("disable_parallel_tool_use"); d && d->is_bool())
        out.parallel_tool_calls = !d->as_bool();
    return true;
}

// A system prompt: a string or text blocks (cache_control left out), joined.
bool read_system(const json::value* system, const std::string& at, std::string& out,
                 parse_failure& f) {
    if (!system || system->is_null()) return true;
    if (system->is_string()) {
        out = system->as_string();
        return true;
    }
    if (!system->is_array()) return fail(f, at, "must be a string or an array of text blocks");
    const auto& blocks = system->as_array();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const auto* b = blocks[i].if_object();
        if (!b || string_of(b->if_contains("type")) != "text")
            return fail(f, at + "[" + std::to_string(i) + "].type",
                        "only text blocks can be translated");
        if (!out.empty()) out += "\n\n";
        out += string_of(b->if_contains("text"));
    }
    return true;
}

bool read_messages(const json::value* messages, request& out, parse_failure& f) {
    if (!messages || !messages->is_array() || messages->as_array().empty())
        return missing(f, "messages", "must be a non-empty array");
    const auto& list = messages->as_array();
    std::unordered_map<std::string, std::string> call_names;  // echoed call id -> tool name
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto at = "messages[" + std::to_string(i) + "]";
        const auto* m = list[i].if_object();
        if (!m) return fail(f, at, "must be an object");
        auto who = string_of(m->if_contains("role"));
        if (who == "system") {
            // A system message mid-conversation (Claude Code's beta): its text joins the system
            // prompt, the one place every provider takes instructions.
            std::string text;
            if (!read_system(m->if_contains("content"), at + ".content", text, f)) return false;
            if (!out.system.empty() && !text.empty()) out.system += "\n\n";
            out.system += text;
            continue;
        }
        if (who != "user" && who != "assistant")
            return fail(f, at + ".role", "must be user, assistant or system");
        bool assistant = who == "assistant";
        message said{assistant ? role::assistant : role::user, {}};
        std::vector<message> results;  // one tool message per tool_result, in order
        const auto* content = m->if_contains("content");
        if (content && content->is_string()) {
            said.parts.push_back(part::of_text(std::string(content->as_string())));
        } else if (content && content->is_array()) {
            const auto& blocks = content->as_array();
            for (std::size_t j = 0; j < blocks.size(); ++j) {
                auto bat = at + ".content[" + std::to_string(j) + "]";
                const auto* b = blocks[j].if_object();
                if (!b) return fail(f, bat, "must be an object");
                auto type = string_of(b->if_contains("type"));
                if (type == "text") {
                    // cache_control and citations only annotate: left out.
                    said.parts.push_back(part::of_text(string_of(b->if_contains("text"))));
                } else if (type == "image") {
                    std::string url;
                    if (!image_url(*b, url))
                        return fail(f, bat + ".source", "is not an image source");
                    said.parts.push_back(part::of_image(std::move(url)));
                } else if (type == "tool_use" && assistant) {
                    tool_call c;
                    auto echoed = string_of(b->if_contains("id"));
                    json::object carried;
                    c.id = openai::id_without_state(echoed, carried);
                    c.provider_meta = std::move(carried);
                    c.name = string_of(b->if_contains("name"));
                    if (c.name.empty()) return fail(f, bat + ".name", "is required");
                    if (const auto* input = b->if_contains("input"); input && input->is_object())
                        c.arguments = input->as_object();
                    call_names[echoed] = c.name;
                    said.parts.push_back(part::of_call(std::move(c)));
                } else if (type == "tool_result" && !assistant) {
                    tool_result r;
                    auto echoed = string_of(b->if_contains("tool_use_id"));
                    json::object carried;
                    r.call_id = openai::id_without_state(echoed, carried);
                    auto named = call_names.find(echoed);
                    if (named == call_names.end())
                        return fail(f, bat + ".tool_use_id",
                                    "`" + echoed + "` answers no tool_use of an earlier message");
                    r.name = named->second;
                    if (const auto* e = b->if_contains("is_error"); e && e->is_bool())
                        r.is_error = e->as_bool();
                    if (!read_result_content(b->if_contains("content"), bat + ".content", r.content,
                                             said.parts, f))
                        return false;
                    results.push_back(message{role::tool, {part::of_result(std::move(r))}});
                } else if ((type == "thinking" || type == "redacted_thinking") && assistant) {
                    // A provider's reasoning is never replayed to another provider.
                } else {
                    return fail(f, bat + ".type",
                                "`" + type +
                                    "` blocks cannot be translated for this model's "
                                    "provider");
                }
            }
        } else {
            return fail(f, at + ".content", "must be a string or an array of blocks");
        }
        for (auto& r : results) out.messages.push_back(std::move(r));
        if (!said.parts.empty() || (results.empty() && !assistant))
            out.messages.push_back(std::move(said));
    }
    return true;
}

bool parse_messages(std::string_view body, request& out, parse_failure& f) {
    auto v = detail::parse_body(body, f);
    if (!v) return false;
    const auto& o = v->as_object();
    for (const auto& field : o) {
        std::string_view key = field.key();
        if (key == "top_k" || key == "mcp_servers" || key == "container")
            return fail(f, std::string(key),
                        "cannot be translated for this model's provider (it would change the "
                        "answer)");
    }
    out.model = string_of(o.if_contains("model"));
    if (out.model.empty()) return missing(f, "model", "is required");
    if (!read_system(o.if_contains("system"), "system", out.system, f)) return false;
    if (!read_messages(o.if_contains("messages"), out, f)) return false;
    if (!read_tools(o, out, f) || !read_tool_choice(o, out, f)) return false;
    if (!detail::read_integer(o.if_contains("max_tokens"), "max_tokens", 0,
                              detail::max_requested_tokens, out.max_tokens, f) ||
        !detail::read_number(o.if_contains("temperature"), "temperature", out.temperature, f) ||
        !detail::read_number(o.if_contains("top_p"), "top_p", out.top_p, f))
        return false;
    if (const auto* stop = o.if_contains("stop_sequences"); stop && stop->is_array())
        for (const auto& s : stop->as_array())
            if (s.is_string()) out.stop.push_back(std::string(s.as_string()));
    // output_config: the effort of adaptive thinking, and a JSON Schema for the answer.
    std::string effort;
    if (const auto* config = o.if_contains("output_config"); config && config->is_object()) {
        effort = string_of(config->as_object().if_contains("effort"));
        if (const auto* format = config->as_object().if_contains("format");
            format && format->is_object()) {
            const auto& fo = format->as_object();
            if (string_of(fo.if_contains("type")) != "json_schema")
                return fail(f, "output_config.format.type", "only json_schema can be translated");
            json_format jf;
            jf.name = "answer";
            if (const auto* schema = fo.if_contains("schema"); schema && schema->is_object())
                jf.schema = schema->as_object();
            jf.strict = true;
            out.format = std::move(jf);
        }
    }
    if (const auto* thinking = o.if_contains("thinking"); thinking && thinking->is_object()) {
        auto type = string_of(thinking->as_object().if_contains("type"));
        if (type == "enabled") {
            if (!detail::read_integer(thinking->as_object().if_contains("budget_tokens"),
                                      "thinking.budget_tokens", 0, detail::max_requested_tokens,
                                      out.reasoning_budget, f))
                return false;
            if (!out.reasoning_budget) out.reasoning_budget = 0;
        } else if (type != "disabled" && !type.empty())  // adaptive
            out.reasoning_effort = effort == "max" ? "high" : effort.empty() ? "medium" : effort;
    }
    out.stream = o.if_contains("stream") && *o.if_contains("stream") == json::value(true);
    out.include_usage = true;  // Anthropic's streams always end with the usage
    return true;
}

std::string_view stop_reason(finish why, bool called) {
    if (called || why == finish::tool_calls) return "tool_use";
    switch (why) {
        case finish::length:
            return "max_tokens";
        case finish::content_filter:
            return "refusal";
        default:
            return "end_turn";
    }
}

// Anthropic's error type for an HTTP status.
std::string_view error_type(unsigned status) {
    switch (status) {
        case 400:
            return "invalid_request_error";
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 413:
            return "request_too_large";
        case 429:
            return "rate_limit_error";
        case 503:
        case 529:
            return "overloaded_error";
        default:
            return "api_error";
    }
}

std::string error_json(unsigned status, std::string_view message) {
    return json::serialize(json::object{
        {"type", "error"}, {"error", {{"type", error_type(status)}, {"message", message}}}});
}

// The signature the gateway gives a thinking block it makes from another provider's reasoning
// (Anthropic's SDKs expect one); such a block is never sent to any provider again.
constexpr std::string_view gateway_signature = "contextgate";

std::string event(std::string_view type, const json::object& data) {
    json::object o{{"type", type}};
    for (const auto& field : data) o.emplace(field.key(), field.value());
    std::string out = "event: ";
    out.append(type).append("\ndata: ").append(json::serialize(o)).append("\n\n");
    return out;
}

class messages_writer final : public block_writer {
public:
    explicit messages_writer(answer_names names) : names_(std::move(names)) {}

    void failed(const provider_error& e, std::string& out) override {
        out += "event: error\ndata: " + error_json(e.status >= 400 ? e.status : 500, e.message) +
               "\n\n";
    }

protected:
    void begin(const stream_delta&, std::string& out) override {
        json::object message{
            {"id", names_.id},          {"type", "message"},
            {"role", "assistant"},      {"model", names_.model},
            {"content", json::array{}}, {"stop_reason", nullptr},
            {"stop_sequence", nullptr}, {"usage", {{"input_tokens", 0}, {"output_tokens", 0}}}};
        out += event("message_start", {{"message", std::move(message)}});
    }
    void open(block b, const stream_delta& d, std::string& out) override {
        json::object content;
        switch (b) {
            case block::text:
                content = {{"type", "text"}, {"text", ""}};
                break;
            case block::reasoning:
                content = {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}};
                break;
            case block::call:
                content = {{"type", "tool_use"},
                           {"id", openai::id_with_state(d.id, d.provider_meta)},
                           {"name", d.name},
                           {"input", json::object{}}};
                break;
            case block::none:
                return;
        }
        out += event("content_block_start", {{"index", index_}, {"content_block", content}});
    }
    void append(block b, const std::string& text, std::string& out) override {
        json::object delta;
        if (b == block::text)
            delta = {{"type", "text_delta"}, {"text", text}};
        else if (b == block::reasoning)
            delta = {{"type", "thinking_delta"}, {"thinking", text}};
        else {
            delta = {{"type", "input_json_delta"}, {"partial_json", text}};
            arguments_ = true;
        }
        out += event("content_block_delta", {{"index", index_}, {"delta", std::move(delta)}});
    }
    void close(block b, std::string& out) override {
        if (b == block::call && !arguments_) append(b, "{}", out);  // a call without arguments
        arguments_ = false;
        if (b == block::reasoning)
            out +=
                event("content_block_delta",
                      {{"index", index_},
                       {"delta", {{"type", "signature_delta"}, {"signature", gateway_signature}}}});
        out += event("content_block_stop", {{"index", index_}});
        ++index_;
    }
    void end(const stream_delta& d, std::string& out) override {
        out +=
            event("message_delta",
                  {{"delta",
                    {{"stop_reason", stop_reason(d.why, calls() > 0)}, {"stop_sequence", nullptr}}},
                   {"usage", usage_json(d.used)}});
        out += event("message_stop", {});
    }

private:
    answer_names names_;
    std::size_t index_ = 0;
    bool arguments_ = false;  // the open call's arguments began
};

class messages_ingress final : public ingress {
public:
    bool parse(std::string_view body, request& out, parse_failure& failure) const override {
        return parse_messages(body, out, failure);
    }
    std::string answer(const reply& r, const answer_names& names, const request&) const override {
        json::array content;
        bool called = false;
        for (const auto& p : r.content.parts) {
            if (p.what == part::kind::reasoning)
                content.push_back(
                    {{"type", "thinking"}, {"thinking", p.text}, {"signature", gateway_signature}});
            else if (p.what == part::kind::text && !p.text.empty())
                content.push_back({{"type", "text"}, {"text", p.text}});
            else if (p.what == part::kind::tool_call) {
                called = true;
                content.push_back({{"type", "tool_use"},
                                   {"id", openai::id_with_state(p.call.id, p.call.provider_meta)},
                                   {"name", p.call.name},
                                   {"input", p.call.arguments}});
            }
        }
        return json::serialize(json::object{{"id", names.id},
                                            {"type", "message"},
                                            {"role", "assistant"},
                                            {"model", names.model},
                                            {"content", std::move(content)},
                                            {"stop_reason", stop_reason(r.why, called)},
                                            {"stop_sequence", nullptr},
                                            {"usage", usage_json(r.used)}});
    }
    std::unique_ptr<event_writer> writer(const answer_names& names, const request&) const override {
        return std::make_unique<messages_writer>(names);
    }
    std::string error_body(const provider_error& e) const override {
        return error_json(e.status, e.message);
    }
    std::string refusal(const parse_failure& f) const override {
        return error_json(400, f.param.empty() ? f.message : f.param + ": " + f.message);
    }
    std::string_view id_prefix() const override { return "msg_"; }
};

}  // namespace

const ingress& messages() {
    static const messages_ingress instance;
    return instance;
}

}  // namespace gateway::providers
