#include "gateway/providers/bedrock_invoke.hpp"

#include "gateway/providers/anthropic.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/ingress.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::providers::bedrock {

namespace {

using detail::string_of;

// `text` decoded from base64 (padding optional); nullopt at a byte outside the alphabet.
std::optional<std::string> base64_decoded(std::string_view text) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    std::string out;
    out.reserve(text.size() / 4 * 3 + 2);
    std::uint32_t bits = 0;
    int count = 0;
    for (char c : text) {
        int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                                       : -1;
        if (v < 0) return std::nullopt;
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        if ((count += 6) >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xff));
        }
    }
    return out;
}

// A Messages body made InvokeModel's: `model` and `stream` out, the version in first, the rest
// in its order (json::object::erase would move the last member into the gap).
json::object invoke_object(json::object body) {
    json::object out;
    out.reserve(body.size() + 1);
    out.emplace("anthropic_version", anthropic_version);
    for (auto& member : body)
        if (member.key() != "model" && member.key() != "stream" &&
            member.key() != "anthropic_version")
            out.emplace(member.key(), std::move(member.value()));
    return out;
}

// Anthropic's stream decoder over InvokeModel's chunks: each chunk's event is handed on as the
// SSE event Anthropic would have sent; anything else in the stream is one of Bedrock's
// exceptions.
class invoke_decoder final : public stream_decoder {
public:
    invoke_decoder() : messages_(anthropic::adapter().decoder()) {}

    bool feed(const sse::event& e, std::vector<stream_delta>& out, provider_error& error) override {
        if (e.type != "chunk") {
            error = read_error(502, e.type, e.data);
            if (e.type.empty()) error.message = "a stream message named no event: " + error.message;
            return false;
        }
        auto event = chunk_event(e.data);
        if (!event) {
            error.message = "an unreadable chunk event: " + e.data.substr(0, 200);
            return false;
        }
        boost::system::error_code ec;
        auto v = json::parse(*event, ec);
        sse::event inner;
        inner.type = ec || !v.is_object() ? "" : string_of(v.as_object().if_contains("type"));
        inner.data = std::move(*event);
        return messages_->feed(inner, out, error);
    }

    bool end(std::vector<stream_delta>& out) override { return messages_->end(out); }

private:
    std::unique_ptr<stream_decoder> messages_;
};

class invoke final : public providers::adapter {
public:
    provider kind() const override { return provider::bedrock; }

    std::string target(const request& r) const override { return invoke_target(r.model, r.stream); }

    stream_framing framing() const override { return stream_framing::aws_eventstream; }

    std::string encode(const request& r, std::string& error) const override {
        auto messages = anthropic::adapter().encode(r, error);
        if (messages.empty()) return {};
        bool stream = false;
        return invoke_body(messages, stream, error);
    }

    bool decode(std::string_view body, reply& out, std::string& error) const override {
        return anthropic::adapter().decode(body, out, error);
    }

    std::unique_ptr<stream_decoder> decoder() const override {
        return std::make_unique<invoke_decoder>();
    }

    provider_error decode_error(unsigned status, std::string_view body) const override {
        return read_error(status, {}, body);
    }

    // A Bedrock API key; SigV4 signing is the upstream connection's, not the dialect's.
    std::pair<std::string_view, std::string_view> key_field() const override {
        return {"Authorization", "Bearer "};
    }
};

}  // namespace

bool invokes(std::string_view model_id) {
    // An ARN's resource is its last segment: foundation-model/…, inference-profile/….
    if (auto slash = model_id.rfind('/'); slash != std::string_view::npos)
        model_id = model_id.substr(slash + 1);
    if (model_id.starts_with("anthropic.")) return true;
    // An inference profile: a geography's prefix (us., eu., apac., global., us-gov.…) first.
    auto dot = model_id.find('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    for (char c : model_id.substr(0, dot))
        if (!(c >= 'a' && c <= 'z') && c != '-') return false;
    return model_id.substr(dot + 1).starts_with("anthropic.");
}

std::string invoke_target(std::string_view model_id, bool stream) {
    return "/model/" + model_segment(model_id) +
           (stream ? "/invoke-with-response-stream" : "/invoke");
}

std::string invoke_body(std::string_view messages_body, bool& stream, std::string& error) {
    // As deep as the client's request may be (ingress reads it with 64): a tool's input_schema
    // nests objects in properties in objects.
    json::parse_options options;
    options.max_depth = 64;
    boost::system::error_code ec;
    auto v = json::parse(messages_body, ec, {}, options);
    if (ec || !v.is_object()) {
        error = "the request body is not a JSON object";
        return {};
    }
    const auto* asked = v.as_object().if_contains("stream");
    stream = asked && *asked == json::value(true);
    return json::serialize(invoke_object(std::move(v.as_object())));
}

std::optional<std::string> chunk_event(std::string_view payload) {
    boost::system::error_code ec;
    auto v = json::parse(payload, ec);
    const auto* bytes = !ec && v.is_object() ? v.as_object().if_contains("bytes") : nullptr;
    if (!bytes || !bytes->is_string()) return std::nullopt;
    return base64_decoded(bytes->as_string());
}

messages_events::messages_events(std::size_t max_message_bytes) : messages_(max_message_bytes) {}

bool messages_events::feed(std::string_view bytes, std::string& out) {
    if (failed_) return false;
    framed_.clear();
    std::string broken;
    bool whole = messages_.feed(bytes, framed_, broken);
    for (const auto& m : framed_) {
        auto kind = m.string_header(":message-type");
        if (kind == "exception") {
            fail(502, m.string_header(":exception-type"), m.payload, out);
            return false;
        }
        if (kind == "error") {
            auto said =
                json::serialize(json::object{{"message", m.string_header(":error-message")}});
            fail(502, m.string_header(":error-code"), said, out);
            return false;
        }
        if (m.string_header(":event-type") != "chunk") continue;
        auto event = chunk_event(m.payload);
        boost::system::error_code ec;
        auto v = event ? json::parse(*event, ec) : json::value();
        auto type = !ec && v.is_object() ? string_of(v.as_object().if_contains("type")) : "";
        if (type.empty() || type.find_first_of("\r\n") != std::string::npos) {
            auto said = json::serialize(json::object{
                {"message", "an unreadable chunk event: " + m.payload.substr(0, 200)}});
            fail(502, {}, said, out);
            return false;
        }
        // One `data:` line: the event as Bedrock sent it when it is on one line, else
        // re-serialised (compact JSON has no raw line break), so no line of it can end the
        // event early or start another; a type with a line break is unreadable above.
        bool one_line = event->find_first_of("\r\n") == std::string::npos;
        out.append("event: ")
            .append(type)
            .append("\ndata: ")
            .append(one_line ? *event : json::serialize(v))
            .append("\n\n");
    }
    if (!whole) {
        fail(502, {}, json::serialize(json::object{{"message", broken}}), out);
        return false;
    }
    return true;
}

bool messages_events::finish(std::string& out) {
    if (failed_) return false;
    std::string broken;
    if (messages_.finish(broken)) return true;
    fail(502, {}, json::serialize(json::object{{"message", broken}}), out);
    return false;
}

void messages_events::fail(unsigned status, std::string_view type, std::string_view payload,
                           std::string& out) {
    failed_ = true;
    out.append("event: error\ndata: ")
        .append(messages().error_body(read_error(status, type, payload)))
        .append("\n\n");
}

const providers::adapter& invoke_adapter() {
    static const invoke instance;
    return instance;
}

}  // namespace gateway::providers::bedrock
