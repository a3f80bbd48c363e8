// OpenAI-shaped answers written by the gateway (the translated /v1/chat/completions): a whole
// completion, its streamed chunks, an error body. (Requests and the adapter: openai.cpp.)
#include "gateway/providers/openai.hpp"

#include "gateway/error.hpp"

#include <boost/json/serialize.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

namespace gateway::providers::openai {

std::string chat_completion(const reply& r, std::string_view id, std::string_view model,
                            std::int64_t created) {
    json::object message{{"role", "assistant"}};
    auto text = r.content.text();
    auto calls = r.content.calls();
    if (text.empty() && !calls.empty())
        message["content"] = nullptr;
    else
        message["content"] = text;
    if (!calls.empty()) {
        json::array list;
        for (const auto* c : calls) {
            auto call = call_json(*c);
            call["id"] = id_with_state(c->id, c->provider_meta);
            list.push_back(std::move(call));
        }
        message["tool_calls"] = std::move(list);
    }
    json::object body{
        {"id", id},
        {"object", "chat.completion"},
        {"created", created},
        {"model", model},
        {"choices", json::array{json::object{{"index", 0},
                                             {"message", std::move(message)},
                                             {"logprobs", nullptr},
                                             {"finish_reason", openai_finish_reason(r.why)}}}}};
    if (r.used.known) body["usage"] = usage_json(r.used);
    return json::serialize(body);
}

chunk_writer::chunk_writer(std::string id, std::string model, std::int64_t created,
                           bool include_usage)
    : id_(std::move(id)),
      model_(std::move(model)),
      created_(created),
      include_usage_(include_usage) {}

std::string chunk_writer::chunk(const json::object& delta, const json::value& finish_reason) {
    json::object body{{"id", id_},
                      {"object", "chat.completion.chunk"},
                      {"created", created_},
                      {"model", model_},
                      {"choices", json::array{json::object{{"index", 0},
                                                           {"delta", delta},
                                                           {"logprobs", nullptr},
                                                           {"finish_reason", finish_reason}}}}};
    if (include_usage_) body["usage"] = nullptr;
    return "data: " + json::serialize(body) + "\n\n";
}

void chunk_writer::frames(const stream_delta& d, std::string& out) {
    if (d.what == stream_delta::kind::reasoning) return;  // Chat Completions has no field for it
    json::object delta;
    if (!role_sent_) {
        delta["role"] = "assistant";
        role_sent_ = true;
    }
    switch (d.what) {
        case stream_delta::kind::started:
            delta["content"] = "";
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::text:
            delta["content"] = d.text;
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::call_started: {
            if (has_arguments_.size() <= d.index) has_arguments_.resize(d.index + 1, false);
            json::object call{{"index", d.index},
                              {"id", id_with_state(d.id, d.provider_meta)},
                              {"type", "function"},
                              {"function", {{"name", d.name}, {"arguments", ""}}}};
            if (!d.provider_meta.empty()) call["extra_content"] = extra_content(d.provider_meta);
            delta["tool_calls"] = json::array{std::move(call)};
            out += chunk(delta, nullptr);
            return;
        }
        case stream_delta::kind::call_arguments:
            if (has_arguments_.size() <= d.index) has_arguments_.resize(d.index + 1, false);
            has_arguments_[d.index] = true;
            delta["tool_calls"] = json::array{
                json::object{{"index", d.index}, {"function", {{"arguments", d.text}}}}};
            out += chunk(delta, nullptr);
            return;
        case stream_delta::kind::finished: {
            for (std::size_t i = 0; i < has_arguments_.size(); ++i)
                if (!has_arguments_[i]) {
                    json::object empty{
                        {"tool_calls", json::array{json::object{
                                           {"index", i}, {"function", {{"arguments", "{}"}}}}}}};
                    out += chunk(empty, nullptr);
                }
            out += chunk(delta, json::string(openai_finish_reason(d.why)));
            if (include_usage_) {
                json::object body{{"id", id_},
                                  {"object", "chat.completion.chunk"},
                                  {"created", created_},
                                  {"model", model_},
                                  {"choices", json::array{}},
                                  {"usage", usage_json(d.used)}};
                out += "data: " + json::serialize(body) + "\n\n";
            }
            out += "data: [DONE]\n\n";
            return;
        }
        case stream_delta::kind::reasoning:
            return;
    }
}

namespace {

constexpr std::string_view carrier = "cgs1-";
constexpr char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string to_base64url(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        auto n = (std::uint32_t(std::uint8_t(bytes[i])) << 16) |
                 (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) | std::uint8_t(bytes[i + 2]);
        for (int shift : {18, 12, 6, 0}) out += base64url[(n >> shift) & 63];
    }
    if (auto rest = bytes.size() - i; rest > 0) {
        auto n = std::uint32_t(std::uint8_t(bytes[i])) << 16;
        if (rest == 2) n |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
        out += base64url[(n >> 18) & 63];
        out += base64url[(n >> 12) & 63];
        if (rest == 2) out += base64url[(n >> 6) & 63];
    }
    return out;
}

std::optional<std::string> from_base64url(std::string_view text) {
    std::string out;
    std::uint32_t bits = 0;
    int count = 0;
    for (char c : text) {
        const char* at = std::strchr(base64url, c);
        if (!at || c == '\0') return std::nullopt;
        bits = (bits << 6) | static_cast<std::uint32_t>(at - base64url);
        if ((count += 6) >= 8) {
            count -= 8;
            out += static_cast<char>((bits >> count) & 0xFF);
        }
    }
    return out;
}

// FNV-1a over the carried text and the id, as 8 hex digits.
std::string check_of(std::string_view carried, std::string_view id) {
    std::uint32_t h = 2166136261u;
    for (auto part : {carried, std::string_view("-"), id})
        for (unsigned char c : part) {
            h ^= c;
            h *= 16777619u;
        }
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return hex;
}

}  // namespace

std::string id_with_state(const std::string& id, const json::object& provider_meta) {
    const auto* sig = provider_meta.if_contains("thought_signature");
    if (!sig || !sig->is_string() || sig->as_string().empty()) return id;
    auto text = to_base64url(sig->as_string());
    if (text.size() > max_carried_signature) return id;
    return std::string(carrier) + std::to_string(text.size()) + "-" + text + check_of(text, id) +
           "-" + id;
}

std::string id_without_state(std::string_view id, json::object& carried) {
    if (!id.starts_with(carrier)) return std::string(id);
    auto rest = id.substr(carrier.size());
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    auto digits = static_cast<std::size_t>(end - rest.data());
    if (ec != std::errc() || digits == 0 || n > max_carried_signature ||
        rest.size() < digits + 1 + n + 8 + 1 || rest[digits] != '-')
        return std::string(id);
    auto text = rest.substr(digits + 1, n);
    auto check = rest.substr(digits + 1 + n, 8);
    if (rest[digits + 1 + n + 8] != '-') return std::string(id);
    auto own = rest.substr(digits + 1 + n + 9);
    auto signature = from_base64url(text);
    if (!signature || check != check_of(text, own)) return std::string(id);  // not ours, or mangled
    carried["thought_signature"] = *signature;
    return std::string(own);
}

std::string error_body(const provider_error& e) {
    return json::serialize(json::object{
        {"error",
         {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}}}});
}

namespace {

class chat_writer final : public event_writer {
public:
    chat_writer(const answer_names& names, bool include_usage)
        : chunks_(names.id, names.model, names.created, include_usage) {}
    void frames(const stream_delta& d, std::string& out) override { chunks_.frames(d, out); }
    // No [DONE]: an `error` event, as the gateway ends any OpenAI stream that broke.
    void failed(const provider_error& e, std::string& out) override {
        out += "event: error\ndata: " +
               error_json(make_error_code(errc::upstream_bad_response), e.message) + "\n\n";
    }

private:
    chunk_writer chunks_;
};

class chat_ingress final : public ingress {
public:
    bool parse(std::string_view body, request& out, parse_failure& failure) const override {
        return parse_chat_request(body, out, failure);
    }
    std::string answer(const reply& r, const answer_names& names, const request&) const override {
        return chat_completion(r, names.id, names.model, names.created);
    }
    std::unique_ptr<event_writer> writer(const answer_names& names,
                                         const request& r) const override {
        return std::make_unique<chat_writer>(names, r.include_usage);
    }
    std::string error_body(const provider_error& e) const override { return openai::error_body(e); }
    std::string refusal(const parse_failure& f) const override {
        return detail::unsupported_parameter(f);
    }
    std::string_view id_prefix() const override { return "chatcmpl-"; }
};

}  // namespace

}  // namespace gateway::providers::openai

namespace gateway::providers {

std::string detail::unsupported_parameter(const parse_failure& f) {
    auto message = f.param.empty() ? f.message : "`" + f.param + "` " + f.message;
    json::value param = f.param.empty() ? json::value(nullptr) : json::value(f.param);
    return json::serialize(
        json::object{{"error",
                      {{"message", message},
                       {"type", "invalid_request_error"},
                       {"param", param},
                       {"code", f.code.empty() ? std::string_view("unsupported_parameter")
                                               : std::string_view(f.code)}}}});
}

const ingress& chat_completions() {
    static const openai::chat_ingress instance;
    return instance;
}

}  // namespace gateway::providers
