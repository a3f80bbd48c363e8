#include "gateway/tools/edit_lines.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/text_document.hpp"

namespace gateway::tools {

const tool_spec& edit_lines_tool::spec() const {
    static const tool_spec s{
        "edit_lines",
        "Insert before, delete or replace lines by number (1-based, inclusive). Pass `expected` "
        "(the current text of the lines) to guard against stale line numbers.",
        category::writing,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "operation":{"type":"string","enum":["insert","delete","replace"]},
            "start_line":{"type":"integer","minimum":1},
            "end_line":{"type":"integer","minimum":1,"description":"last line for delete/replace; defaults to start_line"},
            "content":{"type":"string","description":"the new lines for insert/replace"},
            "expected":{"type":"string","description":"current text of start_line..end_line"}},
            "required":["path","operation","start_line"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result edit_lines_tool::run(const boost::json::object& p, tool_context& context,
                                 mode how) const {
    auto path = string_param(p, "path");
    auto operation = string_param(p, "operation");
    auto content = optional_string_param(p, "content");
    if (operation != "delete" && !content)
        return tool_result::failure(code::invalid_parameters,
                                    "`content` is required for " + operation + ".");
    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before) return failure;
    text_document doc(*before);
    auto op = operation == "insert"   ? line_operation::insert
              : operation == "delete" ? line_operation::remove
                                      : line_operation::replace;
    auto expected = optional_string_param(p, "expected");
    auto start = optional_int_param(p, "start_line").value_or(1);
    auto outcome = edit_lines(doc, op, start, optional_int_param(p, "end_line").value_or(0),
                              content.value_or(""), expected ? &*expected : nullptr);
    if (!outcome) return tool_result::failure(outcome.error_code, outcome.message);
    if (outcome.content == *before)
        return tool_result::failure(
            code::no_change, "The edit leaves " + quoted(path) + " unchanged; nothing to do.");
    text_document after(outcome.content);
    auto result = commit_change(context, path, before, outcome.content, overwrite::allowed, how,
                                "Edited " + quoted(path) + " (" + operation + " at line " +
                                    std::to_string(start) + "); it now has " +
                                    std::to_string(after.line_count()) + " lines:",
                                snippet(after, outcome.first_line, outcome.last_line));
    if (result.ok) result.data["line_count"] = after.line_count();
    return result;
}

}  // namespace gateway::tools
