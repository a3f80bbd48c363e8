#include "gateway/providers/usage_observer.hpp"

#include "gateway/providers/adapter.hpp"
#include "gateway/providers/bedrock_invoke.hpp"
#include "gateway/providers/json_scan.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>

namespace gateway::providers {

namespace json = boost::json;

namespace {

// Sums the bytes of the string values whose key names content in some dialect; the rest of the
// document is skipped. No document is built.
struct content_handler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    std::uint64_t bytes = 0;
    bool counting = false;  // the next value's key names content
    std::size_t string_bytes = 0;
    std::array<char, 24> key{};  // a key given in parts; longer ones name no content
    std::size_t key_size = 0;

    static bool content_key(std::string_view k) {
        static constexpr std::string_view keys[] = {"content",      "text",     "arguments",
                                                    "partial_json", "thinking", "reasoning_content",
                                                    "reasoning",    "refusal",  "delta"};
        for (auto c : keys)
            if (k == c) return true;
        return false;
    }
    bool value() {
        counting = false;
        return true;
    }
    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return value(); }
    bool on_object_end(std::size_t, json::error_code&) { return true; }
    bool on_array_begin(json::error_code&) { return value(); }
    bool on_array_end(std::size_t, json::error_code&) { return true; }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        if (key_size + s.size() <= key.size()) std::copy(s.begin(), s.end(), key.data() + key_size);
        key_size += s.size();
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
        on_key_part(s, 0, ec);
        counting = key_size <= key.size() && content_key({key.data(), key_size});
        key_size = 0;
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
        string_bytes += s.size();
        return true;
    }
    bool on_string(json::string_view s, std::size_t, json::error_code&) {
        if (counting) bytes += string_bytes + s.size();
        string_bytes = 0;
        return value();
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t, json::string_view, json::error_code&) { return value(); }
    bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return value(); }
    bool on_double(double, json::string_view, json::error_code&) { return value(); }
    bool on_bool(bool, json::error_code&) { return value(); }
    bool on_null(json::error_code&) { return value(); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }
};

// The members of a usage object the dialects count tokens in, by name: first those at its top
// level (with the objects that hold the nested ones), then those inside such an object.
enum member : std::size_t {
    prompt_tokens,
    completion_tokens,
    input_tokens,
    output_tokens,
    cache_creation_input_tokens,
    cache_read_input_tokens,
    prompt_token_count,
    candidates_token_count,
    thoughts_token_count,
    cached_content_token_count,
    bedrock_input_tokens,  // Bedrock's Converse (camelCase; cache reads and writes apart)
    bedrock_output_tokens,
    bedrock_cache_read_tokens,
    bedrock_cache_write_tokens,
    prompt_tokens_details,      // OpenAI Chat Completions: cached_tokens
    input_tokens_details,       // the Responses API: cached_tokens
    completion_tokens_details,  // reasoning_tokens
    output_tokens_details,      // reasoning_tokens
    cache_creation,             // Anthropic: ephemeral_5m_input_tokens, ephemeral_1h_input_tokens
    top_level_count,
    cached_tokens = top_level_count,
    reasoning_tokens,
    ephemeral_5m_input_tokens,
    ephemeral_1h_input_tokens,
    member_count,
    other_member = member_count
};

constexpr std::string_view member_names[member_count] = {"prompt_tokens",
                                                         "completion_tokens",
                                                         "input_tokens",
                                                         "output_tokens",
                                                         "cache_creation_input_tokens",
                                                         "cache_read_input_tokens",
                                                         "promptTokenCount",
                                                         "candidatesTokenCount",
                                                         "thoughtsTokenCount",
                                                         "cachedContentTokenCount",
                                                         "inputTokens",
                                                         "outputTokens",
                                                         "cacheReadInputTokens",
                                                         "cacheWriteInputTokens",
                                                         "prompt_tokens_details",
                                                         "input_tokens_details",
                                                         "completion_tokens_details",
                                                         "output_tokens_details",
                                                         "cache_creation",
                                                         "cached_tokens",
                                                         "reasoning_tokens",
                                                         "ephemeral_5m_input_tokens",
                                                         "ephemeral_1h_input_tokens"};

// The nested member `name` of the top-level object `parent`, or other_member.
member nested_member(member parent, std::string_view name) {
    switch (parent) {
        case prompt_tokens_details:
        case input_tokens_details:
            return name == member_names[cached_tokens] ? cached_tokens : other_member;
        case completion_tokens_details:
        case output_tokens_details:
            return name == member_names[reasoning_tokens] ? reasoning_tokens : other_member;
        case cache_creation:
            return name == member_names[ephemeral_5m_input_tokens]   ? ephemeral_5m_input_tokens
                   : name == member_names[ephemeral_1h_input_tokens] ? ephemeral_1h_input_tokens
                                                                     : other_member;
        default:
            return other_member;
    }
}

// What one usage object holds of those members: present (with any value) and, for a number,
// its value (0 for a negative or one past detail::max_reported_tokens, fractions truncated).
struct usage_members {
    std::array<bool, member_count> present{};
    std::array<std::int64_t, member_count> value{};
    bool unreadable = false;  // a known member's number was no count (counted 0)

    bool has(member m) const { return present[m]; }
    std::int64_t operator[](member m) const { return value[m]; }
};

// SAX handler reading a usage object's members into usage_members: its top-level ones and
// those of the detail objects named above; no document is built, nothing is allocated. Other
// nested values are skipped.
struct usage_handler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    usage_members found;
    int depth = 0;
    member current = other_member;  // the member whose value comes next
    member parent = other_member;   // the depth-1 member whose object is open at depth 2
    std::array<char, 32> key{};     // a key given in parts (escapes); longer ones match nothing
    std::size_t key_size = 0;

    // The value of `current`: only a key that was read sets it, and the next value event (a
    // scalar, or a container opening) is that key's value, so no depth is checked here.
    bool value(std::optional<std::int64_t> number) {
        if (current == other_member) return true;
        found.present[current] = true;
        found.value[current] = number.value_or(0);
        current = other_member;
        return true;
    }
    bool open() {
        auto opened = current;
        value(std::nullopt);
        if (++depth == 2) parent = opened;
        return true;
    }
    bool close() {
        --depth;
        return true;
    }
    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return open(); }
    bool on_object_end(std::size_t, json::error_code&) { return close(); }
    bool on_array_begin(json::error_code&) { return open(); }
    bool on_array_end(std::size_t, json::error_code&) { return close(); }
    // Keys read: every top-level one, and those inside a detail object.
    bool reading_keys() const { return depth == 1 || (depth == 2 && parent != other_member); }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        if (!reading_keys()) return true;
        if (key_size + s.size() <= key.size()) std::copy(s.begin(), s.end(), key.data() + key_size);
        key_size += s.size();
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
        if (!reading_keys()) return true;
        on_key_part(s, 0, ec);
        std::string_view name =
            key_size <= key.size() ? std::string_view(key.data(), key_size) : std::string_view{};
        current = other_member;
        if (depth == 2) {
            current = nested_member(parent, name);
        } else {
            for (std::size_t m = 0; m < top_level_count; ++m)
                if (name == member_names[m]) current = static_cast<member>(m);
        }
        key_size = 0;
        return true;
    }
    bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, json::error_code&) {
        return value(std::nullopt);
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    // A count past detail::max_reported_tokens or 1e300 counts 0, as in the adapters
    // (detail::count_of): nothing converts a double that does not fit, and the sums in merge()
    // cannot overflow.
    bool on_int64(std::int64_t v, json::string_view, json::error_code&) {
        bool count = v >= 0 && v <= providers::detail::max_reported_tokens;
        return value(count ? v : unreadable());
    }
    bool on_uint64(std::uint64_t, json::string_view, json::error_code&) {
        return value(unreadable());  // past int64's range, so past any real count
    }
    bool on_double(double v, json::string_view, json::error_code&) {
        bool count = v >= 0 && v <= static_cast<double>(providers::detail::max_reported_tokens);
        return value(count ? static_cast<std::int64_t>(v) : unreadable());  // NaN neither
    }
    // A known member's number that is no count: 0, and noted.
    std::int64_t unreadable() {
        if (current != other_member) found.unreadable = true;
        return 0;
    }
    bool on_bool(bool, json::error_code&) { return value(std::nullopt); }
    bool on_null(json::error_code&) { return value(std::nullopt); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }
};

// The members of the usage object `text`; none when it is not a whole JSON object.
std::optional<usage_members> read_usage_object(std::string_view text) {
    json::parse_options options;
    options.max_depth = 64;
    json::basic_parser<usage_handler> parser(options);
    json::error_code ec;
    auto used = parser.write_some(false, text.data(), text.size(), ec);
    if (ec || used != text.size() || !parser.done()) return std::nullopt;
    return parser.handler().found;
}

// One usage object in any of the dialects; merged into `used` by taking the larger value of
// each count (a stream reports its counts so far, more than once).
void merge(const usage_members& u, providers::usage& used, bool gemini) {
    providers::usage one;
    bool any = false;
    if (gemini) {
        // Thoughts come apart from the candidates; cached content is part of the prompt.
        one.input = u[prompt_token_count];
        one.reasoning = u[thoughts_token_count];
        one.output = u[candidates_token_count] + one.reasoning;
        one.cache_read = u[cached_content_token_count];
        any = u.has(prompt_token_count) || u.has(candidates_token_count);
    } else if (u.has(bedrock_input_tokens) || u.has(bedrock_output_tokens)) {
        // Converse's inputTokens are what was read afresh; its cache's reads and writes are
        // input too (as bedrock.cpp reads them when it translates).
        one.cache_read = u[bedrock_cache_read_tokens];
        one.cache_write = u[bedrock_cache_write_tokens];
        one.input = u[bedrock_input_tokens] + one.cache_read + one.cache_write;
        one.output = u[bedrock_output_tokens];
        any = true;
    } else if (u.has(prompt_tokens) || u.has(completion_tokens)) {
        // Chat Completions: cached and reasoning tokens are part of the two counts.
        one.input = u[prompt_tokens];
        one.output = u[completion_tokens];
        one.cache_read = u[cached_tokens];
        one.reasoning = u[reasoning_tokens];
        any = true;
    } else if (u.has(input_tokens) || u.has(output_tokens)) {
        one.output = u[output_tokens];
        one.reasoning = u[reasoning_tokens];  // the Responses API's
        if (u.has(cache_read_input_tokens) || u.has(cache_creation_input_tokens) ||
            u.has(cache_creation)) {
            // Anthropic reports cache reads and writes apart from input_tokens; they still are
            // input the model read. A total without its 5m/1h split keeps an earlier 1h share.
            one.cache_read = u[cache_read_input_tokens];
            auto total = u[cache_creation_input_tokens];
            bool split = u.has(ephemeral_5m_input_tokens) || u.has(ephemeral_1h_input_tokens);
            one.cache_write_1h =
                split ? u[ephemeral_1h_input_tokens] : std::min(used.cache_write_1h, total);
            one.cache_write = std::max(total - one.cache_write_1h,
                                       split ? u[ephemeral_5m_input_tokens] : std::int64_t(0));
            one.input = u[input_tokens] + one.cache_read + one.cache_write + one.cache_write_1h;
        } else {
            // The Responses API: cached tokens are part of input_tokens.
            one.input = u[input_tokens];
            one.cache_read = u[cached_tokens];
        }
        any = true;
    }
    if (!any) return;
    used.known = true;
    used.unreadable = used.unreadable || u.unreadable;
    used.input = std::max(used.input, one.input);
    used.output = std::max(used.output, one.output);
    used.cache_read = std::max(used.cache_read, one.cache_read);
    used.cache_write = std::max(used.cache_write, one.cache_write);
    used.cache_write_1h = std::max(used.cache_write_1h, one.cache_write_1h);
    used.reasoning = std::max(used.reasoning, one.reasoning);
}

// Walking back over a JSON object from its end (`end` is one past the character looked at). The
// text is read as one whole JSON value, in which every quote inside a string is escaped: a quote
// preceded by an even number of backslashes opens or closes a string.
constexpr auto npos = std::string_view::npos;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The end of `t[0, end)` without its trailing white space.
std::size_t trim_back(std::string_view t, std::size_t end) {
    while (end > 0 && is_space(t[end - 1])) --end;
    return end;
}

// The index of the quote that opens the string whose closing quote is t[close], or npos.
std::size_t string_start(std::string_view t, std::size_t close) {
    std::size_t end = close;
    while (const void* found = memrchr(t.data(), '"', end)) {
        auto at = static_cast<std::size_t>(static_cast<const char*>(found) - t.data());
        std::size_t backslashes = 0;
        while (at > backslashes && t[at - backslashes - 1] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return at;
        end = at;
    }
    return npos;
}

// The index where the value that ends at t[end - 1] starts: a string, an object or array
// (nesting counted, strings skipped), or a number, true, false or null; npos when none does.
std::size_t value_start(std::string_view t, std::size_t end) {
    if (end == 0) return npos;
    char last = t[end - 1];
    if (last == '"') return string_start(t, end - 1);
    if (last == '}' || last == ']') {
        int depth = 0;
        for (std::size_t i = end; i-- > 0;) {
            char c = t[i];
            if (c == '"') {
                i = string_start(t, i);
                if (i == npos) return npos;
            } else if (c == '}' || c == ']') {
                ++depth;
            } else if ((c == '{' || c == '[') && --depth == 0) {
                return i;
            }
        }
        return npos;
    }
    std::size_t i = end;
    while (i > 0 && (std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '.' ||
                     t[i - 1] == '+' || t[i - 1] == '-'))
        --i;
    return i == end ? npos : i;
}

// Where the last `"usage` of `text` starts (also `"usageMetadata`), or npos.
std::size_t last_mention(std::string_view text) {
    std::size_t end = text.size();
    while (const void* found = memrchr(text.data(), '"', end)) {
        auto at = static_cast<std::size_t>(static_cast<const char*>(found) - text.data());
        if (text.substr(at).starts_with("\"usage")) return at;
        end = at;
    }
    return npos;
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

usage_observer::usage_observer(framing how, std::size_t max_body)
    : framing_(how), max_body_(max_body) {}

void usage_observer::read_event(std::string_view data, bool adds) {
    if (mentions_usage(data)) read_document(data);
    if (adds) count_content(data);
}

void usage_observer::feed_aws(std::string_view bytes) {
    aws_messages_.clear();
    std::string error;
    // A broken stream reports nothing more; the client gets its bytes as they came regardless.
    aws_decoder_.feed(bytes, aws_messages_, error);
    for (const auto& m : aws_messages_) {
        auto type = m.string_header(":event-type");
        if (type != "chunk") {
            // ConverseStream: contentBlockDelta adds content, metadata reports the usage.
            read_event(m.payload, type == "contentBlockDelta");
            continue;
        }
        // InvokeModelWithResponseStream: {"bytes": base64 of one Messages stream event}.
        auto event = bedrock::chunk_event(m.payload);
        if (!event) continue;
        read_event(*event, event->find("_delta\"") != std::string::npos);
    }
}

void usage_observer::feed(std::string_view bytes) {
    if (framing_ == framing::aws_event_stream) {
        feed_aws(bytes);
        return;
    }
    if (framing_ == framing::json) {
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
    for (const auto& e : events_) {
        if (mentions_usage(e.data)) read_document(e.data);
        // Events that add content; `.done` ones and the final response repeat it.
        if (e.type == "message" || e.type.ends_with("delta")) count_content(e.data);
    }
}

providers::usage usage_observer::finish(bool complete) {
    if (framing_ == framing::json && !overflow_) {
        read_body(body_, complete);
        body_.clear();  // counted once
    }
    return used_;
}

providers::usage usage_observer::finish_whole(std::string_view body) {
    if (body.size() > max_body_)
        overflow_ = true;  // as feed() would have it
    else if (!overflow_)
        read_body(body, true);
    return used_;
}

void usage_observer::read_body(std::string_view body, bool complete) {
    // Every dialect writes a whole answer's usage among its last top-level members, after the
    // content: its last mention is looked up from the end first, which reads only what follows
    // it. A mention inside a value, or a body that may be cut short, is scanned whole.
    auto last = last_mention(body);
    if (last != std::string::npos && !(complete && read_member_at(body, last)) &&
        mentions_usage(body))
        read_document(body);
    if (!(complete && used_.known)) count_content(body);
}

void usage_observer::count_content(std::string_view text) {
    json::parse_options options;
    options.max_depth = 64;
    json::basic_parser<content_handler> parser(options);
    json::error_code ec;
    parser.write_some(false, text.data(), text.size(), ec);
    if (!ec) delivered_ += parser.handler().bytes;
}

settled settled_usage(const providers::usage& reported, std::uint64_t delivered_bytes,
                      std::size_t request_bytes, bool complete) {
    settled out{reported, false};
    if (reported.known && complete) return out;
    auto delivered = static_cast<std::int64_t>((delivered_bytes + 3) / 4);
    if (!reported.known) {
        out.used.known = true;
        out.used.input = static_cast<std::int64_t>((request_bytes + 3) / 4);
        out.used.output = delivered;
        out.estimated = true;
    } else if (delivered > reported.output) {
        out.used.output = delivered;
        out.estimated = true;
    }
    return out;
}

namespace {

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
    std::size_t i = json_skip_space(t, 0);
    if (i >= t.size() || t[i] != '{') return 0;
    while (i < t.size()) {
        char c = t[i];
        if (c == '"') {
            auto end = json_string_end(t, i);
            if (end == std::string_view::npos) return 0;
            auto text = t.substr(i + 1, end - i - 2);
            i = json_skip_space(t, end);
            if (i >= t.size() || t[i] != ':') continue;  // a value, not a key
            i = json_skip_space(t, i + 1);
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
                    j = json_string_end(t, j);
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
            if (--depth == 0) return json_skip_space(t, i + 1) == t.size() ? count : 0;
        }
        ++i;
    }
    return 0;
}

}  // namespace

bool usage_observer::read_member_at(std::string_view t, std::size_t at) {
    // The top-level members from the last, back to the one whose key starts at or before `at`.
    auto end = trim_back(t, t.size());
    if (end == 0 || t[end - 1] != '}') return false;
    --end;
    while (true) {
        auto value_end = trim_back(t, end);
        auto value = value_start(t, value_end);
        if (value == npos) return false;
        auto colon = trim_back(t, value);
        if (colon == 0 || t[colon - 1] != ':') return false;
        auto key_end = trim_back(t, colon - 1);
        if (key_end == 0 || t[key_end - 1] != '"') return false;
        auto key = string_start(t, key_end - 1);
        if (key == npos || key < at) return false;  // the mention lies inside a value
        if (key == at) {
            auto name = t.substr(key + 1, key_end - key - 2);
            if ((name != "usage" && name != "usageMetadata") || t[value] != '{') return false;
            // As read_document reads it, but only this one object.
            if (auto members = read_usage_object(t.substr(value, value_end - value)))
                merge(*members, used_, name != "usage");
            return true;
        }
        end = trim_back(t, key);
        if (end == 0 || t[end - 1] != ',') return false;
        --end;
    }
}

void usage_observer::read_document(std::string_view text) {
    std::array<usage_text, 4> found;
    auto count = find_usage(text, found);
    for (std::size_t k = 0; k < count; ++k)
        if (auto members = read_usage_object(found[k].text))
            merge(*members, used_, found[k].gemini);
}

}  // namespace gateway::providers
