#include "gateway/passthrough/usage_observer.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::passthrough {

namespace json = boost::json;

namespace {

std::int64_t number(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v) return 0;
    if (v->is_int64()) return std::max<std::int64_t>(0, v->get_int64());
    if (v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double()) return static_cast<std::int64_t>(std::max(0.0, v->get_double()));
    return 0;
}

bool has(const json::object& o, std::string_view key) {
    return o.contains(key);
}

// One usage object in any of the dialects; merged into `used` by taking the larger values.
void merge(const json::object& u, providers::usage& used, bool gemini) {
    std::int64_t input = 0, output = 0;
    bool any = false;
    if (gemini) {
        input = number(u, "promptTokenCount");
        output = number(u, "candidatesTokenCount") + number(u, "thoughtsTokenCount");
        any = has(u, "promptTokenCount") || has(u, "candidatesTokenCount");
    } else {
        if (has(u, "prompt_tokens") || has(u, "completion_tokens")) {
            input = number(u, "prompt_tokens");
            output = number(u, "completion_tokens");
            any = true;
        } else if (has(u, "input_tokens") || has(u, "output_tokens")) {
            // Anthropic reports cached input apart; it still is input the model read.
            input = number(u, "input_tokens") + number(u, "cache_creation_input_tokens") +
                    number(u, "cache_read_input_tokens");
            output = number(u, "output_tokens");
            any = true;
        }
    }
    if (!any) return;
    used.known = true;
    used.input = std::max(used.input, input);
    used.output = std::max(used.output, output);
}

const json::object* object_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_object() ? &v->get_object() : nullptr;
}

}  // namespace

bool mentions_usage(std::string_view text) {
    std::size_t at = 0;
    while ((at = text.find("\"usage", at)) != std::string_view::npos) {
        at += 6;
        if (text.substr(at).starts_with("Metadata")) at += 8;
        if (at >= text.size() || text[at] != '"') continue;
        ++at;
        while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' ||
                                    text[at] == '\r' || text[at] == ':'))
            ++at;
        if (at < text.size() && text[at] == '{') return true;
    }
    return false;
}

bool inject_include_usage(std::string& body) {
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 64;
    auto value = json::parse(body, ec, {}, options);
    if (ec || !value.is_object()) return false;
    auto& o = value.get_object();
    const auto* stream = o.if_contains("stream");
    if (!stream || !stream->is_bool() || !stream->get_bool()) return false;
    auto* so = o.if_contains("stream_options");
    if (so && !so->is_object() && !so->is_null()) return false;
    if (so && so->is_object() && so->get_object().contains("include_usage")) return false;
    if (!so || so->is_null()) {
        o["stream_options"] = json::object{{"include_usage", true}};
    } else {
        so->get_object()["include_usage"] = true;
    }
    body = json::serialize(value);
    return true;
}

usage_observer::usage_observer(bool event_stream, std::size_t max_body)
    : event_stream_(event_stream), max_body_(max_body) {}

void usage_observer::feed(std::string_view bytes) {
    if (!event_stream_) {
        if (overflow_) return;
        if (body_.size() + bytes.size() > max_body_) {
            overflow_ = true;
            body_.clear();
            body_.shrink_to_fit();
            return;
        }
        body_.append(bytes);
        return;
    }
    if (parser_.failed()) return;
    events_.clear();
    parser_.feed(bytes, events_);
    for (const auto& e : events_)
        if (mentions_usage(e.data)) read_document(e.data);
}

providers::usage usage_observer::finish() {
    if (!event_stream_ && !overflow_ && mentions_usage(body_)) read_document(body_);
    return used_;
}

void usage_observer::read_document(std::string_view text) {
    // Read once and dropped: the document's nodes come from a stack buffer (an ordinary answer
    // fits), not from one heap allocation per node.
    unsigned char scratch[4096];
    json::monotonic_resource nodes(scratch, sizeof scratch);
    boost::system::error_code ec;
    auto value = json::parse(text, ec, &nodes);
    if (ec || !value.is_object()) return;
    const auto& o = value.get_object();
    if (const auto* u = object_at(o, "usage")) merge(*u, used_, false);
    if (const auto* u = object_at(o, "usageMetadata")) merge(*u, used_, true);
    for (auto inner : {"response", "message"})
        if (const auto* r = object_at(o, inner))
            if (const auto* u = object_at(*r, "usage")) merge(*u, used_, false);
}

}  // namespace gateway::passthrough
