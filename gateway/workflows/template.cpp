#include "gateway/workflows/template.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>

namespace gateway::workflows {

namespace json = boost::json;

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string> split(std::string_view s) {
    std::vector<std::string> parts;
    for (;;) {
        auto dot = s.find('.');
        parts.emplace_back(s.substr(0, dot));
        if (dot == std::string_view::npos) return parts;
        s.remove_prefix(dot + 1);
    }
}

bool valid_name(std::string_view part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
}

config::parsed<reference> parse_reference(std::string_view inside) {
    using result = config::parsed<reference>;
    reference r;
    r.text = std::string(trim(inside));
    auto parts = split(r.text);
    for (const auto& p : parts)
        if (!valid_name(p)) return result::fail("`{{" + r.text + "}}` is not a reference");
    auto shape =
        "unknown name `" + r.text + "`: use params.NAME, steps.ID.output or steps.ID.data.FIELD";
    if (parts[0] == "params" && parts.size() >= 2) {
        r.is_param = true;
        r.name = parts[1];
        r.path.assign(parts.begin() + 2, parts.end());
        return {std::move(r), {}};
    }
    if (parts[0] == "steps" && parts.size() == 3 && parts[2] == "output") {
        r.name = parts[1];
        return {std::move(r), {}};
    }
    if (parts[0] == "steps" && parts.size() >= 4 && parts[2] == "data") {
        r.name = parts[1];
        r.data = true;
        r.path.assign(parts.begin() + 3, parts.end());
        return {std::move(r), {}};
    }
    return result::fail(shape);
}

// Calls `on_text` and `on_reference` for the pieces of `text` in order.
template <class Text, class Ref>
std::string scan(std::string_view text, Text on_text, Ref on_reference) {
    while (!text.empty()) {
        auto open = text.find("{{");
        on_text(text.substr(0, open));
        if (open == std::string_view::npos) return {};
        auto close = text.find("}}", open + 2);
        if (close == std::string_view::npos) return "unclosed `{{` in `" + std::string(text) + "`";
        auto parsed = parse_reference(text.substr(open + 2, close - open - 2));
        if (!parsed) return parsed.error;
        if (auto error = on_reference(*parsed.value); !error.empty()) return error;
        text.remove_prefix(close + 2);
    }
    return {};
}

// The value a reference points at (null when a field is missing), or an error.
config::parsed<json::value> resolve(const reference& r, const json::object& params,
                                    const step_outputs& steps) {
    using result = config::parsed<json::value>;
    const json::value* at = nullptr;
    json::value holder;
    if (r.is_param) {
        at = params.if_contains(r.name);
        if (!at) return {json::value(nullptr), {}};
    } else {
        auto it = steps.find(r.name);
        if (it == steps.end())
            return result::fail("`{{" + r.text + "}}` refers to step `" + r.name +
                                "`, which has not run yet");
        if (it->second.skipped) return {json::value(""), {}};
        if (!r.data) return {json::value(it->second.output), {}};
        holder = it->second.data;
        at = &holder;
    }
    for (const auto& field : r.path) {
        const json::value* next = nullptr;
        if (at->is_object()) next = at->as_object().if_contains(field);
        if (at->is_array() && !field.empty() && std::all_of(field.begin(), field.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c));
            })) {
            auto index = std::stoul(field);
            if (index < at->as_array().size()) next = &at->as_array()[index];
        }
        if (!next) return {json::value(nullptr), {}};
        at = next;
    }
    return {*at, {}};
}

std::string as_text(const json::value& v) {
    if (v.is_null()) return {};
    if (v.is_string()) return std::string(v.as_string());
    return json::serialize(v);
}

}  // namespace

config::parsed<std::vector<reference>> references(std::string_view text) {
    std::vector<reference> out;
    auto error = scan(
        text, [](std::string_view) {},
        [&](const reference& r) {
            out.push_back(r);
            return std::string();
        });
    if (!error.empty()) return config::parsed<std::vector<reference>>::fail(error);
    return {std::move(out), {}};
}

config::parsed<std::string> render(std::string_view text, const json::object& params,
                                   const step_outputs& steps) {
    std::string out;
    auto error = scan(
        text, [&](std::string_view piece) { out += piece; },
        [&](const reference& r) {
            auto value = resolve(r, params, steps);
            if (!value) return value.error;
            out += as_text(*value.value);
            return std::string();
        });
    if (!error.empty()) return config::parsed<std::string>::fail(error);
    return {std::move(out), {}};
}

config::parsed<json::value> render_value(const json::value& value, const json::object& params,
                                         const step_outputs& steps) {
    using result = config::parsed<json::value>;
    if (value.is_string()) {
        std::string_view text = value.as_string();
        auto trimmed = trim(text);
        if (trimmed.starts_with("{{") && trimmed.ends_with("}}") &&
            trimmed.find("{{", 2) == std::string_view::npos) {
            auto parsed = parse_reference(trimmed.substr(2, trimmed.size() - 4));
            if (!parsed) return result::fail(parsed.error);
            return resolve(*parsed.value, params, steps);
        }
        auto rendered = render(text, params, steps);
        if (!rendered) return result::fail(rendered.error);
        return {json::value(*rendered.value), {}};
    }
    if (value.is_object()) {
        json::object out;
        for (const auto& [key, item] : value.as_object()) {
            auto rendered = render_value(item, params, steps);
            if (!rendered) return rendered;
            if (!rendered.value->is_null()) out[key] = std::move(*rendered.value);
        }
        return {json::value(std::move(out)), {}};
    }
    if (value.is_array()) {
        json::array out;
        for (const auto& item : value.as_array()) {
            auto rendered = render_value(item, params, steps);
            if (!rendered) return rendered;
            out.push_back(std::move(*rendered.value));
        }
        return {json::value(std::move(out)), {}};
    }
    return {value, {}};
}

bool truthy(std::string_view rendered) {
    auto t = trim(rendered);
    std::string lower(t);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return !(lower.empty() || lower == "false" || lower == "0" || lower == "no" || lower == "null");
}

}  // namespace gateway::workflows
