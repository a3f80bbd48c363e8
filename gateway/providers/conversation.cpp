#include "gateway/providers/conversation.hpp"

#include "gateway/config/hosting.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/providers/anthropic.hpp"
#include "gateway/providers/azure.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/bedrock_invoke.hpp"
#include "gateway/providers/gemini.hpp"
#include "gateway/providers/openai.hpp"
#include "gateway/providers/vertex.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>

namespace gateway::providers {

std::string_view provider_name(provider p) {
    switch (p) {
        case provider::openai:
            return "openai";
        case provider::anthropic:
            return "anthropic";
        case provider::gemini:
            return "gemini";
        case provider::bedrock:
            return "bedrock";
    }
    return "openai";
}

std::string_view openai_finish_reason(finish f) {
    switch (f) {
        case finish::stop:
            return "stop";
        case finish::length:
            return "length";
        case finish::tool_calls:
            return "tool_calls";
        case finish::content_filter:
            return "content_filter";
        case finish::error:
            return "stop";
    }
    return "stop";
}

std::string_view role_name(role r) {
    switch (r) {
        case role::user:
            return "user";
        case role::assistant:
            return "assistant";
        case role::tool:
            return "tool";
    }
    return "user";
}

std::optional<role> parse_role(std::string_view name) {
    for (auto r : {role::user, role::assistant, role::tool})
        if (role_name(r) == name) return r;
    return std::nullopt;
}

namespace {

constexpr std::string_view part_types[] = {"text",        "image",  "tool_call",
                                           "tool_result", "opaque", "reasoning"};

json::object part_json(const part& p) {
    json::object o{{"type", part_types[static_cast<std::size_t>(p.what)]}};
    switch (p.what) {
        case part::kind::text:
            o["text"] = p.text;
            if (!p.provider_meta.empty()) o["meta"] = p.provider_meta;
            break;
        case part::kind::image:
            o["url"] = p.text;
            break;
        case part::kind::tool_call:
            o["id"] = p.call.id;
            o["name"] = p.call.name;
            o["arguments"] = p.call.arguments;
            if (!p.call.provider_meta.empty()) o["meta"] = p.call.provider_meta;
            break;
        case part::kind::tool_result:
            o["call_id"] = p.result.call_id;
            o["name"] = p.result.name;
            o["content"] = p.result.content;
            o["is_error"] = p.result.is_error;
            break;
        case part::kind::opaque:
            o["meta"] = p.provider_meta;
            break;
        case part::kind::reasoning:
            o["text"] = p.text;
            break;
    }
    return o;
}

// A member that must be a string (missing: ""), an object (missing: {}) or a boolean.
bool read(const json::object& o, std::string_view key, std::string& out) {
    const auto* v = o.if_contains(key);
    if (!v) return true;
    if (!v->is_string()) return false;
    out = v->get_string();
    return true;
}
bool read(const json::object& o, std::string_view key, json::object& out) {
    const auto* v = o.if_contains(key);
    if (!v) return true;
    if (!v->is_object()) return false;
    out = v->get_object();
    return true;
}
bool read(const json::object& o, std::string_view key, bool& out) {
    const auto* v = o.if_contains(key);
    if (!v) return true;
    if (!v->is_bool()) return false;
    out = v->get_bool();
    return true;
}

std::optional<part> part_of(const json::value& v) {
    const auto* o = v.if_object();
    if (!o) return std::nullopt;
    auto type = string_of(*o, "type");
    part p;
    bool ok = true;
    if (type == "text") {
        p.what = part::kind::text;
        ok = read(*o, "text", p.text) && read(*o, "meta", p.provider_meta);
    } else if (type == "image") {
        p.what = part::kind::image;
        ok = read(*o, "url", p.text);
    } else if (type == "tool_call") {
        p.what = part::kind::tool_call;
        ok = read(*o, "id", p.call.id) && read(*o, "name", p.call.name) &&
             read(*o, "arguments", p.call.arguments) && read(*o, "meta", p.call.provider_meta) &&
             !p.call.name.empty();
    } else if (type == "tool_result") {
        p.what = part::kind::tool_result;
        ok = read(*o, "call_id", p.result.call_id) && read(*o, "name", p.result.name) &&
             read(*o, "content", p.result.content) && read(*o, "is_error", p.result.is_error);
    } else if (type == "opaque") {
        p.what = part::kind::opaque;
        ok = read(*o, "meta", p.provider_meta);
    } else if (type == "reasoning") {
        p.what = part::kind::reasoning;
        ok = read(*o, "text", p.text);
    } else {
        ok = false;
    }
    if (!ok) return std::nullopt;
    return p;
}

}  // namespace

void tag_invoke(const json::value_from_tag&, json::value& v, const message& m) {
    json::array parts;
    parts.reserve(m.parts.size());
    for (const auto& p : m.parts) parts.push_back(part_json(p));
    v = json::object{{"role", role_name(m.who)}, {"parts", std::move(parts)}};
}

boost::system::result<message> tag_invoke(const json::try_value_to_tag<message>&,
                                          const json::value& v) {
    auto mismatch = make_error_code(json::error::not_object);
    const auto* o = v.if_object();
    const auto* parts = o ? o->if_contains("parts") : nullptr;
    auto who = parse_role(o ? string_of(*o, "role") : "");
    if (!who || !parts || !parts->is_array()) return mismatch;
    message m{*who, {}};
    m.parts.reserve(parts->get_array().size());
    for (const auto& pv : parts->get_array()) {
        auto p = part_of(pv);
        if (!p) return mismatch;
        m.parts.push_back(std::move(*p));
    }
    return m;
}

std::string message::text() const {
    std::string out;
    for (const auto& p : parts)
        if (p.what == part::kind::text) out += p.text;
    return out;
}

std::vector<const tool_call*> message::calls() const {
    std::vector<const tool_call*> out;
    for (const auto& p : parts)
        if (p.what == part::kind::tool_call) out.push_back(&p.call);
    return out;
}

void reply_builder::add(const stream_delta& d) {
    switch (d.what) {
        case stream_delta::kind::started:
            if (!d.id.empty()) reply_.id = d.id;
            if (!d.name.empty()) reply_.model = d.name;
            break;
        case stream_delta::kind::text:
            text_ += d.text;
            break;
        case stream_delta::kind::reasoning:
            reasoning_ += d.text;
            break;
        case stream_delta::kind::call_started:
            // Decoders number calls in order from 0; a gap would be a decoder's bug.
            if (d.index > calls_.size()) return;
            if (calls_.size() <= d.index) calls_.resize(d.index + 1);
            calls_[d.index].call.id = d.id;
            calls_[d.index].call.name = d.name;
            calls_[d.index].call.provider_meta = d.provider_meta;
            break;
        case stream_delta::kind::call_arguments:
            if (d.index >= calls_.size()) return;  // arguments of a call never started
            calls_[d.index].arguments += d.text;
            break;
        case stream_delta::kind::finished:
            reply_.why = d.why;
            reply_.used = d.used;
            finished_ = true;
            break;
    }
}

reply reply_builder::take(std::string& error) {
    reply out = std::move(reply_);
    if (!reasoning_.empty()) out.content.parts.push_back(part::of_reasoning(std::move(reasoning_)));
    if (!text_.empty()) out.content.parts.push_back(part::of_text(std::move(text_)));
    for (auto& c : calls_) {
        auto args = detail::arguments_object(c.arguments);
        if (!args) {
            error = "the arguments of `" + c.call.name + "` are not a JSON object: " + c.arguments;
            args = json::object{};
        }
        c.call.arguments = std::move(*args);
        out.content.parts.push_back(part::of_call(std::move(c.call)));
    }
    return out;
}

std::string adapter::auth_fields(std::string_view key) const {
    // Anthropic wants the API version it is spoken to in every request.
    std::string out = kind() == provider::anthropic ? "anthropic-version: 2023-06-01\r\n" : "";
    if (key.empty()) return out;
    auto [name, prefix] = key_field();
    out.append(name).append(": ").append(prefix).append(key).append("\r\n");
    return out;
}

std::pair<std::string_view, std::string_view> key_field_of(const config::upstream_config& up,
                                                           const adapter& a) {
    return up.host == config::hosting::azure ? azure::key_field : a.key_field();
}

std::string auth_fields_of(const config::upstream_config& up, const adapter& a,
                           std::string_view key) {
    if (up.host != config::hosting::azure) return a.auth_fields(key);
    if (key.empty()) return {};
    auto [name, prefix] = azure::key_field;
    return std::string(name) + ": " + std::string(prefix) + std::string(key) + "\r\n";
}

bool adapter::streams_as(std::string_view content_type) const {
    std::string_view type = framing() == stream_framing::sse ? "text/event-stream"
                                                             : "application/vnd.amazon.eventstream";
    return content_type.size() >= type.size() &&
           std::equal(type.begin(), type.end(), content_type.begin(), [](char a, char b) {
               return a == std::tolower(static_cast<unsigned char>(b));
           });
}

provider_error error_of(const adapter& a, unsigned status, std::string_view error_type,
                        std::string_view body) {
    if (a.kind() == provider::bedrock) return bedrock::read_error(status, error_type, body);
    return a.decode_error(status, body);
}

stream_reader::stream_reader(const adapter& a, std::size_t max_event_bytes)
    : decoder_(a.decoder()),
      framing_(a.framing()),
      events_(max_event_bytes),
      messages_(max_event_bytes) {}

bool stream_reader::frame(std::string_view bytes, std::string& error) {
    parsed_.clear();
    if (framing_ == stream_framing::sse) {
        if (events_.feed(bytes, parsed_)) return true;
        error = "an event of the upstream's stream is too large";
        return false;
    }
    framed_.clear();
    bool whole = messages_.feed(bytes, framed_, error);
    for (auto& m : framed_) {
        sse::event e;
        auto kind = m.string_header(":message-type");
        if (kind == "exception") {
            e.type = m.string_header(":exception-type");
            e.data = std::move(m.payload);
        } else if (kind == "error") {
            e.type = m.string_header(":error-code");
            e.data = json::serialize(json::object{{"message", m.string_header(":error-message")}});
        } else {
            e.type = m.string_header(":event-type");
            e.data = std::move(m.payload);
        }
        parsed_.push_back(std::move(e));
    }
    return whole;
}

bool stream_reader::feed(std::string_view bytes, std::vector<stream_delta>& out,
                         std::string& error) {
    // The events before a broken frame are decoded first: what came before the break is kept.
    std::string broken;
    bool framed = frame(bytes, broken);
    for (const auto& e : parsed_) {
        auto before = out.size();
        provider_error said;
        if (!decoder_->feed(e, out, said)) {
            error = said.message.empty()
                        ? "the upstream's stream reported an error: " + e.data.substr(0, 200)
                        : said.message;
            return false;
        }
        for (auto i = before; i < out.size(); ++i)
            finished_ = finished_ || out[i].what == stream_delta::kind::finished;
    }
    if (!framed) error = std::move(broken);
    return framed;
}

bool stream_reader::finish(std::vector<stream_delta>& out, std::string& error) {
    if (finished_) return true;
    // A message cut off at the end of the body is a broken stream, not an early end to decode.
    if (framing_ == stream_framing::aws_eventstream && !messages_.finish(error)) return false;
    if (decoder_->end(out)) return true;
    error = "the upstream's stream ended before the reply was complete";
    return false;
}

const adapter& adapter_for(provider p) {
    switch (p) {
        case provider::anthropic:
            return anthropic::adapter();
        case provider::gemini:
            return gemini::adapter();
        case provider::bedrock:
            return bedrock::converse_adapter();
        case provider::openai:
            break;
    }
    return openai::adapter();
}

const adapter& adapter_for(const config::upstream_config& up, std::string_view model) {
    if (up.provider == provider::bedrock && bedrock::invokes(model))
        return bedrock::invoke_adapter();
    // Claude on Vertex is rawPredict's Messages; Gemini there is Gemini's own adapter.
    if (up.host == config::hosting::vertex && config::dialect_for(up, model) == provider::anthropic)
        return vertex::claude_adapter();
    return adapter_for(up.provider);
}

namespace detail {

std::optional<json::object> arguments_object(std::string_view text) {
    auto blank = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
    if (blank) return json::object{};
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) return std::nullopt;
    return std::move(v.as_object());
}

std::string_view error_type_for(unsigned status) {
    switch (status) {
        case 400:
        case 404:
        case 409:
        case 413:
        case 422:
            return "invalid_request_error";
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 429:
            return "rate_limit_exceeded";
        default:
            return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

provider_error read_error(unsigned status, std::string_view body, bool keep_type) {
    provider_error e;
    e.status = status;
    e.type = std::string(error_type_for(status));
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (!ec && v.is_array() && !v.as_array().empty()) v = v.as_array()[0];
    if (!ec && v.is_object())
        if (const auto* err = v.as_object().if_contains("error"); err && err->is_object()) {
            e.message = string_of(err->as_object().if_contains("message"));
            if (auto type = string_of(err->as_object().if_contains("type"));
                keep_type && !type.empty())
                e.type = std::move(type);
        }
    if (e.message.empty()) e.message = std::string(body.substr(0, 500));
    return e;
}

std::optional<double> number_of(const json::value* v) {
    if (!v) return std::nullopt;
    if (v->is_double()) return v->as_double();
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    return std::nullopt;
}

std::int64_t int_of(const json::value* v) {
    return integer_of(v).value_or(0);
}

std::int64_t count_of(const json::value* v, usage& into) {
    auto n = number_of(v);
    if (!n) return 0;
    // Compared as a double first: NaN, infinity and 1e300 never reach the conversion.
    if (!(*n >= 0) || *n > static_cast<double>(max_reported_tokens)) {
        into.unreadable = true;
        return 0;
    }
    return static_cast<std::int64_t>(*n);
}

}  // namespace detail

}  // namespace gateway::providers
