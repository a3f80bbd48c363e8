#include "gateway/tools/delete_file.hpp"

#include "gateway/tools/diff.hpp"
#include "gateway/tools/digest.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

const tool_spec& delete_file_tool::spec() const {
    static const tool_spec s{"delete_file",
                             "Delete a file (not a folder). The user can undo the deletion.",
                             category::management,
                             R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"}},
            "required":["path"],"additionalProperties":false})",
                             delete_files,
                             true};
    return s;
}

tool_result delete_file_tool::run(const boost::json::object& p, tool_context& context,
                                  mode how) const {
    auto path = normalize_relative(string_param(p, "path"));
    tool_result failure;
    auto before = load_text(context, path, failure);
    // Only files whose content can be kept for undo (by the run engine) are deleted: binary and
    // oversized files are refused with the reason from load_text.
    if (!before) return failure;
    diff_stats stats;
    auto diff = unified_diff(path, *before, "", true, false, &stats);
    boost::json::object data{{"path", path},
                             {"diff", diff},
                             {"removed", stats.removed},
                             {"applied", how == mode::execute},
                             {"before_sha256", sha256_hex(*before)},
                             {"after_sha256", ""}};
    if (how == mode::preview)
        return tool_result::success("Preview, nothing deleted yet: delete " + quoted(path) + " (" +
                                        std::to_string(stats.removed) + " lines).",
                                    std::move(data));
    if (context.pending && context.pending->record) {
        context.pending->put(path, std::nullopt);
    } else {
        auto removed = context.files->remove(path);
        if (!removed) return tool_result::failure(removed.error_code, removed.message);
    }
    return tool_result::success("Deleted " + quoted(path) + ".", std::move(data));
}

}  // namespace gateway::tools
