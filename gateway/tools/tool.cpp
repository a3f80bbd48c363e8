#include "gateway/tools/tool.hpp"

#include "gateway/json_fields.hpp"
#include "gateway/tools/error_codes.hpp"

namespace gateway::tools {

std::string_view category_title(category c) {
    switch (c) {
        case category::search:
            return "Search & Discovery";
        case category::reading:
            return "File Reading";
        case category::writing:
            return "File Writing";
        case category::management:
            return "File Management";
        case category::document:
            return "Document";
    }
    return "Other";
}

std::optional<role> parse_role(std::string_view name) {
    if (name == "reader") return role::reader;
    if (name == "editor") return role::editor;
    return std::nullopt;
}

unsigned permissions_of(role r) {
    return r == role::reader ? read_files : read_files | write_files | delete_files;
}

tool_result tool_result::success(std::string text, boost::json::object data) {
    return {true, {}, std::move(text), std::move(data)};
}

tool_result tool_result::failure(std::string code, std::string text) {
    return {false, std::move(code), std::move(text), {}};
}

std::string string_param(const boost::json::object& p, std::string_view key,
                         std::string_view fallback) {
    auto* v = p.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string(fallback);
}

std::optional<std::string> optional_string_param(const boost::json::object& p,
                                                 std::string_view key) {
    auto* v = p.if_contains(key);
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
}

std::optional<long long> optional_int_param(const boost::json::object& p, std::string_view key) {
    // A model's 1e300 or 2^64 is no line number: read as absent, never converted out of range.
    return integer_of(p.if_contains(key));
}

bool bool_param(const boost::json::object& p, std::string_view key, bool fallback) {
    auto* v = p.if_contains(key);
    return v && v->is_bool() ? v->as_bool() : fallback;
}

std::string quoted(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out.push_back('`');
    out.append(text);
    out.push_back('`');
    return out;
}

std::string cap_text(std::string text, std::size_t limit, std::string_view how_to_narrow) {
    if (text.size() <= limit) return text;
    auto cut = text.rfind('\n', limit);
    if (cut == std::string::npos || cut < limit / 2) cut = limit;
    // Never inside a UTF-8 sequence: the model's request must stay valid JSON text.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    auto omitted = text.size() - cut;
    text.resize(cut);
    if (!text.ends_with('\n')) text.push_back('\n');
    text += "[output truncated: ";
    text += std::to_string(omitted);
    text += " more bytes not shown. ";
    text.append(how_to_narrow);
    text += "]\n";
    return text;
}

tool_result no_workspace() {
    return tool_result::failure(
        code::no_workspace, "This chat has no workspace folder, so file tools are unavailable.");
}

tool_result no_document() {
    return tool_result::failure(code::no_document,
                                "No document is open in this chat; ask the user to open one.");
}

}  // namespace gateway::tools
