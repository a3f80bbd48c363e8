#include "gateway/mcp/results.hpp"

#include "gateway/json_fields.hpp"
#include "gateway/tools/error_codes.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::mcp {

namespace json = boost::json;

namespace {

// Bytes a base64 text decodes to (close enough to tell the model how large it is).
std::size_t decoded_size(std::string_view base64) {
    auto padding = base64.ends_with("==") ? 2u : base64.ends_with('=') ? 1u : 0u;
    return base64.size() / 4 * 3 - std::min<std::size_t>(padding, base64.size() / 4 * 3);
}

std::string described(const json::object& item) {
    auto type = string_of(item, "type");
    if (type == "image" || type == "audio") {
        auto mime = string_of(item, "mimeType");
        return "[" + type + (mime.empty() ? "" : " " + mime) + ", " +
               std::to_string(decoded_size(string_of(item, "data"))) +
               " bytes: not shown to the model]";
    }
    if (type == "resource_link") {
        auto name = string_of(item, "name");
        return "[resource link " + string_of(item, "uri") +
               (name.empty() ? "" : " (" + name + ")") + "]";
    }
    if (type == "resource") {
        const auto* r = item.if_contains("resource");
        const auto* resource = r ? r->if_object() : nullptr;
        if (!resource) return "[resource without content]";
        auto uri = string_of(*resource, "uri");
        if (const auto* text = resource->if_contains("text"); text && text->is_string())
            return "[resource " + uri + "]\n" + std::string(text->as_string());
        auto mime = string_of(*resource, "mimeType");
        return "[resource " + uri + (mime.empty() ? "" : " " + mime) + ", " +
               std::to_string(decoded_size(string_of(*resource, "blob"))) +
               " bytes: not shown to the model]";
    }
    return "[content of type `" + type + "`: not shown to the model]";
}

}  // namespace

tools::tool_result to_tool_result(const json::value& result, std::size_t max_bytes) {
    const auto* o = result.if_object();
    if (!o)
        return tools::tool_result::failure(tools::code::mcp_error,
                                           "The MCP server's result is not an object.");
    std::string text;
    json::array kinds;
    if (const auto* content = o->if_contains("content"); content && content->is_array())
        for (const auto& v : content->as_array()) {
            const auto* item = v.if_object();
            if (!item) continue;
            auto type = string_of(*item, "type");
            kinds.push_back(json::string(type));
            if (!text.empty() && !text.ends_with('\n')) text += '\n';
            text += type == "text" ? string_of(*item, "text") : described(*item);
        }
    json::object data{{"content_types", std::move(kinds)}};
    if (const auto* structured = o->if_contains("structuredContent")) {
        auto serialized = json::serialize(*structured);
        if (serialized.size() <= max_bytes)
            data["structured"] = *structured;
        else
            data["structured_omitted_bytes"] = serialized.size();
        if (text.empty()) text = std::move(serialized);
    }
    text = tools::cap_text(std::move(text), max_bytes,
                           "The MCP server's result was larger than its max_output_bytes; ask "
                           "the tool for less.");
    const auto* error = o->if_contains("isError");
    if (error && error->is_bool() && error->as_bool()) {
        auto failure = tools::tool_result::failure(
            tools::code::mcp_tool_error, text.empty() ? "The tool reported an error." : text);
        failure.data = std::move(data);
        return failure;
    }
    return tools::tool_result::success(std::move(text), std::move(data));
}

}  // namespace gateway::mcp
