#include "gateway/tools/create_file.hpp"

#include "gateway/tools/file_change.hpp"
#include "gateway/tools/text_document.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

const tool_spec& create_file_tool::spec() const {
    static const tool_spec s{
        "create_file",
        "Create a new file with the given content (parent folders are created). Refuses to "
        "overwrite an existing file (FILE_EXISTS).",
        category::writing,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "content":{"type":"string","description":"the whole content of the new file"},
            "description":{"type":"string","description":"one line saying why, shown to the user"}},
            "required":["path","content"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result create_file_tool::run(const boost::json::object& p, tool_context& context,
                                  mode how) const {
    if (!context.files) return no_workspace();
    auto path = string_param(p, "path");
    auto content = string_param(p, "content");
    // The existence check here is for the preview; the write itself refuses atomically.
    auto existing = context.files->read(path, 0);
    if (existing || existing.error_code == "FILE_TOO_LARGE" || existing.error_code == "BINARY_FILE")
        return tool_result::failure(
            "FILE_EXISTS",
            "File " + quoted(path) + " already exists; use edit_file or doc_edit to change it.");
    if (existing.error_code != "NOT_FOUND")
        return tool_result::failure(existing.error_code, existing.message);
    text_document doc(content);
    return commit_change(
        context, path, std::nullopt, content, overwrite::refused, how,
        "Created " + quoted(path) + " with " + std::to_string(doc.line_count()) + " lines.", " ");
}

}  // namespace gateway::tools
