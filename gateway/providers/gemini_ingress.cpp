// Gemini's generateContent as a client speaks it (Gemini CLI, @google/genai), answered from an
// OpenAI-compatible or Anthropic target (docs/providers.md, "Directions").
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/openai.hpp"

#include <boost/json/serialize.hpp>

#include <cctype>
#include <deque>
#include <unordered_map>
#include <vector>

namespace gateway::providers {

namespace {

using detail::fail;
using detail::number_of;
using detail::string_of;

// Gemini's OpenAPI-subset schema as JSON Schema: its upper-case type names ("OBJECT") in lower
// case, everywhere in the schema; the rest is the same vocabulary.
json::value json_schema_of(const json::value& v, int depth = 0) {
    if (depth > 64) return v;
    if (v.is_array()) {
        json::array out;
        for (const auto& item : v.as_array()) out.push_back(json_schema_of(item, depth + 1));
        return out;
    }
    if (!v.is_object()) return v;
    json::object out;
    for (const auto& [key, value] : v.as_object()) {
        if (key == "type" && value.is_string()) {
            std::string type(value.as_string());
            for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            out[key] = type;
        } else {
            out[key] = json_schema_of(value, depth + 1);
        }
    }
    return out;
}

// A function response's `response` as the result's text: its `output` or `content` when that is
// all it says (Gemini CLI sends {"output": …}), its `error` (a failed call), else its JSON.
void read_response(const json::value* response, tool_result& r) {
    if (!response || !response->is_object()) {
        r.content = response ? json::serialize(*response) : "";
        return;
    }
    const auto& o = response->as_object();
    if (o.size() == 1) {
        for (auto key : {"output", "content", "result"})
            if (const auto* v = o.if_contains(key)) {
                r.content = v->is_string() ? std::string(v->as_string()) : json::serialize(*v);
                return;
            }
        if (const auto* e = o.if_contains("error")) {
            r.is_error = true;
            r.content = e->is_string() ? std::string(e->as_string()) : json::serialize(*e);
            return;
        }
    }
    r.content = json::serialize(o);
}

bool read_contents(const json::value* contents, request& out, parse_failure& f) {
    if (!contents || !contents->is_array() || contents->as_array().empty())
        return fail(f, "contents", "must be a non-empty array");
    // Calls are matched to their responses by id, or by name in order when they have none. Each
    // lookup is O(1) amortized (a response body can name tens of thousands of calls): a call
    // enters its name's queue once and leaves it once, answered ones skipped as they come up.
    struct open_call {
        std::string id;
        std::string name;
        bool answered = false;
    };
    std::vector<open_call> calls;
    std::unordered_map<std::string, std::size_t> call_by_id;  // the latest call with that id
    std::unordered_map<std::string, std::deque<std::size_t>> open_by_name;  // oldest first
    const auto& list = contents->as_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto at = "contents[" + std::to_string(i) + "]";
        const auto* c = list[i].if_object();
        if (!c) return fail(f, at, "must be an object");
        auto who = string_of(c->if_contains("role"));
        if (who.empty()) who = "user";
        if (who != "user" && who != "model") return fail(f, at + ".role", "must be user or model");
        bool model = who == "model";
        const auto* parts = c->if_contains("parts");
        if (!parts || !parts->is_array()) return fail(f, at + ".parts", "must be an array");
        message said{model ? role::assistant : role::user, {}};
        std::vector<message> results;
        const auto& pl = parts->as_array();
        for (std::size_t j = 0; j < pl.size(); ++j) {
            auto pat = at + ".parts[" + std::to_string(j) + "]";
            const auto* p = pl[j].if_object();
            if (!p) return fail(f, pat, "must be an object");
            if (const auto* thought = p->if_contains("thought");
                thought && thought->is_bool() && thought->as_bool())
                continue;  // a model's thoughts are never replayed to another provider
            if (const auto* text = p->if_contains("text"); text && text->is_string()) {
                said.parts.push_back(part::of_text(std::string(text->as_string())));
            } else if (const auto* inline_data = p->if_contains("inlineData");
                       inline_data && inline_data->is_object()) {
                auto mime = string_of(inline_data->as_object().if_contains("mimeType"));
                auto data = string_of(inline_data->as_object().if_contains("data"));
                if (!mime.starts_with("image/"))
                    return fail(f, pat + ".inlineData.mimeType",
                                "only images can be translated for this model's provider");
                said.parts.push_back(part::of_image("data:" + mime + ";base64," + data));
            } else if (const auto* file = p->if_contains("fileData"); file && file->is_object()) {
                auto mime = string_of(file->as_object().if_contains("mimeType"));
                auto uri = string_of(file->as_object().if_contains("fileUri"));
                if (!mime.starts_with("image/") || !uri.starts_with("https://"))
                    return fail(f, pat + ".fileData",
                                "only images by https URL can be translated for this model's "
                                "provider");
                said.parts.push_back(part::of_image(uri));
            } else if (const auto* fc = p->if_contains("functionCall");
                       fc && fc->is_object() && model) {
                const auto& call = fc->as_object();
                tool_call tc;
                tc.name = string_of(call.if_contains("name"));
                if (tc.name.empty()) return fail(f, pat + ".functionCall.name", "is required");
                auto echoed = string_of(call.if_contains("id"));
                if (echoed.empty()) echoed = "call_" + std::to_string(i) + "_" + std::to_string(j);
                json::object carried;
                tc.id = openai::id_without_state(echoed, carried);
                tc.provider_meta = std::move(carried);
                if (const auto* args = call.if_contains("args"); args && args->is_object())
                    tc.arguments = args->as_object();
                call_by_id[echoed] = calls.size();
                open_by_name[tc.name].push_back(calls.size());
                calls.push_back({echoed, tc.name});
                said.parts.push_back(part::of_call(std::move(tc)));
            } else if (const auto* fr = p->if_contains("functionResponse");
                       fr && fr->is_object() && !model) {
                const auto& response = fr->as_object();
                tool_result r;
                r.name = string_of(response.if_contains("name"));
                auto echoed = string_of(response.if_contains("id"));
                auto known = echoed.empty() ? call_by_id.end() : call_by_id.find(echoed);
                std::size_t answered = 0;
                if (known != call_by_id.end()) {
                    answered = known->second;
                } else {
                    // No id (or one no call had): the oldest unanswered call of that name.
                    auto open = open_by_name.find(r.name);
                    auto* queue = open == open_by_name.end() ? nullptr : &open->second;
                    while (queue && !queue->empty() && calls[queue->front()].answered)
                        queue->pop_front();
                    if (!queue || queue->empty())
                        return fail(f, pat + ".functionResponse",
                                    "`" + r.name + "` answers no functionCall of an earlier turn");
                    answered = queue->front();
                    queue->pop_front();
                }
                calls[answered].answered = true;
                json::object carried;
                r.call_id = openai::id_without_state(calls[answered].id, carried);
                r.name = calls[answered].name;
                read_response(response.if_contains("response"), r);
                results.push_back(message{role::tool, {part::of_result(std::move(r))}});
            } else {
                return fail(f, pat, "this part cannot be translated for this model's provider");
            }
        }
        for (auto& r : results) out.messages.push_back(std::move(r));
        if (!said.parts.empty()) out.messages.push_back(std::move(said));
    }
    if (out.messages.empty()) return fail(f, "contents", "holds nothing to send");
    return true;
}

bool read_tools(const json::object& o, request& out, parse_failure& f) {
    // Google's own tools (googleSearch, codeExecution, urlContext) run on its servers: the
    // target is not offered them (docs/providers.md).
    return detail::for_each_object(
        o, "tools", f, [&](const json::object& t, const std::string& at) {
            parse_failure nested;
            bool ok = detail::for_each_object(
                t, "functionDeclarations", nested,
                [&](const json::object& d, const std::string& dat_in) {
                    tool_spec spec;
                    spec.name = string_of(d.if_contains("name"));
                    spec.description = string_of(d.if_contains("description"));
                    if (spec.name.empty()) return fail(nested, dat_in + ".name", "is required");
                    const auto* schema = d.if_contains("parametersJsonSchema");
                    if (!schema) schema = d.if_contains("parameters");
                    if (schema && schema->is_object()) {
                        auto converted = json_schema_of(*schema);
                        spec.parameters = converted.as_object();
                    } else {
                        spec.parameters = {{"type", "object"}, {"properties", json::object{}}};
                    }
                    out.tools.push_back(std::move(spec));
                    return true;
                });
            if (!ok) fail(f, nested.param.empty() ? at : at + "." + nested.param, nested.message);
            return ok;
        });
}

bool read_tool_config(const json::object& o, request& out, parse_failure& f) {
    const auto* config = o.if_contains("toolConfig");
    if (!config || !config->is_object()) return true;
    const auto* calling = config->as_object().if_contains("functionCallingConfig");
    if (!calling || !calling->is_object()) return true;
    const auto& c = calling->as_object();
    auto mode = string_of(c.if_contains("mode"));
    if (mode.empty() || mode == "AUTO" || mode == "MODE_UNSPECIFIED") {
        out.choice = tool_choice::automatic;
    } else if (mode == "NONE") {
        out.choice = tool_choice::none;
    } else if (mode == "ANY" || mode == "VALIDATED") {
        out.choice = tool_choice::required;
        // One allowed name is a named choice; several can only be "some tool" elsewhere.
        if (const auto* names = c.if_contains("allowedFunctionNames");
            names && names->is_array() && names->as_array().size() == 1 &&
            names->as_array()[0].is_string()) {
            out.choice = tool_choice::named;
            out.choice_name = names->as_array()[0].as_string();
        }
    } else {
        return fail(f, "toolConfig.functionCallingConfig.mode", "must be AUTO, ANY or NONE");
    }
    return true;
}

bool read_generation(const json::object& o, request& out, parse_failure& f) {
    const auto* config = o.if_contains("generationConfig");
    if (!config || !config->is_object()) return true;
    const auto& g = config->as_object();
    if (auto n = number_of(g.if_contains("candidateCount")); n && *n > 1)
        return fail(f, "generationConfig.candidateCount",
                    "only one candidate can be translated for this model's provider");
    if (const auto* l = g.if_contains("responseLogprobs"); l && *l == json::value(true))
        return fail(f, "generationConfig.responseLogprobs",
                    "log probabilities are not available from this model's provider");
    if (const auto* m = g.if_contains("responseModalities"); m && m->is_array())
        for (const auto& v : m->as_array())
            if (v != json::value("TEXT"))
                return fail(f, "generationConfig.responseModalities",
                            "only text output can be translated for this model's provider");
    if (!detail::read_integer(g.if_contains("maxOutputTokens"), "generationConfig.maxOutputTokens",
                              0, detail::max_requested_tokens, out.max_tokens, f) ||
        !detail::read_number(g.if_contains("temperature"), "generationConfig.temperature",
                             out.temperature, f) ||
        !detail::read_number(g.if_contains("topP"), "generationConfig.topP", out.top_p, f))
        return false;
    if (const auto* stop = g.if_contains("stopSequences"); stop && stop->is_array())
        for (const auto& s : stop->as_array())
            if (s.is_string()) out.stop.push_back(std::string(s.as_string()));
    if (string_of(g.if_contains("responseMimeType")) == "application/json") {
        const auto* schema = g.if_contains("responseJsonSchema");
        if (!schema) schema = g.if_contains("responseSchema");
        if (schema && schema->is_object()) {
            json_format jf;
            jf.name = "answer";
            jf.schema = json_schema_of(*schema).as_object();
            out.format = std::move(jf);
        }
    }
    if (const auto* thinking = g.if_contains("thinkingConfig"); thinking && thinking->is_object()) {
        // -1: Gemini's dynamic thinking, which other providers have no budget for.
        std::optional<std::int64_t> budget;
        if (!detail::read_integer(thinking->as_object().if_contains("thinkingBudget"),
                                  "generationConfig.thinkingConfig.thinkingBudget", -1,
                                  detail::max_requested_tokens, budget, f))
            return false;
        if (budget && *budget > 0) out.reasoning_budget = budget;
    }
    return true;
}

bool parse_generate(std::string_view body, request& out, parse_failure& f) {
    auto v = detail::parse_body(body, f);
    if (!v) return false;
    const json::object* o = &v->as_object();
    // countTokens may wrap a whole request.
    if (const auto* wrapped = o->if_contains("generateContentRequest");
        wrapped && wrapped->is_object())
        o = &wrapped->as_object();
    if (const auto* cached = o->if_contains("cachedContent"); cached && !cached->is_null())
        return fail(f, "cachedContent",
                    "Gemini's cached contents cannot be used with this model's provider");
    if (const auto* system = o->if_contains("systemInstruction"); system && system->is_object())
        if (const auto* parts = system->as_object().if_contains("parts");
            parts && parts->is_array())
            for (const auto& p : parts->as_array())
                if (const auto* po = p.if_object()) {
                    auto text = string_of(po->if_contains("text"));
                    if (text.empty()) continue;
                    if (!out.system.empty()) out.system += "\n\n";
                    out.system += text;
                }
    if (!read_contents(o->if_contains("contents"), out, f)) return false;
    if (!read_tools(*o, out, f) || !read_tool_config(*o, out, f)) return false;
    if (!read_generation(*o, out, f)) return false;
    out.include_usage = true;
    return true;  // safetySettings and labels only annotate: left out
}

std::string_view finish_reason(finish why) {
    switch (why) {
        case finish::length:
            return "MAX_TOKENS";
        case finish::content_filter:
            return "SAFETY";
        case finish::error:
            return "OTHER";
        default:
            return "STOP";
    }
}

std::string_view status_name(unsigned status) {
    switch (status) {
        case 400:
        case 413:
            return "INVALID_ARGUMENT";
        case 401:
            return "UNAUTHENTICATED";
        case 403:
            return "PERMISSION_DENIED";
        case 404:
            return "NOT_FOUND";
        case 408:
        case 504:
            return "DEADLINE_EXCEEDED";
        case 429:
            return "RESOURCE_EXHAUSTED";
        case 503:
        case 529:
            return "UNAVAILABLE";
        default:
            return "INTERNAL";
    }
}

json::object error_json(unsigned status, std::string_view message) {
    return {{"error", {{"code", status}, {"message", message}, {"status", status_name(status)}}}};
}

json::object usage_json(const usage& u) {
    // Thoughts apart from the candidates, cached content part of the prompt, as Gemini says them.
    json::object out{{"promptTokenCount", u.input},
                     {"candidatesTokenCount", u.output - u.reasoning},
                     {"totalTokenCount", u.input + u.output}};
    if (u.cache_read > 0) out["cachedContentTokenCount"] = u.cache_read;
    if (u.reasoning > 0) out["thoughtsTokenCount"] = u.reasoning;
    return out;
}

json::object call_part(const std::string& id, const std::string& name,
                       const json::object& provider_meta, json::object args) {
    return {{"functionCall",
             {{"id", openai::id_with_state(id, provider_meta)},
              {"name", name},
              {"args", std::move(args)}}}};
}

// Gemini's stream: one GenerateContentResponse per event. Text and thoughts go out as they come;
// a call goes out whole in one part once its arguments are (at the next part or the end).
class generate_writer final : public event_writer {
public:
    generate_writer(answer_names names, bool sse) : names_(std::move(names)), sse_(sse) {}

    void frames(const stream_delta& d, std::string& out) override {
        if (ended_) return;
        switch (d.what) {
            case stream_delta::kind::started:
                return;
            case stream_delta::kind::text:
            case stream_delta::kind::reasoning: {
                if (d.text.empty()) return;
                flush_call(out);
                json::object part{{"text", d.text}};
                if (d.what == stream_delta::kind::reasoning) part["thought"] = true;
                emit(json::array{std::move(part)}, out);
                return;
            }
            case stream_delta::kind::call_started:
                flush_call(out);
                call_ = pending{d.index, d.id, d.name, d.provider_meta, ""};
                return;
            case stream_delta::kind::call_arguments:
                if (call_ && call_->index == d.index) {
                    call_->arguments += d.text;
                } else if (!d.text.empty()) {
                    ended_ = true;
                    failed(detail::interleaved(d.index), out);
                }
                return;
            case stream_delta::kind::finished: {
                json::array parts;
                if (call_) parts.push_back(take_call());
                if (parts.empty()) parts.push_back(json::object{{"text", ""}});
                emit(std::move(parts), out, finish_reason(d.why), &d.used);
                ended_ = true;
                if (!sse_) out += "]";
                return;
            }
        }
    }

    void failed(const provider_error& e, std::string& out) override {
        ended_ = true;
        frame(json::serialize(error_json(e.status >= 400 ? e.status : 500, e.message)), out);
        if (!sse_) out += "]";
    }

    std::string_view content_type() const override {
        return sse_ ? "text/event-stream; charset=utf-8" : "application/json; charset=utf-8";
    }

private:
    struct pending {
        std::size_t index;
        std::string id;
        std::string name;
        json::object provider_meta;
        std::string arguments;
    };

    json::object take_call() {
        auto args = detail::arguments_object(call_->arguments);
        auto part = call_part(call_->id, call_->name, call_->provider_meta,
                              args ? std::move(*args) : json::object{});
        call_.reset();
        return part;
    }
    void flush_call(std::string& out) {
        if (call_) emit(json::array{take_call()}, out);
    }
    // One response; the last names why the answer finished and its usage.
    void emit(json::array parts, std::string& out, std::string_view finish = {},
              const usage* used = nullptr) {
        json::object candidate{{"content", {{"parts", std::move(parts)}, {"role", "model"}}},
                               {"index", 0}};
        if (!finish.empty()) candidate["finishReason"] = finish;
        json::object response{{"candidates", json::array{std::move(candidate)}},
                              {"modelVersion", names_.model},
                              {"responseId", names_.id}};
        if (used) response["usageMetadata"] = usage_json(*used);
        frame(json::serialize(response), out);
    }
    // One element of the stream: an SSE event, or the next element of the JSON array.
    void frame(const std::string& body, std::string& out) {
        if (sse_)
            out.append("data: ").append(body).append("\r\n\r\n");
        else
            out.append(first_ ? "[" : ",\r\n").append(body);
        first_ = false;
    }

    answer_names names_;
    bool sse_;
    bool first_ = true;
    bool ended_ = false;
    std::optional<pending> call_;
};

class generate_ingress final : public ingress {
public:
    bool parse(std::string_view body, request& out, parse_failure& failure) const override {
        return parse_generate(body, out, failure);
    }
    bool from_target(std::string_view target, request& out) const override {
        // /v1beta/models/{model}:{method}[?alt=sse…] (or /v1/models/…, Gemini's stable API)
        auto path = target.substr(0, target.find('?'));
        auto models = path.find("/models/");
        if (models == std::string_view::npos) return false;
        auto rest = path.substr(models + 8);
        if (rest.find(':') == std::string_view::npos) return false;  // no method
        out.model = std::string(gemini_path_model(rest));            // as the router read it
        out.stream = rest.ends_with(":streamGenerateContent");
        return !out.model.empty();
    }
    std::string answer(const reply& r, const answer_names& names, const request&) const override {
        json::array parts;
        for (const auto& p : r.content.parts) {
            if (p.what == part::kind::reasoning)
                parts.push_back(json::object{{"text", p.text}, {"thought", true}});
            else if (p.what == part::kind::text && !p.text.empty())
                parts.push_back(json::object{{"text", p.text}});
            else if (p.what == part::kind::tool_call)
                parts.push_back(
                    call_part(p.call.id, p.call.name, p.call.provider_meta, p.call.arguments));
        }
        if (parts.empty()) parts.push_back(json::object{{"text", ""}});
        json::object candidate{{"content", {{"parts", std::move(parts)}, {"role", "model"}}},
                               {"finishReason", finish_reason(r.why)},
                               {"index", 0}};
        return json::serialize(json::object{{"candidates", json::array{std::move(candidate)}},
                                            {"usageMetadata", usage_json(r.used)},
                                            {"modelVersion", names.model},
                                            {"responseId", names.id}});
    }
    std::unique_ptr<event_writer> writer(const answer_names& names, const request&) const override {
        // Without alt=sse Gemini streams one JSON array (the writer's content type says which).
        auto query = names.target.substr(std::min(names.target.find('?'), names.target.size()));
        bool sse = query.find("alt=sse") != std::string_view::npos;
        return std::make_unique<generate_writer>(names, sse);
    }
    std::string error_body(const provider_error& e) const override {
        return json::serialize(error_json(e.status, e.message));
    }
    std::string refusal(const parse_failure& f) const override {
        return json::serialize(
            error_json(400, f.param.empty() ? f.message : "`" + f.param + "` " + f.message));
    }
    std::string_view id_prefix() const override { return ""; }
};

}  // namespace

const ingress& generate_content() {
    static const generate_ingress instance;
    return instance;
}

}  // namespace gateway::providers
