#include "gateway/passthrough/usage_observer.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

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

namespace {

std::size_t skip_space(std::string_view t, std::size_t i) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
    return i;
}

// The index just past the string starting at t[i] (a quote), or npos when it does not end.
std::size_t string_end(std::string_view t, std::size_t i) {
    for (++i; i < t.size(); ++i) {
        if (t[i] == '\\')
            ++i;
        else if (t[i] == '"')
            return i + 1;
    }
    return std::string_view::npos;
}

// One usage object found in a document: its text and whether it is Gemini's usageMetadata.
struct usage_text {
    std::string_view text;
    bool gemini;
};

// Finds the usage objects of a JSON document without parsing all of it: the values of the
// top-level members `usage` and `usageMetadata`, and of `usage` inside the top-level objects
// `response` and `message`. The scan skips strings (a quote inside one is escaped, so a key can
// never be mistaken for string content) and counts nesting; only the objects found are parsed.
// A document that does not close (a truncated body) yields nothing.
std::size_t find_usage(std::string_view t, std::array<usage_text, 4>& found) {
    std::size_t count = 0;
    int depth = 0;
    std::string_view member;  // the depth-1 member whose value is being scanned
    std::string_view parent;  // the depth-1 member holding the depth-2 object being scanned
    std::size_t i = skip_space(t, 0);
    if (i >= t.size() || t[i] != '{') return 0;
    while (i < t.size()) {
        char c = t[i];
        if (c == '"') {
            auto end = string_end(t, i);
            if (end == std::string_view::npos) return 0;
            auto text = t.substr(i + 1, end - i - 2);
            i = skip_space(t, end);
            if (i >= t.size() || t[i] != ':') continue;  // a value, not a key
            i = skip_space(t, i + 1);
            bool wanted =
                (depth == 1 && (text == "usage" || text == "usageMetadata")) ||
                (depth == 2 && text == "usage" && (parent == "response" || parent == "message"));
            if (depth == 1) member = text;
            if (!wanted || i >= t.size() || t[i] != '{') continue;
            // The object's end: nesting counted, strings skipped.
            int inner = 0;
            std::size_t j = i;
            for (; j < t.size(); ++j) {
                if (t[j] == '"') {
                    j = string_end(t, j);
                    if (j == std::string_view::npos) return 0;
                    --j;
                } else if (t[j] == '{' || t[j] == '[') {
                    ++inner;
                } else if ((t[j] == '}' || t[j] == ']') && --inner == 0) {
                    break;
                }
            }
            if (j >= t.size()) return 0;
            if (count < found.size()) found[count++] = {t.substr(i, j - i + 1), text != "usage"};
            i = j + 1;
            continue;
        }
        if (c == '{' || c == '[') {
            ++depth;
            if (depth == 2) parent = c == '{' ? member : std::string_view{};
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return skip_space(t, i + 1) == t.size() ? count : 0;
        }
        ++i;
    }
    return 0;
}

}  // namespace

void usage_observer::read_document(std::string_view text) {
    std::array<usage_text, 4> found;
    auto count = find_usage(text, found);
    for (std::size_t k = 0; k < count; ++k) {
        // Read once and dropped: the nodes come from a stack buffer, not one heap allocation
        // each.
        unsigned char scratch[2048];
        json::monotonic_resource nodes(scratch, sizeof scratch);
        boost::system::error_code ec;
        auto value = json::parse(found[k].text, ec, &nodes);
        if (!ec && value.is_object()) merge(value.get_object(), used_, found[k].gemini);
    }
}

}  // namespace gateway::passthrough
