#include "gateway/tools/append_file.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/text_document.hpp"

namespace gateway::tools {

const tool_spec& append_file_tool::spec() const {
    static const tool_spec s{
        "append_file",
        "Append text to the end of a file, on a new line (the file is created when missing).",
        category::writing,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "content":{"type":"string","minLength":1,"description":"text to append"}},
            "required":["path","content"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result append_file_tool::run(const boost::json::object& p, tool_context& context,
                                  mode how) const {
    auto path = string_param(p, "path");
    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before && failure.error_code != code::not_found) return failure;
    text_document doc(before.value_or(""));
    auto outcome = append_text(doc, string_param(p, "content"));
    text_document after(outcome.content);
    return commit_change(context, path, before, outcome.content, overwrite::allowed, how,
                         "Appended to " + quoted(path) + "; it now has " +
                             std::to_string(after.line_count()) + " lines.",
                         snippet(after, outcome.first_line, outcome.last_line));
}

}  // namespace gateway::tools
