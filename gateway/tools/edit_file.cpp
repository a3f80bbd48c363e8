#include "gateway/tools/edit_file.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"

namespace gateway::tools {

const tool_spec& edit_file_tool::spec() const {
    static const tool_spec s{
        "edit_file",
        "Replace the whole content of an existing file; the result carries the unified diff. "
        "Prefer doc_edit or edit_lines for small changes.",
        category::writing,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "content":{"type":"string","description":"the complete new content"},
            "description":{"type":"string","description":"one line saying why, shown to the user"}},
            "required":["path","content"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result edit_file_tool::run(const boost::json::object& p, tool_context& context,
                                mode how) const {
    auto path = string_param(p, "path");
    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before) {
        if (failure.error_code == code::not_found)
            failure.text += " Use create_file to create a new file.";
        return failure;
    }
    auto after = string_param(p, "content");
    if (after == *before)
        return tool_result::failure(code::no_change,
                                    "The new content is identical to the current "
                                    "content of " +
                                        quoted(path) + "; nothing to do.");
    return commit_change(context, path, before, after, overwrite::allowed, how,
                         "Replaced the content of " + quoted(path) + ".");
}

}  // namespace gateway::tools
