#include "gateway/providers/openai.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <unordered_map>

namespace gateway::providers::openai {

namespace {

using detail::fail;
using detail::missing;
using detail::number_of;
using detail::string_of;

const json::value* member(const json::object& o, std::string_view key) {
    return o.if_contains(key);
}

// Text (and image) parts of a `content` that is a string, null or an array of parts.
bool read_content(const json::value* content, std::string_view where, bool images,
                  std::vector<part>& out, parse_failure& f) {
    if (!content || content->is_null()) return true;
    if (content->is_string()) {
        out.push_back(part::of_text(std::string(content->as_string())));
        return true;
    }
    if (!content->is_array())
        return fail(f, std::string(where), "must be a string or an array of content parts");
    const auto& parts = content->as_array();
    for (std::size_t j = 0; j < parts.size(); ++j) {
        auto at = std::string(where) + "[" + std::to_string(j) + "]";
        const auto* p = parts[j].if_object();
        if (!p) return fail(f, at, "must be an object");
        auto type = string_of(member(*p, "type"));
        if (type == "text") {
            out.push_back(part::of_text(string_of(member(*p, "text"))));
        } else if (type == "image_url" && images) {
            const auto* image = member(*p, "image_url");
            std::string url = image && image->is_object()
                                  ? string_of(image->as_object().if_contains("url"))
                                  : string_of(image);
            if (url.empty()) return fail(f, at + ".image_url.url", "is required");
            out.push_back(part::of_image(std::move(url)));
        } else {
            return fail(f, at + ".type",
                        "`" + type + "` content cannot be translated for this model's provider");
        }
    }
    return true;
}

json::value content_value(const message& m) {
    bool only_text = true;
    for (const auto& p : m.parts)
        if (p.what == part::kind::image) only_text = false;
    if (only_text) return json::string(m.text());
    json::array parts;
    for (const auto& p : m.parts) {
        if (p.what == part::kind::text)
            parts.push_back(json::object{{"type", "text"}, {"text", p.text}});
        else if (p.what == part::kind::image)
            parts.push_back(json::object{{"type", "image_url"}, {"image_url", {{"url", p.text}}}});
    }
    return parts;
}

finish finish_from(std::string_view reason) {
    if (reason == "length") return finish::length;
    if (reason == "tool_calls" || reason == "function_call") return finish::tool_calls;
    if (reason == "content_filter") return finish::content_filter;
    return finish::stop;
}

usage usage_from(const json::value* u) {
    usage out;
    if (!u || !u->is_object()) return out;
    const auto& o = u->as_object();
    out.known = true;
    out.input = detail::count_of(o.if_contains("prompt_tokens"), out);
    out.output = detail::count_of(o.if_contains("completion_tokens"), out);
    // Parts of those two: cached prompt tokens and reasoning tokens.
    auto part = [&](const char* details, const char* member) -> std::int64_t {
        const auto* d = o.if_contains(details);
        if (!d || !d->is_object()) return 0;
        return detail::count_of(d->as_object().if_contains(member), out);
    };
    out.cache_read = std::min(part("prompt_tokens_details", "cached_tokens"), out.input);
    out.reasoning = std::min(part("completion_tokens_details", "reasoning_tokens"), out.output);
    return out;
}

// OpenAI's own streamed chunks: text deltas and tool-call fragments keyed by `index`, with the
// id and name in a call's first fragment only; usage in a last chunk without choices.
class openai_decoder final : public stream_decoder {
    static constexpr double max_calls = 1024;

public:
    bool feed(const sse::event& e, std::vector<stream_delta>& out, provider_error& error) override {
        if (e.data == "[DONE]") {
            stream_delta d;
            d.what = stream_delta::kind::finished;
            d.why = why_;
            d.used = used_;
            out.push_back(std::move(d));
            done_ = true;
            return true;
        }
        boost::system::error_code ec;
        auto v = json::parse(e.data, ec);
        if (ec || !v.is_object()) {
            error.message = "an unreadable stream event: " + e.data.substr(0, 200);
            return false;
        }
        const auto& o = v.as_object();
        if (const auto* err = o.if_contains("error"); err && err->is_object()) {
            error.message = string_of(err->as_object().if_contains("message"));
            return false;
        }
        if (!started_) {
            started_ = true;
            stream_delta d;
            d.what = stream_delta::kind::started;
            d.id = string_of(o.if_contains("id"));
            d.name = string_of(o.if_contains("model"));
            out.push_back(std::move(d));
        }
        if (auto u = usage_from(o.if_contains("usage")); u.known) used_ = u;
        const auto* choices = o.if_contains("choices");
        if (!choices || !choices->is_array() || choices->as_array().empty()) return true;
        const auto* choice = choices->as_array()[0].if_object();
        if (!choice) return true;
        if (auto reason = string_of(choice->if_contains("finish_reason")); !reason.empty())
            why_ = finish_from(reason);
        const auto* delta = choice->if_contains("delta");
        if (!delta || !delta->is_object()) return true;
        // Reasoning as OpenAI-compatible servers show it (DeepSeek, vLLM, llama.cpp).
        for (auto key : {"reasoning_content", "reasoning"})
            if (auto text = string_of(delta->as_object().if_contains(key)); !text.empty()) {
                stream_delta d;
                d.what = stream_delta::kind::reasoning;
                d.text = std::move(text);
                out.push_back(std::move(d));
                break;
            }
        if (auto text = string_of(delta->as_object().if_contains("content")); !text.empty()) {
            stream_delta d;
            d.what = stream_delta::kind::text;
            d.text = std::move(text);
            out.push_back(std::move(d));
        }
        const auto* calls = delta->as_object().if_contains("tool_calls");
        if (!calls || !calls->is_array()) return true;
        for (const auto& c : calls->as_array()) {
            const auto* call = c.if_object();
            if (!call) continue;
            // Calls are numbered from 0 in order: an index past the next one is not a stream
            // OpenAI sends (and would make us allocate whatever it says).
            auto at =
                number_of(call->if_contains("index")).value_or(static_cast<double>(seen_.size()));
            if (!(at >= 0 && at <= static_cast<double>(seen_.size()) && at < max_calls)) {
                error.message = "a streamed tool call has index " + std::to_string(at) + " after " +
                                std::to_string(seen_.size()) + " calls";
                return false;
            }
            auto index = static_cast<std::size_t>(at);
            if (seen_.size() <= index) seen_.resize(index + 1, false);
            const auto* fn = call->if_contains("function");
            const json::object* function = fn ? fn->if_object() : nullptr;
            if (!seen_[index]) {
                seen_[index] = true;
                stream_delta d;
                d.what = stream_delta::kind::call_started;
                d.index = index;
                d.id = string_of(call->if_contains("id"));
                d.name = function ? string_of(function->if_contains("name")) : "";
                d.provider_meta = provider_meta_from(call->if_contains("extra_content"));
                out.push_back(std::move(d));
            }
            if (function)
                if (auto args = string_of(function->if_contains("arguments")); !args.empty()) {
                    stream_delta d;
                    d.what = stream_delta::kind::call_arguments;
                    d.index = index;
                    d.text = std::move(args);
                    out.push_back(std::move(d));
                }
        }
        return true;
    }
    bool end(std::vector<stream_delta>&) override { return done_; }

private:
    bool started_ = false;
    bool done_ = false;
    std::vector<bool> seen_;
    finish why_ = finish::stop;
    usage used_;
};

class openai_adapter final : public providers::adapter {
public:
    provider kind() const override { return provider::openai; }
    std::string target(const request&) const override { return "/chat/completions"; }

    std::string encode(const request& r, std::string&) const override {
        json::array messages;
        if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
        for (const auto& m : r.messages) {
            if (m.who == role::tool) {
                for (const auto& p : m.parts)
                    if (p.what == part::kind::tool_result)
                        messages.push_back({{"role", "tool"},
                                            {"tool_call_id", p.result.call_id},
                                            {"content", p.result.content}});
                continue;
            }
            json::object out{{"role", m.who == role::user ? "user" : "assistant"}};
            auto calls = m.calls();
            auto text = m.text();
            if (m.who == role::assistant && !calls.empty() && text.empty())
                out["content"] = nullptr;
            else
                out["content"] = content_value(m);
            if (!calls.empty()) {
                json::array list;
                for (const auto* c : calls) list.push_back(call_json(*c));
                out["tool_calls"] = std::move(list);
            }
            messages.push_back(std::move(out));
        }
        json::object body{{"model", r.model}, {"messages", std::move(messages)}};
        if (!r.tools.empty()) {
            json::array tools;
            for (const auto& t : r.tools) {
                json::object fn{{"name", t.name}, {"parameters", t.parameters}};
                if (!t.description.empty()) fn["description"] = t.description;
                tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
            }
            body["tools"] = std::move(tools);
            switch (r.choice) {
                case tool_choice::automatic:
                    break;
                case tool_choice::none:
                    body["tool_choice"] = "none";
                    break;
                case tool_choice::required:
                    body["tool_choice"] = "required";
                    break;
                case tool_choice::named:
                    body["tool_choice"] = {{"type", "function"},
                                           {"function", {{"name", r.choice_name}}}};
                    break;
            }
            if (r.parallel_tool_calls) body["parallel_tool_calls"] = *r.parallel_tool_calls;
        }
        if (r.max_tokens) body["max_tokens"] = *r.max_tokens;
        if (r.temperature) body["temperature"] = *r.temperature;
        if (r.top_p) body["top_p"] = *r.top_p;
        if (!r.stop.empty()) {
            json::array stop;
            for (const auto& s : r.stop) stop.push_back(json::string(s));
            body["stop"] = std::move(stop);
        }
        if (r.format)
            body["response_format"] = {{"type", "json_schema"},
                                       {"json_schema",
                                        {{"name", r.format->name},
                                         {"strict", r.format->strict},
                                         {"schema", r.format->schema}}}};
        if (r.stream) {
            body["stream"] = true;
            if (r.include_usage) body["stream_options"] = {{"include_usage", true}};
        }
        return json::serialize(body);
    }

    bool decode(std::string_view body, reply& out, std::string& error) const override {
        boost::system::error_code ec;
        auto v = json::parse(body, ec);
        const json::object* o = ec ? nullptr : v.if_object();
        const json::value* choices = o ? o->if_contains("choices") : nullptr;
        if (!choices || !choices->is_array() || choices->as_array().empty() ||
            !choices->as_array()[0].is_object()) {
            error = "the upstream's answer is not a chat completion";
            return false;
        }
        const auto& choice = choices->as_array()[0].as_object();
        out.id = string_of(o->if_contains("id"));
        out.model = string_of(o->if_contains("model"));
        out.why = finish_from(string_of(choice.if_contains("finish_reason")));
        out.used = usage_from(o->if_contains("usage"));
        const auto* message = choice.if_contains("message");
        if (!message || !message->is_object()) {
            error = "the chat completion has no message";
            return false;
        }
        for (auto key : {"reasoning_content", "reasoning"})
            if (auto text = string_of(message->as_object().if_contains(key)); !text.empty()) {
                out.content.parts.push_back(part::of_reasoning(std::move(text)));
                break;
            }
        if (auto text = string_of(message->as_object().if_contains("content")); !text.empty())
            out.content.parts.push_back(part::of_text(std::move(text)));
        if (const auto* calls = message->as_object().if_contains("tool_calls");
            calls && calls->is_array())
            for (const auto& c : calls->as_array()) {
                const auto* call = c.if_object();
                const auto* fn = call ? call->if_contains("function") : nullptr;
                if (!fn || !fn->is_object()) continue;
                tool_call tc;
                tc.id = string_of(call->if_contains("id"));
                tc.name = string_of(fn->as_object().if_contains("name"));
                auto args =
                    detail::arguments_object(string_of(fn->as_object().if_contains("arguments")));
                if (!args) {
                    error = "the arguments of `" + tc.name + "` are not a JSON object";
                    return false;
                }
                tc.arguments = std::move(*args);
                tc.provider_meta = provider_meta_from(call->if_contains("extra_content"));
                out.content.parts.push_back(part::of_call(std::move(tc)));
            }
        return true;
    }

    std::unique_ptr<stream_decoder> decoder() const override {
        return std::make_unique<openai_decoder>();
    }

    provider_error decode_error(unsigned status, std::string_view body) const override {
        return detail::read_error(status, body, true);
    }

    std::pair<std::string_view, std::string_view> key_field() const override {
        return {"Authorization", "Bearer "};
    }
};

}  // namespace

const providers::adapter& adapter() {
    static const openai_adapter instance;
    return instance;
}

json::object extra_content(const json::object& provider_meta) {
    json::object google;
    if (const auto* sig = provider_meta.if_contains("thought_signature"))
        google["thought_signature"] = *sig;
    if (google.empty()) return {};
    return {{"google", std::move(google)}};
}

json::object provider_meta_from(const json::value* extra) {
    json::object meta;
    if (!extra || !extra->is_object()) return meta;
    const auto* google = extra->as_object().if_contains("google");
    if (!google || !google->is_object()) return meta;
    if (const auto* sig = google->as_object().if_contains("thought_signature");
        sig && sig->is_string())
        meta["thought_signature"] = *sig;
    return meta;
}

json::object call_json(const tool_call& c) {
    json::object out{{"id", c.id},
                     {"type", "function"},
                     {"function", {{"name", c.name}, {"arguments", json::serialize(c.arguments)}}}};
    if (!c.provider_meta.empty()) out["extra_content"] = extra_content(c.provider_meta);
    return out;
}

json::object usage_json(const usage& u) {
    json::object out{{"prompt_tokens", u.input},
                     {"completion_tokens", u.output},
                     {"total_tokens", u.input + u.output}};
    // The parts another provider reported, as OpenAI names them (part of the two counts).
    if (auto cached = u.cache_read; cached > 0)
        out["prompt_tokens_details"] = {{"cached_tokens", cached}};
    if (u.reasoning > 0) out["completion_tokens_details"] = {{"reasoning_tokens", u.reasoning}};
    return out;
}

namespace {

// Fails with the first field whose meaning cannot be kept on another provider.
bool refuse_untranslatable(const json::object& o, parse_failure& f) {
    for (const auto& field : o) {
        std::string_view key = field.key();
        const auto& value = field.value();
        auto refuse = [&](std::string why) { return fail(f, std::string(key), std::move(why)); };
        if (key == "n" && !(value.is_null() || number_of(&value).value_or(1) == 1))
            return refuse("only n = 1 can be translated for this model's provider");
        if ((key == "logprobs" && value == json::value(true)) ||
            (key == "top_logprobs" && !value.is_null()))
            return refuse("log probabilities are not available from this model's provider");
        if (key == "response_format" && value.is_object() &&
            string_of(value.as_object().if_contains("type")) != "text")
            return refuse("response formats cannot be translated for this model's provider");
        if ((key == "audio" && !value.is_null()) || (key == "prediction" && !value.is_null()) ||
            key == "functions" || key == "function_call" ||
            (key == "logit_bias" && value.is_object() && !value.as_object().empty()))
            return refuse("`" + std::string(key) +
                          "` cannot be translated for this model's provider");
        if (key == "modalities" && value.is_array())
            for (const auto& m : value.as_array())
                if (m != json::value("text"))
                    return refuse("only text output can be translated for this model's provider");
    }

    return true;
}

// The conversation: system and developer text, then user, assistant (with its calls) and tool
// messages in order; a tool message names the call it answers by the id an earlier assistant
// message gave it.
bool read_messages(const json::array& list, request& out, parse_failure& f) {
    std::unordered_map<std::string, std::string> call_names;  // call id -> its tool's name
    for (std::size_t i = 0; i < list.size(); ++i) {
        auto at = "messages[" + std::to_string(i) + "]";
        const auto* m = list[i].if_object();
        if (!m) return fail(f, at, "must be an object");
        auto who = string_of(member(*m, "role"));
        if (who == "system" || who == "developer") {
            std::vector<part> parts;
            if (!read_content(member(*m, "content"), at + ".content", false, parts, f))
                return false;
            std::string text;
            for (const auto& p : parts) text += p.text;
            if (!out.system.empty()) out.system += "\n\n";
            out.system += text;
        } else if (who == "user") {
            message msg{role::user, {}};
            if (!read_content(member(*m, "content"), at + ".content", true, msg.parts, f))
                return false;
            out.messages.push_back(std::move(msg));
        } else if (who == "assistant") {
            message msg{role::assistant, {}};
            if (!read_content(member(*m, "content"), at + ".content", false, msg.parts, f))
                return false;
            if (member(*m, "function_call"))
                return fail(f, at + ".function_call", "legacy function calls cannot be translated");
            if (const auto* calls = member(*m, "tool_calls"); calls && calls->is_array()) {
                const auto& cl = calls->as_array();
                for (std::size_t j = 0; j < cl.size(); ++j) {
                    auto cat = at + ".tool_calls[" + std::to_string(j) + "]";
                    const auto* c = cl[j].if_object();
                    const auto* fn = c ? c->if_contains("function") : nullptr;
                    if (!fn || !fn->is_object())
                        return fail(f, cat, "must be a function tool call");
                    tool_call tc;
                    // The id as the client echoes it; the state the gateway carried in it comes
                    // back when the client dropped extra_content.
                    auto echoed = string_of(c->if_contains("id"));
                    json::object carried;
                    tc.id = id_without_state(echoed, carried);
                    tc.name = string_of(fn->as_object().if_contains("name"));
                    auto args = detail::arguments_object(
                        string_of(fn->as_object().if_contains("arguments")));
                    if (!args)
                        return fail(f, cat + ".function.arguments", "must be a JSON object text");
                    tc.arguments = std::move(*args);
                    tc.provider_meta = provider_meta_from(c->if_contains("extra_content"));
                    if (tc.provider_meta.empty()) tc.provider_meta = std::move(carried);
                    call_names[echoed] = tc.name;
                    msg.parts.push_back(part::of_call(std::move(tc)));
                }
            }
            out.messages.push_back(std::move(msg));
        } else if (who == "tool") {
            tool_result r;
            auto echoed = string_of(member(*m, "tool_call_id"));
            json::object carried;
            r.call_id = id_without_state(echoed, carried);
            std::vector<part> parts;
            if (!read_content(member(*m, "content"), at + ".content", false, parts, f))
                return false;
            for (const auto& p : parts) r.content += p.text;
            // The name of the call this answers, from the assistant messages before it (the
            // latest call with that id): looked up, so many tool messages cost linear time.
            if (auto named = call_names.find(echoed); named != call_names.end())
                r.name = named->second;
            if (r.name.empty())
                return fail(
                    f, at + ".tool_call_id",
                    "`" + echoed + "` answers no tool call of an earlier assistant message");
            out.messages.push_back(message{role::tool, {part::of_result(std::move(r))}});
        } else {
            return fail(f, at + ".role", "`" + who + "` messages cannot be translated");
        }
    }

    return true;
}

// Function tools and the choice among them.
bool read_tools(const json::object& o, request& out, parse_failure& f) {
    if (const auto* tools = member(o, "tools"); tools && tools->is_array()) {
        const auto& tl = tools->as_array();
        for (std::size_t i = 0; i < tl.size(); ++i) {
            auto at = "tools[" + std::to_string(i) + "]";
            const auto* t = tl[i].if_object();
            const auto* fn = t ? t->if_contains("function") : nullptr;
            if (!t || string_of(t->if_contains("type")) != "function" || !fn || !fn->is_object())
                return fail(f, at + ".type", "only function tools can be translated");
            tool_spec spec;
            spec.name = string_of(fn->as_object().if_contains("name"));
            spec.description = string_of(fn->as_object().if_contains("description"));
            if (const auto* p = fn->as_object().if_contains("parameters"); p && p->is_object())
                spec.parameters = p->as_object();
            else
                spec.parameters = {{"type", "object"}, {"properties", json::object{}}};
            if (spec.name.empty()) return fail(f, at + ".function.name", "is required");
            out.tools.push_back(std::move(spec));
        }
    }
    if (const auto* choice = member(o, "tool_choice"); choice && !choice->is_null()) {
        auto mode = string_of(choice);
        if (mode == "auto")
            out.choice = tool_choice::automatic;
        else if (mode == "none")
            out.choice = tool_choice::none;
        else if (mode == "required")
            out.choice = tool_choice::required;
        else if (choice->is_object()) {
            const auto* fn = choice->as_object().if_contains("function");
            out.choice = tool_choice::named;
            out.choice_name =
                fn && fn->is_object() ? string_of(fn->as_object().if_contains("name")) : "";
            if (out.choice_name.empty()) return fail(f, "tool_choice.function.name", "is required");
        } else {
            return fail(f, "tool_choice", "must be auto, none, required or a named function");
        }
    }
    return true;
}

// The generation options: parallel calls, the token cap, sampling, stops, streaming.
bool read_options(const json::object& o, request& out, parse_failure& f) {
    if (const auto* p = member(o, "parallel_tool_calls"); p && p->is_bool())
        out.parallel_tool_calls = p->as_bool();
    for (auto key : {"max_completion_tokens", "max_tokens"}) {
        std::optional<std::int64_t> n;
        if (!detail::read_integer(member(o, key), key, 0, detail::max_requested_tokens, n, f))
            return false;
        if (!out.max_tokens) out.max_tokens = n;
    }
    if (!detail::read_number(member(o, "temperature"), "temperature", out.temperature, f) ||
        !detail::read_number(member(o, "top_p"), "top_p", out.top_p, f))
        return false;
    if (const auto* stop = member(o, "stop"); stop) {
        if (stop->is_string())
            out.stop.push_back(std::string(stop->as_string()));
        else if (stop->is_array())
            for (const auto& s : stop->as_array())
                if (s.is_string()) out.stop.push_back(std::string(s.as_string()));
    }
    out.stream = member(o, "stream") && *member(o, "stream") == json::value(true);
    if (const auto* so = member(o, "stream_options"); so && so->is_object())
        out.include_usage = so->as_object().if_contains("include_usage") &&
                            *so->as_object().if_contains("include_usage") == json::value(true);
    return true;
}

}  // namespace

bool parse_chat_request(std::string_view body, request& out, parse_failure& f) {
    auto v = detail::parse_body(body, f);
    if (!v) return false;
    const auto& o = v->as_object();
    if (!refuse_untranslatable(o, f)) return false;
    out.model = string_of(member(o, "model"));
    if (out.model.empty()) return missing(f, "model", "is required");
    const auto* messages = member(o, "messages");
    if (!messages || !messages->is_array() || messages->as_array().empty())
        return missing(f, "messages", "must be a non-empty array");
    return read_messages(messages->as_array(), out, f) && read_tools(o, out, f) &&
           read_options(o, out, f);
}

}  // namespace gateway::providers::openai
