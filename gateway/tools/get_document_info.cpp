#include "gateway/tools/get_document_info.hpp"

#include "gateway/tools/text_document.hpp"

namespace gateway::tools {

const tool_spec& get_document_info_tool::spec() const {
    static const tool_spec s{
        "get_document_info",
        "Describe the open document: name, lines, words, characters and the user's selection.",
        category::document,
        R"({"type":"object","properties":{},"additionalProperties":false})",
        read_files,
        false};
    return s;
}

namespace {

// UTF-8 code points, which is what a user calls characters.
std::size_t characters(std::string_view text) {
    std::size_t n = 0;
    for (unsigned char c : text)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

}  // namespace

tool_result get_document_info_tool::run(const boost::json::object&, tool_context& context,
                                        mode) const {
    if (!context.document) return no_document();
    const auto& d = *context.document;
    text_document doc(d.content);
    boost::json::object data{{"name", d.name},
                             {"lines", doc.line_count()},
                             {"words", doc.word_count()},
                             {"characters", characters(d.content)}};
    std::string text = "Document: \"" + d.name + "\"\nLines: " + std::to_string(doc.line_count()) +
                       "\nWords: " + std::to_string(doc.word_count()) +
                       "\nCharacters: " + std::to_string(characters(d.content)) + "\n";
    if (d.selection_start && d.selection_end && *d.selection_start <= *d.selection_end &&
        *d.selection_end <= d.content.size()) {
        auto selected = std::string_view(d.content).substr(*d.selection_start,
                                                           *d.selection_end - *d.selection_start);
        auto first = doc.line_of(*d.selection_start);
        auto last = doc.line_of(*d.selection_end > *d.selection_start ? *d.selection_end - 1
                                                                      : *d.selection_start);
        text += "Selection: lines " + std::to_string(first) + "-" + std::to_string(last) + ", " +
                std::to_string(characters(selected)) + " characters:\n" +
                std::string(selected.substr(0, 2000)) + "\n";
        data["selection"] = boost::json::object{{"start_line", first},
                                                {"end_line", last},
                                                {"text", std::string(selected.substr(0, 2000))}};
    } else {
        text += "Selection: none\n";
    }
    return tool_result::success(std::move(text), std::move(data));
}

}  // namespace gateway::tools
