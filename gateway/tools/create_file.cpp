#include "gateway/tools/create_file.hpp"

#include "gateway/tools/file_change.hpp"

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
    return create_new_file(context, string_param(p, "path"), string_param(p, "content"), how);
}

}  // namespace gateway::tools
