#include "gateway/agent/status_phrase.hpp"

namespace gateway::agent {

namespace {

std::string value_of(const boost::json::object& parameters, std::string_view key) {
    const auto* v = parameters.if_contains(key);
    if (!v || !v->is_string()) return {};
    std::string text(v->as_string());
    constexpr std::size_t longest = 60;
    if (text.size() > longest) {
        // Cut at a character boundary: never inside a UTF-8 sequence.
        std::size_t cut = longest;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text = text.substr(0, cut) + "…";
    }
    return text;
}

}  // namespace

std::string status_phrase(std::string_view tool, const boost::json::object& parameters) {
    auto path = value_of(parameters, "path");
    auto quoted = [](const std::string& text) { return "“" + text + "”"; };
    if (tool == "read_file") return "Reading " + path;
    if (tool == "search_files") return "Searching for " + quoted(value_of(parameters, "pattern"));
    if (tool == "find_files") return "Finding files " + quoted(value_of(parameters, "pattern"));
    if (tool == "list_files") return path.empty() ? "Listing the workspace" : "Listing " + path;
    if (tool == "find_definition")
        return "Finding the definition of " + value_of(parameters, "symbol");
    if (tool == "find_importers")
        return "Finding what imports " + value_of(parameters, "module_path");
    if (tool == "create_file") return "Creating " + path;
    if (tool == "delete_file") return "Deleting " + path;
    if (tool == "edit_file" || tool == "append_file" || tool == "replace_in_file" ||
        tool == "edit_lines" || tool == "doc_edit")
        return path.empty() ? "Editing the document" : "Editing " + path;
    if (tool == "read_document") return "Reading the document";
    if (tool == "search_document")
        return "Searching the document for " + quoted(value_of(parameters, "query"));
    if (tool == "edit_document") return "Editing the document";
    if (tool == "get_document_info") return "Looking at the document";
    return "Running " + std::string(tool);
}

}  // namespace gateway::agent
