#include "gateway/providers/vertex.hpp"

#include "gateway/config/hosting.hpp"
#include "gateway/providers/json_scan.hpp"

#include <vector>

namespace gateway::providers::vertex {

namespace {

// The index just past the JSON value starting at t[i], or npos when it does not end: strings
// by their quotes, objects and arrays by their depth (strings inside skipped), scalars up to the
// next `,`, `}` or `]`.
std::size_t value_end(std::string_view t, std::size_t i) {
    if (i >= t.size()) return std::string_view::npos;
    if (t[i] == '"') return json_string_end(t, i);
    if (t[i] != '{' && t[i] != '[') {
        while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' &&
               t[i] != '\t' && t[i] != '\n' && t[i] != '\r')
            ++i;
        return i;
    }
    int depth = 0;
    while (i < t.size()) {
        char c = t[i];
        if (c == '"') {
            i = json_string_end(t, i);
            if (i == std::string_view::npos) return i;
            continue;
        }
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) return i + 1;
        ++i;
    }
    return std::string_view::npos;
}

// A top-level member's span, from its key's opening quote to just past its value.
struct member {
    std::string_view key;  // the literal without its quotes, escapes as written
    std::size_t begin = 0;
    std::size_t value = 0;  // where its value begins
    std::size_t end = 0;
};

// The top-level members of the object `t` holds; nullopt when it is no object or is cut short.
std::optional<std::vector<member>> members_of(std::string_view t, std::size_t& open) {
    std::size_t i = json_skip_space(t, 0);
    if (i >= t.size() || t[i] != '{') return std::nullopt;
    open = i;
    std::vector<member> out;
    i = json_skip_space(t, i + 1);
    if (i < t.size() && t[i] == '}') return out;
    while (i < t.size()) {
        if (t[i] != '"') return std::nullopt;
        auto key_end = json_string_end(t, i);
        if (key_end == std::string_view::npos) return std::nullopt;
        auto colon = json_skip_space(t, key_end);
        if (colon >= t.size() || t[colon] != ':') return std::nullopt;
        auto value = json_skip_space(t, colon + 1);
        auto end = value_end(t, value);
        if (end == std::string_view::npos || end == value) return std::nullopt;
        out.push_back({t.substr(i + 1, key_end - i - 2), i, value, end});
        i = json_skip_space(t, end);
        if (i < t.size() && t[i] == '}') return out;
        if (i >= t.size() || t[i] != ',') return std::nullopt;
        i = json_skip_space(t, i + 1);
    }
    return std::nullopt;
}

}  // namespace

bool valid_model(std::string_view model) {
    return !model.empty() && model.find_first_not_of(
                                 "abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789-._@") == std::string_view::npos;
}

std::string target(const config::upstream_config& up, std::string_view model,
                   std::string_view method, std::string_view version) {
    bool claude = config::dialect_for(up, model) == config::provider_kind::anthropic;
    std::string out = "/";
    out += version;
    out += "/projects/";
    out += up.project;
    out += "/locations/";
    out += up.location;
    out += claude ? "/publishers/anthropic/models/" : "/publishers/google/models/";
    out += model;
    out += ':';
    out += method;
    return out;
}

bool to_raw_predict(std::string& body) {
    std::size_t open = 0;
    auto found = members_of(body, open);
    if (!found) return false;
    // Kept members' spans, in order; the ones rawPredict names otherwise are left out.
    std::string out(body.substr(0, open + 1));
    out += "\"anthropic_version\":\"";
    out += anthropic_version;
    out += '"';
    for (const auto& m : *found) {
        if (m.key == "model" || m.key == "anthropic_version") continue;
        out += ',';
        out.append(body, m.begin, m.end - m.begin);
    }
    out += '}';
    body = std::move(out);
    return true;
}

std::optional<native_path> read_native_path(std::string_view path) {
    // The API's version, then each fixed part and the value up to the next `/`.
    std::string_view version;
    for (std::string_view known : {"v1", "v1beta1"})
        if (path.starts_with("/vertex/") && path.substr(8).starts_with(known) &&
            path.substr(8 + known.size()).starts_with("/projects/"))
            version = known;
    if (version.empty()) return std::nullopt;
    static constexpr std::string_view parts[] = {"/projects/", "/locations/", "/publishers/",
                                                 "/models/"};
    std::string_view values[4];
    std::string_view rest = path.substr(8 + version.size());
    for (std::size_t i = 0; i < 4; ++i) {
        if (!rest.starts_with(parts[i])) return std::nullopt;
        rest.remove_prefix(parts[i].size());
        // The method is after the last `:`, as on Gemini's paths (a route's name may hold one).
        auto end = i < 3 ? rest.find('/') : rest.rfind(':');
        if (end == 0 || end == std::string_view::npos) return std::nullopt;
        values[i] = rest.substr(0, end);
        rest.remove_prefix(end + (i < 3 ? 0 : 1));
    }
    if (values[3].find('/') != std::string_view::npos) return std::nullopt;
    native_path out{version, values[2], values[3], rest};
    bool anthropic = out.publisher == "anthropic";
    bool google = out.publisher == "google";
    bool known = (anthropic && (rest == "rawPredict" || rest == "streamRawPredict")) ||
                 (google && (rest == "generateContent" || rest == "streamGenerateContent" ||
                             rest == "countTokens"));
    if (!known) return std::nullopt;
    return out;
}

std::string_view raw_predict_method(std::string_view messages_body) {
    std::size_t open = 0;
    bool stream = false;
    if (auto found = members_of(messages_body, open))
        for (const auto& m : *found)
            if (m.key == "stream")
                stream = messages_body.substr(m.value, m.end - m.value) == "true";
    return stream ? "streamRawPredict" : "rawPredict";
}

std::string wire_target(const config::upstream_config& up, std::string_view target) {
    constexpr std::string_view models = "/models/";
    auto colon = target.find(':');
    if (!target.starts_with(models) || colon == std::string_view::npos) return std::string(target);
    auto model = target.substr(models.size(), colon - models.size());
    if (model.empty() || model.find('/') != std::string_view::npos) return std::string(target);
    return vertex::target(up, model, target.substr(colon + 1));
}

namespace {

// Anthropic's adapter under rawPredict's target and body.
class claude_on_vertex final : public adapter {
public:
    provider kind() const override { return provider::anthropic; }
    std::string target(const request& r) const override {
        return "/models/" + r.model + ":" + (r.stream ? "streamRawPredict" : "rawPredict");
    }
    std::string encode(const request& r, std::string& error) const override {
        if (!valid_model(r.model)) {
            error = "`" + r.model.substr(0, 64) + "` is no model name Vertex AI's paths can hold";
            return {};
        }
        auto body = messages().encode(r, error);
        if (!body.empty()) to_raw_predict(body);
        return body;
    }
    bool decode(std::string_view body, reply& out, std::string& error) const override {
        return messages().decode(body, out, error);
    }
    std::unique_ptr<stream_decoder> decoder() const override { return messages().decoder(); }
    provider_error decode_error(unsigned status, std::string_view body) const override {
        return messages().decode_error(status, body);
    }
    std::pair<std::string_view, std::string_view> key_field() const override {
        return messages().key_field();
    }

private:
    static const adapter& messages() { return adapter_for(provider::anthropic); }
};

}  // namespace

const adapter& claude_adapter() {
    static const claude_on_vertex instance;
    return instance;
}

}  // namespace gateway::providers::vertex
