// The OpenAI Responses API as a client speaks it (Codex), answered from a target that has no
// Responses endpoint: Anthropic, Gemini, or an OpenAI-compatible server with
// `responses: translate` (docs/providers.md, "Responses to other targets").
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

// The one parameter a custom (freeform) tool is given on a target that has only functions.
constexpr std::string_view freeform_input = "input";

json::object freeform_parameters() {
    return {
        {"type", "object"},
        {"properties",
         {{freeform_input, {{"type", "string"}, {"description", "The tool's raw text input."}}}}},
        {"required", json::array{json::string(freeform_input)}}};
}

// A message item's content: a string, or input_text/output_text/refusal/input_image parts.
bool read_content(const json::value* content, const std::string& at, message& m, parse_failure& f) {
    if (!content || content->is_null()) return true;
    if (content->is_string()) {
        m.parts.push_back(part::of_text(std::string(content->as_string())));
        return true;
    }
    if (!content->is_array()) return fail(f, at, "must be a string or an array of parts");
    const auto& parts = content->as_array();
    for (std::size_t j = 0; j < parts.size(); ++j) {
        auto pat = at + "[" + std::to_string(j) + "]";
        const auto* p = parts[j].if_object();
        if (!p) return fail(f, pat, "must be an object");
        auto type = string_of(p->if_contains("type"));
        if (type == "input_text" || type == "output_text" || type == "text") {
            m.parts.push_back(part::of_text(string_of(p->if_contains("text"))));
        } else if (type == "refusal") {
            m.parts.push_back(part::of_text(string_of(p->if_contains("refusal"))));
        } else if (type == "input_image") {
            auto url = string_of(p->if_contains("image_url"));
            if (url.empty())
                return fail(f, pat + ".image_url", "is required (file ids cannot be translated)");
            m.parts.push_back(part::of_image(std::move(url)));
        } else {
            return fail(f, pat + ".type",
                        "`" + type + "` content cannot be translated for this model's provider");
        }
    }
    return true;
}

// An output item's text (function_call_output's `output`: a string or parts).
std::string output_text(const json::value* output) {
    if (!output) return {};
    if (output->is_string()) return std::string(output->as_string());
    std::string text;
    if (output->is_array())
        for (const auto& p : output->as_array())
            if (const auto* o = p.if_object()) text += string_of(o->if_contains("text"));
    return text;
}

// Appends `p` to the last message when it has role `who`, else to a new one.
void add_part(request& out, role who, part p) {
    if (out.messages.empty() || out.messages.back().who != who)
        out.messages.push_back(message{who, {}});
    out.messages.back().parts.push_back(std::move(p));
}

bool read_input(const json::value* input, request& out, parse_failure& f) {
    if (!input) return fail(f, "input", "is required");
    if (input->is_string()) {
        out.messages.push_back(message::of_text(role::user, std::string(input->as_string())));
        return true;
    }
    if (!input->is_array()) return fail(f, "input", "must be a string or an array of items");
    std::unordered_map<std::string, std::string> call_names;  // echoed call_id -> name
    const auto& items = input->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto at = "input[" + std::to_string(i) + "]";
        const auto* item = items[i].if_object();
        if (!item) return fail(f, at, "must be an object");
        auto type = string_of(item->if_contains("type"));
        if (type.empty() && item->contains("role")) type = "message";
        if (type == "message") {
            auto who = string_of(item->if_contains("role"));
            if (who == "system" || who == "developer") {
                message m;
                if (!read_content(item->if_contains("content"), at + ".content", m, f))
                    return false;
                if (!out.system.empty()) out.system += "\n\n";
                out.system += m.text();
            } else if (who == "user" || who == "assistant") {
                message m{who == "user" ? role::user : role::assistant, {}};
                if (!read_content(item->if_contains("content"), at + ".content", m, f))
                    return false;
                for (auto& p : m.parts) add_part(out, m.who, std::move(p));
            } else {
                return fail(f, at + ".role", "`" + who + "` messages cannot be translated");
            }
        } else if (type == "function_call" || type == "custom_tool_call") {
            tool_call c;
            auto echoed = string_of(item->if_contains("call_id"));
            json::object carried;
            c.id = openai::id_without_state(echoed, carried);
            c.provider_meta = std::move(carried);
            c.name = string_of(item->if_contains("name"));
            if (c.name.empty()) return fail(f, at + ".name", "is required");
            if (type == "function_call") {
                auto args = detail::arguments_object(string_of(item->if_contains("arguments")));
                if (!args) return fail(f, at + ".arguments", "must be a JSON object text");
                c.arguments = std::move(*args);
            } else {
                c.arguments = {{freeform_input, string_of(item->if_contains("input"))}};
            }
            call_names[echoed] = c.name;
            add_part(out, role::assistant, part::of_call(std::move(c)));
        } else if (type == "function_call_output" || type == "custom_tool_call_output") {
            tool_result r;
            auto echoed = string_of(item->if_contains("call_id"));
            json::object carried;
            r.call_id = openai::id_without_state(echoed, carried);
            auto named = call_names.find(echoed);
            if (named == call_names.end())
                return fail(f, at + ".call_id",
                            "`" + echoed + "` answers no call of an earlier item");
            r.name = named->second;
            r.content = output_text(item->if_contains("output"));
            out.messages.push_back(message{role::tool, {part::of_result(std::move(r))}});
        } else if (type == "reasoning") {
            // A provider's reasoning is never replayed to another provider.
        } else {
            return fail(f, at + ".type",
                        "`" + type + "` items cannot be translated for this model's provider");
        }
    }
    return true;
}

// A function or custom tool the target is given (`group`: the namespace it came in).
bool read_tool(const json::object& t, const std::string& at, const std::string& group, request& out,
               parse_failure& f) {
    auto type = string_of(t.if_contains("type"));
    tool_spec spec;
    spec.name = string_of(t.if_contains("name"));
    spec.description = string_of(t.if_contains("description"));
    spec.group = group;
    if (type == "function") {
        if (const auto* p = t.if_contains("parameters"); p && p->is_object())
            spec.parameters = p->as_object();
        else
            spec.parameters = {{"type", "object"}, {"properties", json::object{}}};
    } else if (type == "custom") {
        // Grammar formats are left to the tool's description: the target has none.
        spec.freeform = true;
        spec.parameters = freeform_parameters();
    } else if (type == "namespace" && group.empty()) {
        const auto* tools = t.if_contains("tools");
        if (!tools || !tools->is_array()) return fail(f, at + ".tools", "must be an array");
        const auto& list = tools->as_array();
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto* nested = list[i].if_object();
            if (!nested)
                return fail(f, at + ".tools[" + std::to_string(i) + "]", "must be an object");
            if (!read_tool(*nested, at + ".tools[" + std::to_string(i) + "]", spec.name, out, f))
                return false;
        }
        return true;
    } else {
        // OpenAI's hosted tools (web search, file search, code interpreter, …) run on its
        // servers: the target is not offered them (docs/providers.md).
        return true;
    }
    if (spec.name.empty()) return fail(f, at + ".name", "is required");
    out.tools.push_back(std::move(spec));
    return true;
}

bool read_tools(const json::object& o, request& out, parse_failure& f) {
    return detail::for_each_object(
        o, "tools", f,
        [&](const json::object& t, const std::string& at) { return read_tool(t, at, "", out, f); });
}

bool read_tool_choice(const json::object& o, request& out, parse_failure& f) {
    const auto* choice = o.if_contains("tool_choice");
    if (!choice || choice->is_null()) return true;
    auto mode = string_of(choice);
    if (mode == "auto") {
        out.choice = tool_choice::automatic;
    } else if (mode == "none") {
        out.choice = tool_choice::none;
    } else if (mode == "required") {
        out.choice = tool_choice::required;
    } else if (choice->is_object() && !string_of(choice->as_object().if_contains("name")).empty()) {
        out.choice = tool_choice::named;
        out.choice_name = string_of(choice->as_object().if_contains("name"));
    } else {
        return fail(f, "tool_choice", "must be auto, none, required or a named tool");
    }
    return true;
}

bool parse_responses(std::string_view body, request& out, parse_failure& f) {
    auto v = detail::parse_body(body, f);
    if (!v) return false;
    const auto& o = v->as_object();
    if (const auto* prev = o.if_contains("previous_response_id"); prev && !prev->is_null())
        return fail(f, "previous_response_id",
                    "cannot be used with this model: the gateway keeps no responses for its "
                    "provider; send the whole conversation in `input` (store: false)");
    if (const auto* bg = o.if_contains("background"); bg && *bg == json::value(true))
        return fail(f, "background", "cannot be translated for this model's provider");
    if (const auto* conv = o.if_contains("conversation"); conv && !conv->is_null())
        return fail(f, "conversation",
                    "cannot be used with this model: the gateway keeps no "
                    "conversations for its provider");
    if (const auto* prompt = o.if_contains("prompt"); prompt && !prompt->is_null())
        return fail(f, "prompt", "stored prompts cannot be used with this model's provider");
    out.model = string_of(o.if_contains("model"));
    if (out.model.empty()) return missing(f, "model", "is required");
    out.system = string_of(o.if_contains("instructions"));
    if (!read_input(o.if_contains("input"), out, f)) return false;
    if (out.messages.empty()) return fail(f, "input", "holds no message");
    if (!read_tools(o, out, f) || !read_tool_choice(o, out, f)) return false;
    if (const auto* p = o.if_contains("parallel_tool_calls"); p && p->is_bool())
        out.parallel_tool_calls = p->as_bool();
    if (!detail::read_integer(o.if_contains("max_output_tokens"), "max_output_tokens", 0,
                              detail::max_requested_tokens, out.max_tokens, f) ||
        !detail::read_number(o.if_contains("temperature"), "temperature", out.temperature, f) ||
        !detail::read_number(o.if_contains("top_p"), "top_p", out.top_p, f))
        return false;
    if (const auto* r = o.if_contains("reasoning"); r && r->is_object())
        out.reasoning_effort = string_of(r->as_object().if_contains("effort"));
    if (out.reasoning_effort == "none" || out.reasoning_effort == "minimal")
        out.reasoning_effort.clear();
    if (const auto* text = o.if_contains("text"); text && text->is_object())
        if (const auto* format = text->as_object().if_contains("format");
            format && format->is_object()) {
            const auto& fo = format->as_object();
            auto type = string_of(fo.if_contains("type"));
            if (type == "json_schema") {
                json_format jf;
                jf.name = string_of(fo.if_contains("name"));
                if (const auto* s = fo.if_contains("schema"); s && s->is_object())
                    jf.schema = s->as_object();
                if (const auto* strict = fo.if_contains("strict"); strict && strict->is_bool())
                    jf.strict = strict->as_bool();
                out.format = std::move(jf);
            } else if (type != "text" && !type.empty()) {
                return fail(f, "text.format.type",
                            "`" + type + "` cannot be translated for this model's provider");
            }
        }
    out.stream = o.if_contains("stream") && *o.if_contains("stream") == json::value(true);
    out.include_usage = true;
    return true;
}

const tool_spec* declared(const request& r, std::string_view name) {
    for (const auto& t : r.tools)
        if (t.name == name) return &t;
    return nullptr;
}

bool is_freeform(const request& r, std::string_view name) {
    const auto* t = declared(r, name);
    return t && t->freeform;
}

json::object usage_json(const usage& u) {
    return {{"input_tokens", u.input},
            {"input_tokens_details", {{"cached_tokens", u.cache_read}}},
            {"output_tokens", u.output},
            {"output_tokens_details", {{"reasoning_tokens", u.reasoning}}},
            {"total_tokens", u.input + u.output}};
}

// The error `code` Responses clients act on (Codex: context_length_exceeded ends the turn,
// rate_limit_exceeded waits, insufficient_quota stops).
json::value error_code_for(const provider_error& e) {
    if (e.type == "insufficient_quota") return "insufficient_quota";
    if (e.status == 429) return "rate_limit_exceeded";
    if (e.status == 400 || e.status == 413) {
        auto m = e.message;
        for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (m.find("context") != std::string::npos || m.find("too long") != std::string::npos ||
            m.find("too many tokens") != std::string::npos)
            return "context_length_exceeded";
    }
    if (e.status >= 500) return "server_error";
    return nullptr;
}

// How the response ended: its status and, when incomplete, why.
std::pair<std::string_view, json::value> outcome(finish why) {
    if (why == finish::length) return {"incomplete", json::object{{"reason", "max_output_tokens"}}};
    if (why == finish::content_filter)
        return {"incomplete", json::object{{"reason", "content_filter"}}};
    return {"completed", nullptr};
}

// The output items of a reply, in order, with the ids `ids` gives them.
struct item_ids {
    std::string base;
    std::size_t next = 0;
    std::string make(std::string_view prefix) {
        return std::string(prefix) + base + "_" + std::to_string(next++);
    }
};

json::object message_item(std::string id, const std::string& text, std::string_view status) {
    return {{"id", std::move(id)},
            {"type", "message"},
            {"status", status},
            {"role", "assistant"},
            {"content", json::array{json::object{{"type", "output_text"},
                                                 {"text", text},
                                                 {"annotations", json::array{}},
                                                 {"logprobs", json::array{}}}}}};
}

json::object reasoning_item(std::string id, const std::string& text) {
    json::array summary;
    if (!text.empty()) summary.push_back({{"type", "summary_text"}, {"text", text}});
    return {{"id", std::move(id)}, {"type", "reasoning"}, {"summary", std::move(summary)}};
}

json::object call_item(std::string id, const std::string& call_id, const std::string& name,
                       const std::string& arguments, const request& asked,
                       std::string_view status) {
    const auto* tool = declared(asked, name);
    json::object item;
    if (tool && tool->freeform) {
        auto args = detail::arguments_object(arguments);
        auto input = args ? string_of(args->if_contains(freeform_input)) : std::string();
        item = {{"id", std::move(id)}, {"type", "custom_tool_call"},
                {"status", status},    {"call_id", call_id},
                {"name", name},        {"input", input}};
    } else {
        item = {{"id", std::move(id)}, {"type", "function_call"},
                {"status", status},    {"call_id", call_id},
                {"name", name},        {"arguments", arguments}};
    }
    if (tool && !tool->group.empty()) item["namespace"] = tool->group;
    return item;
}

json::object response_json(const answer_names& names, const request& r, std::string_view status,
                           json::array output, const json::value& incomplete,
                           const json::value& error, const usage* used) {
    json::object o{{"id", names.id},
                   {"object", "response"},
                   {"created_at", names.created},
                   {"status", status},
                   {"error", error},
                   {"incomplete_details", incomplete},
                   {"instructions", nullptr},
                   {"max_output_tokens", r.max_tokens ? json::value(*r.max_tokens) : nullptr},
                   {"model", names.model},
                   {"output", std::move(output)},
                   {"parallel_tool_calls", r.parallel_tool_calls.value_or(true)},
                   {"store", false},
                   {"tool_choice", "auto"},
                   {"tools", json::array{}}};
    o["usage"] = used ? json::value(usage_json(*used)) : json::value(nullptr);
    return o;
}

// Responses' event stream: response.created and in_progress, each output item added, filled,
// done, then response.completed (or incomplete) with the whole response; every event numbered.
class responses_writer final : public block_writer {
public:
    responses_writer(answer_names names, const request& r) : names_(std::move(names)), request_(r) {
        ids_.base = names_.id.substr(names_.id.find('_') + 1);
    }

    void failed(const provider_error& e, std::string& out) override {
        json::object error{
            {"code", error_code_for(e).is_null() ? json::value("server_error") : error_code_for(e)},
            {"message", e.message}};
        emit("response.failed",
             {{"response",
               response_json(names_, request_, "failed", output_, nullptr, error, nullptr)}},
             out);
    }

protected:
    void begin(const stream_delta&, std::string& out) override {
        auto empty = response_json(names_, request_, "in_progress", {}, nullptr, nullptr, nullptr);
        emit("response.created", {{"response", empty}}, out);
        emit("response.in_progress", {{"response", empty}}, out);
    }
    void open(block b, const stream_delta& d, std::string& out) override {
        text_.clear();
        json::object item;
        switch (b) {
            case block::text:
                item_id_ = ids_.make("msg_");
                item = {{"id", item_id_},
                        {"type", "message"},
                        {"status", "in_progress"},
                        {"role", "assistant"},
                        {"content", json::array{}}};
                break;
            case block::reasoning:
                item_id_ = ids_.make("rs_");
                item = {{"id", item_id_}, {"type", "reasoning"}, {"summary", json::array{}}};
                break;
            case block::call:
                item_id_ = ids_.make(is_freeform(request_, d.name) ? "ctc_" : "fc_");
                call_id_ = openai::id_with_state(d.id, d.provider_meta);
                call_name_ = d.name;
                freeform_ = is_freeform(request_, d.name);
                item = call_item(item_id_, call_id_, call_name_, "", request_, "in_progress");
                break;
            case block::none:
                return;
        }
        emit("response.output_item.added", {{"output_index", output_.size()}, {"item", item}}, out);
        if (b == block::text)
            emit(
                "response.content_part.added",
                {{"item_id", item_id_},
                 {"output_index", output_.size()},
                 {"content_index", 0},
                 {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", json::array{}}}}},
                out);
        else if (b == block::reasoning)
            emit("response.reasoning_summary_part.added",
                 {{"item_id", item_id_},
                  {"output_index", output_.size()},
                  {"summary_index", 0},
                  {"part", {{"type", "summary_text"}, {"text", ""}}}},
                 out);
    }
    void append(block b, const std::string& text, std::string& out) override {
        text_ += text;
        auto at = output_.size();
        if (b == block::text)
            emit("response.output_text.delta",
                 {{"item_id", item_id_},
                  {"output_index", at},
                  {"content_index", 0},
                  {"delta", text},
                  {"logprobs", json::array{}}},
                 out);
        else if (b == block::reasoning)
            emit("response.reasoning_summary_text.delta",
                 {{"item_id", item_id_},
                  {"output_index", at},
                  {"summary_index", 0},
                  {"delta", text}},
                 out);
        else if (!freeform_)  // a freeform call's raw text is known once its JSON is whole
            emit("response.function_call_arguments.delta",
                 {{"item_id", item_id_}, {"output_index", at}, {"delta", text}}, out);
    }
    void close(block b, std::string& out) override {
        auto at = output_.size();
        json::object item;
        if (b == block::text) {
            json::object part{{"type", "output_text"},
                              {"text", text_},
                              {"annotations", json::array{}},
                              {"logprobs", json::array{}}};
            emit("response.output_text.done",
                 {{"item_id", item_id_},
                  {"output_index", at},
                  {"content_index", 0},
                  {"text", text_},
                  {"logprobs", json::array{}}},
                 out);
            emit(
                "response.content_part.done",
                {{"item_id", item_id_}, {"output_index", at}, {"content_index", 0}, {"part", part}},
                out);
            item = message_item(item_id_, text_, "completed");
        } else if (b == block::reasoning) {
            emit("response.reasoning_summary_text.done",
                 {{"item_id", item_id_},
                  {"output_index", at},
                  {"summary_index", 0},
                  {"text", text_}},
                 out);
            emit("response.reasoning_summary_part.done",
                 {{"item_id", item_id_},
                  {"output_index", at},
                  {"summary_index", 0},
                  {"part", {{"type", "summary_text"}, {"text", text_}}}},
                 out);
            item = reasoning_item(item_id_, text_);
        } else {
            if (text_.empty() && !freeform_)  // a call without arguments (Anthropic's) has {}
                append(block::call, "{}", out);
            auto arguments = text_.empty() ? std::string("{}") : text_;
            item = call_item(item_id_, call_id_, call_name_, arguments, request_, "completed");
            if (freeform_) {
                auto input = string_of(item.if_contains("input"));
                emit("response.custom_tool_call_input.delta",
                     {{"item_id", item_id_}, {"output_index", at}, {"delta", input}}, out);
                emit("response.custom_tool_call_input.done",
                     {{"item_id", item_id_}, {"output_index", at}, {"input", input}}, out);
            } else {
                emit("response.function_call_arguments.done",
                     {{"item_id", item_id_}, {"output_index", at}, {"arguments", arguments}}, out);
            }
        }
        emit("response.output_item.done", {{"output_index", at}, {"item", item}}, out);
        output_.push_back(std::move(item));
    }
    void end(const stream_delta& d, std::string& out) override {
        auto [status, incomplete] = outcome(d.why);
        auto type = status == "completed" ? "response.completed" : "response.incomplete";
        emit(type,
             {{"response",
               response_json(names_, request_, status, output_, incomplete, nullptr, &d.used)}},
             out);
    }

private:
    void emit(std::string_view type, const json::object& data, std::string& out) {
        json::object o{{"type", type}, {"sequence_number", sequence_++}};
        for (const auto& field : data) o.emplace(field.key(), field.value());
        out.append("event: ").append(type).append("\ndata: ");
        out.append(json::serialize(o)).append("\n\n");
    }

    answer_names names_;
    request request_;
    item_ids ids_;
    json::array output_;
    std::string item_id_;
    std::string text_;
    std::string call_id_;
    std::string call_name_;
    bool freeform_ = false;
    std::int64_t sequence_ = 0;
};

class responses_ingress final : public ingress {
public:
    bool parse(std::string_view body, request& out, parse_failure& failure) const override {
        return parse_responses(body, out, failure);
    }
    std::string answer(const reply& r, const answer_names& names,
                       const request& asked) const override {
        item_ids ids{names.id.substr(names.id.find('_') + 1)};
        json::array output;
        for (const auto& p : r.content.parts) {
            if (p.what == part::kind::reasoning)
                output.push_back(reasoning_item(ids.make("rs_"), p.text));
            else if (p.what == part::kind::text && !p.text.empty())
                output.push_back(message_item(ids.make("msg_"), p.text, "completed"));
            else if (p.what == part::kind::tool_call) {
                bool freeform = is_freeform(asked, p.call.name);
                output.push_back(call_item(ids.make(freeform ? "ctc_" : "fc_"),
                                           openai::id_with_state(p.call.id, p.call.provider_meta),
                                           p.call.name, json::serialize(p.call.arguments), asked,
                                           "completed"));
            }
        }
        auto [status, incomplete] = outcome(r.why);
        return json::serialize(
            response_json(names, asked, status, std::move(output), incomplete, nullptr, &r.used));
    }
    std::unique_ptr<event_writer> writer(const answer_names& names,
                                         const request& r) const override {
        return std::make_unique<responses_writer>(names, r);
    }
    std::string error_body(const provider_error& e) const override {
        return json::serialize(json::object{{"error",
                                             {{"message", e.message},
                                              {"type", e.type},
                                              {"param", nullptr},
                                              {"code", error_code_for(e)}}}});
    }
    std::string refusal(const parse_failure& f) const override {
        return detail::unsupported_parameter(f);
    }
    std::string_view id_prefix() const override { return "resp_"; }
};

}  // namespace

const ingress& responses() {
    static const responses_ingress instance;
    return instance;
}

}  // namespace gateway::providers
