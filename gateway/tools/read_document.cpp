#include "gateway/tools/read_document.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/text_document.hpp"

namespace gateway::tools {

const tool_spec& read_document_tool::spec() const {
    static const tool_spec s{
        "read_document",
        "Read the document open in the chat as numbered lines, optionally a range.",
        category::document,
        R"({"type":"object","properties":{
            "start_line":{"type":"integer","minimum":1},
            "end_line":{"type":"integer","minimum":1}},
            "additionalProperties":false})",
        read_files,
        false};
    return s;
}

tool_result read_document_tool::run(const boost::json::object& p, tool_context& context,
                                    mode) const {
    if (!context.document) return no_document();
    text_document doc(context.document->content);
    auto total = static_cast<long long>(doc.line_count());
    long long first = optional_int_param(p, "start_line").value_or(1);
    long long last = std::min(optional_int_param(p, "end_line").value_or(total), total);
    std::string header = "Document: \"" + context.document->name + "\" (" + std::to_string(total) +
                         " lines, " + std::to_string(doc.word_count()) + " words)";
    if (total > 0 && (first > total || last < first))
        return tool_result::failure(code::invalid_range,
                                    "Lines " + std::to_string(first) + "-" + std::to_string(last) +
                                        " are out of range; the document has " +
                                        std::to_string(total) + " lines.");
    if (first != 1 || last != total)
        header += ", showing lines " + std::to_string(first) + "-" + std::to_string(last);
    return tool_result::success(
        cap_text(header + "\n" +
                     doc.numbered(static_cast<std::size_t>(first), static_cast<std::size_t>(last)),
                 context.limits.max_result_chars, "Read the rest with start_line and end_line."),
        {{"name", context.document->name}, {"line_count", total}});
}

}  // namespace gateway::tools
