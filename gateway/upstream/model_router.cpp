#include "gateway/upstream/model_router.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/providers/json_scan.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::upstream {

namespace json = boost::json;
using providers::json_skip_space;
using providers::json_string_end;

namespace {

// The text of a JSON string literal (quotes included), unescaped; nullopt when it is not a valid
// one. Plain ASCII without escapes is taken as it is; anything else goes through Boost.JSON, which
// decodes escapes and rejects invalid UTF-8 and control characters.
std::optional<std::string> string_value(std::string_view literal) {
    auto inner = literal.substr(1, literal.size() - 2);
    bool plain = std::all_of(inner.begin(), inner.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x80 && c != '\\';
    });
    if (plain) return std::string(inner);
    boost::system::error_code ec;
    auto value = json::parse(literal, ec);
    if (ec || !value.is_string()) return std::nullopt;
    return std::string(value.get_string());
}

// Whether a key's literal names "model" (escapes decoded: "mod\u0065l" does).
bool names_model(std::string_view literal) {
    if (literal == R"("model")") return true;
    return literal.find('\\') != std::string_view::npos && string_value(literal) == "model";
}

}  // namespace

namespace {

// The last top-level "model" member's string value and where its literal is in `t` (offsets in
// the original text); an empty span when there is none.
struct model_member {
    std::optional<std::string> model;
    std::size_t begin = 0;
    std::size_t end = 0;
};

model_member scan_model(std::string_view text) {
    std::string_view t = text;
    std::size_t offset = 0;
    // A UTF-8 byte order mark before the object: upstreams' JSON parsers skip it, so does this.
    if (t.starts_with("\xEF\xBB\xBF")) {
        t.remove_prefix(3);
        offset = 3;
    }
    model_member found;
    std::size_t i = json_skip_space(t, 0);
    if (i >= t.size() || t[i] != '{') return found;
    int depth = 0;
    while (i < t.size()) {
        char c = t[i];
        if (c == '"') {
            auto end = json_string_end(t, i);
            if (end == std::string_view::npos) break;  // cut short: what was read so far
            auto after = json_skip_space(t, end);
            bool is_key = depth == 1 && after < t.size() && t[after] == ':';
            if (!is_key || !names_model(t.substr(i, end - i))) {
                i = end;
                continue;
            }
            // A later "model" member replaces an earlier one, as in the upstream's parser.
            auto value = json_skip_space(t, after + 1);
            found = {};
            if (value < t.size() && t[value] == '"') {
                auto value_end = json_string_end(t, value);
                if (value_end == std::string_view::npos) break;
                found.model = string_value(t.substr(value, value_end - value));
                found.begin = offset + value;
                found.end = offset + value_end;
                i = value_end;
            } else {
                i = value;  // not a string: no model, unless another member follows
            }
            continue;
        }
        if (c == '{' || c == '[') {
            ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            break;
        }
        ++i;
    }
    return found;
}

}  // namespace

std::optional<std::string> read_model(std::string_view t) {
    return scan_model(t).model;
}

bool replace_model(std::string& body, std::string_view model) {
    auto found = scan_model(body);
    if (!found.model) return false;
    body.replace(found.begin, found.end - found.begin, json::serialize(json::value(model)));
    return true;
}

std::string upstream_model(const config::upstream_config& up, std::string_view model) {
    for (const auto& [from, to] : up.model_map)
        if (from == model) return to;
    return std::string(model);
}

model_router::model_router(const std::vector<config::upstream_config>& upstreams) {
    for (const auto& u : upstreams) {
        globs_.push_back(u.models);
        providers_.push_back(u.provider);
    }
}

std::optional<std::size_t> model_router::route(std::optional<std::string_view> model,
                                               config::provider_kind provider) const {
    std::optional<std::size_t> first;
    for (std::size_t i = 0; i < globs_.size(); ++i) {
        if (providers_[i] != provider) continue;
        if (!first) first = i;
        if (model)
            for (const auto& g : globs_[i])
                if (config::glob_match(g, *model)) return i;
    }
    return first;
}

std::optional<std::size_t> model_router::match(std::string_view model) const {
    for (std::size_t i = 0; i < globs_.size(); ++i)
        for (const auto& g : globs_[i])
            if (config::glob_match(g, model)) return i;
    return std::nullopt;
}

std::size_t model_router::route(std::optional<std::string_view> model) const {
    if (!model) return 0;
    return match(*model).value_or(0);
}

}  // namespace gateway::upstream
