#include "gateway/tools/edit_document.hpp"

#include "gateway/tools/diff.hpp"
#include "gateway/tools/text_document.hpp"

namespace gateway::tools {

const tool_spec& edit_document_tool::spec() const {
    static const tool_spec s{
        "edit_document",
        "Replace the first exact occurrence of `find` in the open document with `replace`. The "
        "edit is sent to the user's editor.",
        category::document,
        R"({"type":"object","properties":{
            "find":{"type":"string","minLength":1,"description":"exact text currently in the document"},
            "replace":{"type":"string"}},
            "required":["find","replace"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result edit_document_tool::run(const boost::json::object& p, tool_context& context,
                                    mode how) const {
    if (!context.document) return no_document();
    auto find = string_param(p, "find");
    auto replace = string_param(p, "replace");
    text_document doc(context.document->content);
    auto outcome = replace_first(doc, find, replace);
    if (!outcome) return tool_result::failure(outcome.error_code, outcome.message);
    diff_stats stats;
    auto diff =
        unified_diff(context.document->name, doc.content(), outcome.content, true, true, &stats);
    auto offset = doc.content().find(find);
    boost::json::object data{{"name", context.document->name},
                             {"diff", diff},
                             {"edit", boost::json::object{{"offset", offset},
                                                          {"length", find.size()},
                                                          {"find", find},
                                                          {"replace", replace},
                                                          {"line", doc.line_of(offset)}}},
                             {"applied", how == mode::execute}};
    if (how == mode::preview)
        return tool_result::success("Preview, document not changed yet:\n" + diff, std::move(data));
    context.document->content = outcome.content;
    text_document after(context.document->content);
    return tool_result::success("Edited the document at line " +
                                    std::to_string(doc.line_of(offset)) + ":\n" +
                                    snippet(after, outcome.first_line, outcome.last_line, 1),
                                std::move(data));
}

}  // namespace gateway::tools
