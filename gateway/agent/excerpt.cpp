#include "gateway/agent/excerpt.hpp"

namespace gateway::agent {

namespace json = boost::json;

namespace {

void escape_token(std::string& pointer, std::string_view token) {
    for (char c : token) {
        if (c == '~')
            pointer += "~0";
        else if (c == '/')
            pointer += "~1";
        else
            pointer += c;
    }
}

void cut(json::value& value, std::size_t limit, std::string& pointer,
         std::vector<std::string>& cut_at) {
    if (auto* text = value.if_string()) {
        if (text->size() > limit) {
            auto keep = utf8_prefix(*text, limit).size();
            text->resize(keep);
            cut_at.push_back(pointer);
        }
        return;
    }
    auto length = pointer.size();
    if (auto* object = value.if_object()) {
        for (auto& [key, member] : *object) {
            pointer += '/';
            escape_token(pointer, key);
            cut(member, limit, pointer, cut_at);
            pointer.resize(length);
        }
    } else if (auto* array = value.if_array()) {
        for (std::size_t i = 0; i < array->size(); ++i) {
            pointer += '/';
            pointer += std::to_string(i);
            cut((*array)[i], limit, pointer, cut_at);
            pointer.resize(length);
        }
    }
}

}  // namespace

std::string_view utf8_prefix(std::string_view text, std::size_t limit) {
    if (text.size() <= limit) return text;
    std::size_t end = limit;
    // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return text.substr(0, end);
}

std::vector<std::string> cut_long_strings(json::value& value, std::size_t limit) {
    std::vector<std::string> cut_at;
    std::string pointer;
    cut(value, limit, pointer, cut_at);
    return cut_at;
}

}  // namespace gateway::agent
