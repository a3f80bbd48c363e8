#include "gateway/providers/gemini.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>

namespace gateway::providers::gemini {

namespace {

using detail::int_of;
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
    out.input = int_of(o.if_contains("promptTokenCount"));
    out.output =
        int_of(o.if_contains("candidatesTokenCount")) + int_of(o.if_contains("thoughtsTokenCount"));
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

json::value reduce(const json::value& v, const json::object& root, int depth);

json::object reduce_object(const json::object& schema, const json::object& root, int depth) {
    // $ref to #/$defs/x or #/definitions/x: inline it (bounded, for recursive schemas).
    if (const auto* ref = schema.if_contains("$ref"); ref && ref->is_string() && depth < 16) {
        std::string_view path = ref->as_string();
        for (std::string_view prefix : {"#/$defs/", "#/definitions/"})
            if (path.rfind(prefix, 0) == 0) {
                auto name = path.substr(prefix.size());
                const auto* defs = root.if_contains(prefix == "#/$defs/" ? "$defs" : "definitions");
                if (defs && defs->is_object())
                    if (const auto* target = defs->as_object().if_contains(name);
                        target && target->is_object())
                        return reduce_object(target->as_object(), root, depth + 1);
            }
        return {{"type", "object"}};
    }
    json::object out;
    for (const auto& [key, value] : schema) {
        if (key == "const") {
            out["enum"] = json::array{value};
            continue;
        }
        if (key == "oneOf") {
            out["anyOf"] = reduce(value, root, depth + 1);
            continue;
        }
        if (!kept_key(key)) continue;
        if (key == "type" && value.is_array()) {
            // ["string", "null"] -> "string" + nullable
            for (const auto& t : value.as_array()) {
                if (t == json::value("null"))
                    out["nullable"] = true;
                else if (!out.contains("type"))
                    out["type"] = t;
            }
            continue;
        }
        if (key == "properties" && value.is_object()) {
            json::object props;
            for (const auto& [name, sub] : value.as_object())
                props[name] = reduce(sub, root, depth + 1);
            out["properties"] = std::move(props);
            continue;
        }
        if (key == "items" || key == "anyOf") {
            out[key] = reduce(value, root, depth + 1);
            continue;
        }
        out[key] = value;
    }
    return out;
}

json::value reduce(const json::value& v, const json::object& root, int depth) {
    if (v.is_object()) return reduce_object(v.as_object(), root, depth);
    if (v.is_array()) {
        json::array out;
        for (const auto& e : v.as_array()) out.push_back(reduce(e, root, depth));
        return out;
    }
    return v;
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
            thought && *thought == json::value(true))
            continue;  // a thought summary: not part of the answer
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
        return "/models/" + r.model +
               (r.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    }

    std::string encode(const request& r, std::string& error) const override {
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
                    case part::kind::opaque:
                        break;
                }
            }
        }
        json::array contents;
        for (auto& t : turns) contents.push_back({{"role", t.role}, {"parts", std::move(t.parts)}});
        json::object body{{"contents", std::move(contents)}};
        if (!r.system.empty())
            body["systemInstruction"] = {{"parts", json::array{json::object{{"text", r.system}}}}};
        if (!r.tools.empty()) {
            json::array declarations;
            for (const auto& t : r.tools) {
                json::object d{{"name", t.name}};
                if (!t.description.empty()) d["description"] = t.description;
                auto schema = schema_for_gemini(t.parameters);
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

json::object schema_for_gemini(const json::object& schema) {
    return reduce_object(schema, schema, 0);
}

}  // namespace gateway::providers::gemini
