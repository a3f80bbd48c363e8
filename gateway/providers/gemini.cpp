#include "gateway/providers/gemini.hpp"

#include "gateway/http/target.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdio>

namespace gateway::providers::gemini {

namespace {

using detail::count_of;
using detail::string_of;

constexpr std::string_view synthesized_prefix = "gemini_";

// A stable id for an id-less call: the same reply always gives the same ids.
std::string synthesize_id(std::string_view response_id, std::size_t position,
                          const json::object& call) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::string_view s) {
        for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    };
    mix(response_id);
    mix(std::to_string(position));
    mix(json::serialize(call));
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string(synthesized_prefix) + hex;
}

finish finish_from(std::string_view reason, bool calls) {
    if (reason == "MAX_TOKENS") return finish::length;
    if (reason == "SAFETY" || reason == "RECITATION" || reason == "BLOCKLIST" ||
        reason == "PROHIBITED_CONTENT" || reason == "SPII" || reason == "IMAGE_SAFETY")
        return finish::content_filter;
    if (reason == "MALFORMED_FUNCTION_CALL") return finish::error;
    return calls ? finish::tool_calls : finish::stop;
}

usage usage_from(const json::value* u) {
    usage out;
    if (!u || !u->is_object()) return out;
    const auto& o = u->as_object();
    out.known = true;
    out.input = count_of(o.if_contains("promptTokenCount"), out);
    // Thoughts come apart from the candidates; cached content is part of the prompt.
    out.reasoning = count_of(o.if_contains("thoughtsTokenCount"), out);
    out.output = count_of(o.if_contains("candidatesTokenCount"), out) + out.reasoning;
    out.cache_read = std::min(count_of(o.if_contains("cachedContentTokenCount"), out), out.input);
    return out;
}

// The keys of an OpenAPI 3.0 schema that Gemini reads.
bool kept_key(std::string_view k) {
    static constexpr std::string_view keys[] = {
        "type",      "format",    "title",      "description", "nullable",      "enum",
        "maxItems",  "minItems",  "properties", "required",    "minProperties", "maxProperties",
        "minLength", "maxLength", "pattern",    "example",     "anyOf",         "propertyOrdering",
        "default",   "items",     "minimum",    "maximum"};
    for (auto key : keys)
        if (k == key) return true;
    return false;
}

schema_weight weight_of(const json::value& v);

// What an object weighs (see schema_weight).
schema_weight weight_of(const json::object& o) {
    schema_weight w{1, 2};
    for (const auto& [k, e] : o) w += weight_of(e) + schema_weight{1, k.size() + 4};
    return w;
}

schema_weight weight_of(const json::value& v) {
    if (v.is_object()) return weight_of(v.as_object());
    schema_weight w{1, 8};
    if (v.is_string()) w.bytes = v.as_string().size() + 2;
    if (v.is_array())
        for (const auto& e : v.as_array()) w += weight_of(e);
    return w;
}

// Reduces a JSON Schema to Gemini's subset. `$ref`s to `#/$defs/…` or `#/definitions/…` are
// inlined; since each inlining copies the definition, a schema of a few hundred bytes whose
// definitions refer to each other k times can expand to k^depth nodes, and a request can hold
// hundreds of such schemas. So everything the reduction writes (nodes and bytes, copied values
// included) is charged to one schema_budget that the whole request's tools share; a reference to
// a definition that is being expanded (recursion, which Gemini cannot express) is refused, and
// so is nesting deeper than max_depth. The first refusal sticks in `error`.
class schema_reducer {
public:
    static constexpr int max_depth = 64;

    schema_reducer(const json::object& root, schema_budget& budget)
        : root_(root), budget_(budget) {}

    json::object object(const json::object& schema, int depth) {
        if (!charge({1, 2}) || !deep_enough(depth)) return {};
        if (const auto* ref = schema.if_contains("$ref"); ref && ref->is_string())
            return inline_ref(ref->as_string(), depth);
        json::object out;
        for (const auto& [key, v] : schema) {
            if (key == "const") {
                if (charge(weight_of(v) + schema_weight{2, 16})) out["enum"] = json::array{v};
                continue;
            }
            if (key == "oneOf") {
                if (charge({1, 9})) out["anyOf"] = value(v, depth + 1);
                continue;
            }
            if (!kept_key(key)) continue;
            if (!charge({1, key.size() + 4})) break;
            if (key == "type" && v.is_array()) {
                // ["string", "null"] -> "string" + nullable
                for (const auto& t : v.as_array()) {
                    if (t == json::value("null"))
                        out["nullable"] = true;
                    else if (!out.contains("type") && charge(weight_of(t)))
                        out["type"] = t;
                }
                continue;
            }
            if (key == "properties" && v.is_object()) {
                json::object props;
                for (const auto& [name, sub] : v.as_object()) {
                    if (!charge({1, name.size() + 4})) break;
                    props[name] = value(sub, depth + 1);
                }
                out["properties"] = std::move(props);
                continue;
            }
            if (key == "items" || key == "anyOf") {
                out[key] = value(v, depth + 1);
                continue;
            }
            if (charge(weight_of(v))) out[key] = v;
        }
        return out;
    }

    const std::string& error() const { return error_; }

private:
    json::value value(const json::value& v, int depth) {
        if (v.is_object()) return object(v.as_object(), depth);
        if (v.is_array()) {
            json::array out;
            if (!charge({1, 2})) return out;
            for (const auto& e : v.as_array()) {
                out.push_back(value(e, depth));
                if (!error_.empty()) break;
            }
            return out;
        }
        charge(weight_of(v));
        return v;
    }

    json::object inline_ref(std::string_view path, int depth) {
        for (std::string_view prefix : {"#/$defs/", "#/definitions/"}) {
            if (path.rfind(prefix, 0) != 0) continue;
            auto name = path.substr(prefix.size());
            const auto* defs = root_.if_contains(prefix == "#/$defs/" ? "$defs" : "definitions");
            const auto* target =
                defs && defs->is_object() ? defs->as_object().if_contains(name) : nullptr;
            if (!target || !target->is_object()) break;
            if (std::find(expanding_.begin(), expanding_.end(), path) != expanding_.end()) {
                fail("the schema refers to `" + std::string(path) +
                     "` from inside itself; Gemini takes no recursive schemas");
                return {};
            }
            expanding_.emplace_back(path);
            auto out = object(target->as_object(), depth + 1);
            expanding_.pop_back();
            return out;
        }
        // A reference Gemini could not follow either.
        if (!charge({2, 20})) return {};
        return {{"type", "object"}};
    }

    bool charge(schema_weight w) {
        if (!budget_.take(w))
            fail("the request's tool schemas grow by more than " +
                 std::to_string(schema_budget::max_growth.nodes) + " nodes or " +
                 std::to_string(schema_budget::max_growth.bytes >> 10) +
                 " KiB once their `$ref`s are inlined");
        return error_.empty();
    }

    bool deep_enough(int depth) {
        if (depth > max_depth)
            fail("the schema nests deeper than " + std::to_string(max_depth) + " levels");
        return error_.empty();
    }

    void fail(std::string why) {
        if (error_.empty()) error_ = std::move(why);
    }

    const json::object& root_;
    schema_budget& budget_;
    std::vector<std::string> expanding_;  // the definitions being inlined, outermost first
    std::string error_;
};

// Gemini's model names ("gemini-2.5-pro", "learnlm-2.0-flash-experimental"): letters, digits and
// `-._~`. The name is written into the request target, so nothing else is sent.
bool valid_model_name(std::string_view model) {
    if (model.empty() || model.size() > 256 || model == "." || model == "..") return false;
    return std::all_of(model.begin(), model.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
    });
}

json::object image_part(const std::string& url) {
    auto semi = url.find(';');
    auto comma = url.find(',');
    if (url.rfind("data:", 0) == 0 && semi != std::string::npos && comma != std::string::npos &&
        semi < comma)
        return {{"inlineData",
                 {{"mimeType", url.substr(5, semi - 5)}, {"data", url.substr(comma + 1)}}}};
    return {};
}

struct content_turn {
    std::string role;
    json::array parts;
};

void add_part(std::vector<content_turn>& turns, std::string_view role, json::object p) {
    if (turns.empty() || turns.back().role != role) turns.push_back({std::string(role), {}});
    turns.back().parts.push_back(std::move(p));
}

// Gemini 3 refuses a model turn whose first function call carries no thought signature. A turn
// whose calls came from another model (or from a client that kept neither extra_content nor the
// call id the gateway wrote) has none: its first call gets the placeholder Gemini documents for
// conversations from elsewhere, rather than the turn failing.
constexpr std::string_view placeholder_signature = "skip_thought_signature_validator";

void sign_calls(content_turn& t) {
    if (t.role != "model") return;
    json::object* first = nullptr;
    for (auto& pv : t.parts) {
        auto& p = pv.as_object();
        if (!p.contains("functionCall")) continue;
        if (p.contains("thoughtSignature")) return;
        if (!first) first = &p;
    }
    if (first) (*first)["thoughtSignature"] = placeholder_signature;
}

// The calls and text of one candidate, numbering calls from `first_call`.
void read_candidate(const json::object& candidate, std::string_view response_id, std::size_t& calls,
                    std::vector<stream_delta>& out) {
    const auto* content = candidate.if_contains("content");
    if (!content || !content->is_object()) return;
    const auto* parts = content->as_object().if_contains("parts");
    if (!parts || !parts->is_array()) return;
    for (const auto& pv : parts->as_array()) {
        const auto* p = pv.if_object();
        if (!p) continue;
        if (const auto* thought = p->if_contains("thought");
            thought && *thought == json::value(true)) {
            // A thought summary (includeThoughts): shown as reasoning, not part of the answer.
            if (const auto* text = p->if_contains("text");
                text && text->is_string() && !text->as_string().empty()) {
                stream_delta d;
                d.what = stream_delta::kind::reasoning;
                d.text = std::string(text->as_string());
                out.push_back(std::move(d));
            }
            continue;
        }
        if (const auto* fc = p->if_contains("functionCall"); fc && fc->is_object()) {
            const auto& call = fc->as_object();
            stream_delta start;
            start.what = stream_delta::kind::call_started;
            start.index = calls;
            start.name = string_of(call.if_contains("name"));
            start.id = string_of(call.if_contains("id"));
            if (start.id.empty()) start.id = synthesize_id(response_id, calls, call);
            if (const auto* sig = p->if_contains("thoughtSignature"); sig && sig->is_string())
                start.provider_meta["thought_signature"] = *sig;
            stream_delta args;
            args.what = stream_delta::kind::call_arguments;
            args.index = calls;
            const auto* a = call.if_contains("args");
            args.text = a && a->is_object() ? json::serialize(*a) : "{}";
            out.push_back(std::move(start));
            out.push_back(std::move(args));
            ++calls;
        } else if (const auto* text = p->if_contains("text"); text && text->is_string()) {
            if (text->as_string().empty()) continue;
            stream_delta d;
            d.what = stream_delta::kind::text;
            d.text = std::string(text->as_string());
            out.push_back(std::move(d));
        }
    }
}

class gemini_decoder final : public stream_decoder {
public:
    bool feed(const sse::event& e, std::vector<stream_delta>& out, provider_error& error) override {
        boost::system::error_code ec;
        auto v = json::parse(e.data, ec);
        if (ec || !v.is_object()) {
            error.message = "an unreadable stream event: " + e.data.substr(0, 200);
            return false;
        }
        const auto& o = v.as_object();
        if (o.contains("error")) {
            error = adapter().decode_error(500, e.data);
            return false;
        }
        if (!started_) {
            started_ = true;
            response_id_ = string_of(o.if_contains("responseId"));
            stream_delta d;
            d.what = stream_delta::kind::started;
            d.id = response_id_;
            d.name = string_of(o.if_contains("modelVersion"));
            out.push_back(std::move(d));
        }
        if (auto u = usage_from(o.if_contains("usageMetadata")); u.known) used_ = u;
        if (const auto* feedback = o.if_contains("promptFeedback");
            feedback && feedback->is_object())
            if (feedback->as_object().contains("blockReason")) reason_ = "SAFETY";
        const auto* candidates = o.if_contains("candidates");
        if (!candidates || !candidates->is_array() || candidates->as_array().empty()) return true;
        const auto* candidate = candidates->as_array()[0].if_object();
        if (!candidate) return true;
        read_candidate(*candidate, response_id_, calls_, out);
        if (auto reason = string_of(candidate->if_contains("finishReason")); !reason.empty())
            reason_ = reason;
        return true;
    }

    bool end(std::vector<stream_delta>& out) override {
        if (!started_ || reason_.empty()) return false;
        stream_delta d;
        d.what = stream_delta::kind::finished;
        d.why = finish_from(reason_, calls_ > 0);
        d.used = used_;
        out.push_back(std::move(d));
        return true;
    }

private:
    bool started_ = false;
    std::string response_id_;
    std::string reason_;
    std::size_t calls_ = 0;
    usage used_;
};

class gemini_adapter final : public providers::adapter {
public:
    provider kind() const override { return provider::gemini; }
    std::string target(const request& r) const override {
        // encode() refuses names that need encoding; the target never holds one raw either.
        return "/models/" + http::path_segment(r.model) +
               (r.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    }

    std::string encode(const request& r, std::string& error) const override {
        if (!valid_model_name(r.model)) {
            error = "`" + r.model.substr(0, 64) +
                    "` is not a Gemini model name (letters, digits and -._~ only)";
            return {};
        }
        std::vector<content_turn> turns;
        for (std::size_t i = 0; i < r.messages.size(); ++i) {
            const auto& m = r.messages[i];
            std::string_view role = m.who == role::assistant ? "model" : "user";
            for (const auto& p : m.parts) {
                switch (p.what) {
                    case part::kind::text: {
                        if (p.text.empty()) break;
                        json::object text{{"text", p.text}};
                        if (const auto* sig = p.provider_meta.if_contains("thought_signature"))
                            text["thoughtSignature"] = *sig;
                        add_part(turns, role, std::move(text));
                        break;
                    }
                    case part::kind::image: {
                        auto image = image_part(p.text);
                        if (image.empty()) {
                            error = "Gemini takes images inline: send the image as a data: URL";
                            return {};
                        }
                        add_part(turns, role, std::move(image));
                        break;
                    }
                    case part::kind::tool_call: {
                        json::object call{{"name", p.call.name}, {"args", p.call.arguments}};
                        if (!p.call.id.empty() && p.call.id.rfind(synthesized_prefix, 0) != 0)
                            call["id"] = p.call.id;
                        json::object wire{{"functionCall", std::move(call)}};
                        if (const auto* sig = p.call.provider_meta.if_contains("thought_signature"))
                            wire["thoughtSignature"] = *sig;
                        add_part(turns, role, std::move(wire));
                        break;
                    }
                    case part::kind::tool_result: {
                        json::object response{
                            {p.result.is_error ? "error" : "content", p.result.content}};
                        json::object fr{{"name", p.result.name}, {"response", std::move(response)}};
                        if (!p.result.call_id.empty() &&
                            p.result.call_id.rfind(synthesized_prefix, 0) != 0)
                            fr["id"] = p.result.call_id;
                        add_part(turns, "user", {{"functionResponse", std::move(fr)}});
                        break;
                    }
                    case part::kind::reasoning:  // shown to the client, never sent back
                    case part::kind::opaque:
                        break;
                }
            }
        }
        for (auto& t : turns) sign_calls(t);
        json::array contents;
        for (auto& t : turns) contents.push_back({{"role", t.role}, {"parts", std::move(t.parts)}});
        json::object body{{"contents", std::move(contents)}};
        if (!r.system.empty())
            body["systemInstruction"] = {{"parts", json::array{json::object{{"text", r.system}}}}};
        if (!r.tools.empty()) {
            // One budget for all the tools: inlining is bounded per request, not per tool.
            schema_budget budget(r.tools);
            json::array declarations;
            for (const auto& t : r.tools) {
                json::object d{{"name", t.name}};
                if (!t.description.empty()) d["description"] = t.description;
                auto reduced = schema_for_gemini(t.parameters, budget);
                if (!reduced.error.empty()) {
                    error = "the parameters of tool `" + t.name + "`: " + reduced.error;
                    return {};
                }
                auto& schema = reduced.schema;
                // An object without properties is refused: a tool without parameters has none.
                const auto* props = schema.if_contains("properties");
                if (!(props && props->is_object() && props->as_object().empty()))
                    d["parameters"] = std::move(schema);
                declarations.push_back(std::move(d));
            }
            body["tools"] =
                json::array{json::object{{"functionDeclarations", std::move(declarations)}}};
            json::object config;
            switch (r.choice) {
                case tool_choice::automatic:
                    break;
                case tool_choice::none:
                    config["mode"] = "NONE";
                    break;
                case tool_choice::required:
                    config["mode"] = "ANY";
                    break;
                case tool_choice::named:
                    config["mode"] = "ANY";
                    config["allowedFunctionNames"] = json::array{json::string(r.choice_name)};
                    break;
            }
            if (!config.empty())
                body["toolConfig"] = {{"functionCallingConfig", std::move(config)}};
        }
        json::object generation;
        if (r.max_tokens) generation["maxOutputTokens"] = *r.max_tokens;
        if (r.temperature) generation["temperature"] = *r.temperature;
        if (r.top_p) generation["topP"] = *r.top_p;
        if (!r.stop.empty()) {
            json::array stop;
            for (const auto& s : r.stop) stop.push_back(json::string(s));
            generation["stopSequences"] = std::move(stop);
        }
        if (r.format) {
            generation["responseMimeType"] = "application/json";
            generation["responseJsonSchema"] = r.format->schema;
        }
        if (r.reasoning_budget || !r.reasoning_effort.empty()) {
            // Gemini 2.5's budgets; an effort is given the budget Google documents for it.
            auto budget = r.reasoning_budget.value_or(r.reasoning_effort == "low"    ? 1024
                                                      : r.reasoning_effort == "high" ? 24576
                                                                                     : 8192);
            generation["thinkingConfig"] = {{"thinkingBudget", budget}, {"includeThoughts", true}};
        }
        if (!generation.empty()) body["generationConfig"] = std::move(generation);
        return json::serialize(body);
    }

    bool decode(std::string_view body, reply& out, std::string& error) const override {
        gemini_decoder decoder;
        sse::event e;
        e.data = std::string(body);
        std::vector<stream_delta> deltas;
        provider_error failed;
        if (!decoder.feed(e, deltas, failed) || !decoder.end(deltas)) {
            error = failed.message.empty() ? "the upstream's answer is not a Gemini response"
                                           : failed.message;
            return false;
        }
        reply_builder builder;
        for (const auto& d : deltas) builder.add(d);
        std::string bad;
        out = builder.take(bad);
        if (!bad.empty()) {
            error = bad;
            return false;
        }
        return true;
    }

    std::unique_ptr<stream_decoder> decoder() const override {
        return std::make_unique<gemini_decoder>();
    }

    provider_error decode_error(unsigned status, std::string_view body) const override {
        return detail::read_error(status, body, false);
    }

    std::pair<std::string_view, std::string_view> key_field() const override {
        return {"x-goog-api-key", ""};
    }
};

}  // namespace

const providers::adapter& adapter() {
    static const gemini_adapter instance;
    return instance;
}

schema_budget::schema_budget(const std::vector<tool_spec>& tools) {
    for (const auto& t : tools) left_ += weight_of(t.parameters);
}

schema_budget::schema_budget(const json::object& schema) : left_(max_growth + weight_of(schema)) {}

bool schema_budget::take(schema_weight w) {
    if (w.nodes > left_.nodes || w.bytes > left_.bytes) {
        left_ = {};
        return false;
    }
    left_.nodes -= w.nodes;
    left_.bytes -= w.bytes;
    return true;
}

reduced_schema schema_for_gemini(const json::object& schema) {
    schema_budget budget(schema);
    return schema_for_gemini(schema, budget);
}

reduced_schema schema_for_gemini(const json::object& schema, schema_budget& budget) {
    schema_reducer reducer(schema, budget);
    reduced_schema out;
    out.schema = reducer.object(schema, 0);
    out.error = reducer.error();
    if (!out.error.empty()) out.schema.clear();
    return out;
}

}  // namespace gateway::providers::gemini
