#include "gateway/tools/doc_edit.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/list_files.hpp"
#include "gateway/tools/text_document.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

const tool_spec& doc_edit_tool::spec() const {
    static const tool_spec s{
        "doc_edit",
        "A file editor. view: numbered lines (optional view_range [start, end], end -1 for the "
        "end). str_replace: replace old_str, which must occur exactly once, with new_str. "
        "insert: insert new_str after line insert_line (0 = top). append: add new_str at the "
        "end. create: create the file with file_text.",
        category::writing,
        R"({"type":"object","properties":{
            "command":{"type":"string","enum":["view","str_replace","insert","append","create"]},
            "path":{"type":"string","minLength":1,"description":"file path in the workspace: relative, or from its root with a leading / (/Chapter 5.md); a path ending in / views that folder"},
            "old_str":{"type":"string","minLength":1},
            "new_str":{"type":"string"},
            "insert_line":{"type":"integer","minimum":0},
            "file_text":{"type":"string"},
            "view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}},
            "required":["command","path"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

bool doc_edit_tool::needs_approval_for(const boost::json::object& p) const {
    // Views, and anything on a folder path (refused: it writes nothing), need no approval.
    return string_param(p, "command") != "view" && !string_param(p, "path").ends_with('/');
}

namespace {

tool_result missing(std::string_view name, std::string_view command) {
    return tool_result::failure(
        code::invalid_parameters,
        "`" + std::string(name) + "` is required for the `" + std::string(command) + "` command.");
}

// A writer's project path: a leading `/` is the workspace root ("/Chapter 5.md" is
// "Chapter 5.md"), never the file system's; the sandbox still keeps it inside the workspace.
std::string project_path(std::string_view path) {
    while (path.starts_with('/')) path.remove_prefix(1);
    while (path.ends_with('/')) path.remove_suffix(1);
    return path.empty() ? std::string(".") : std::string(path);
}

tool_result view(const boost::json::object& p, tool_context& context, const std::string& path) {
    tool_result failure;
    auto text = load_text(context, path, failure);
    if (!text) return failure;
    text_document doc(std::move(*text));
    long long first = 1, last = static_cast<long long>(doc.line_count());
    if (auto* range = p.if_contains("view_range")) {
        const auto& a = range->as_array();
        first = a[0].to_number<long long>();
        auto end = a[1].to_number<long long>();
        last = end == -1 ? last : end;
        if (first < 1 ||
            first > static_cast<long long>(std::max<std::size_t>(doc.line_count(), 1)) ||
            last < first)
            return tool_result::failure(
                code::invalid_range, "view_range [" + std::to_string(first) + ", " +
                                         std::to_string(end) + "] is invalid: the file has " +
                                         std::to_string(doc.line_count()) +
                                         " lines; use [start, end] with 1 <= start <= end, or -1 "
                                         "as end for the end of the file.");
    }
    auto body = doc.numbered(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
    return tool_result::success(
        cap_text(
            "File " + quoted(path) + " (" + std::to_string(doc.line_count()) + " lines)\n" + body,
            context.limits.max_result_chars, "Use view_range to view a smaller part."),
        {{"path", path}, {"line_count", doc.line_count()}});
}

}  // namespace

tool_result doc_edit_tool::run(const boost::json::object& p, tool_context& context,
                               mode how) const {
    if (!context.files) return no_workspace();
    auto command = string_param(p, "command");
    auto given = string_param(p, "path");
    auto path = project_path(given);
    // A folder (`/`, `/characters/`): its contents, as writers' tools show them.
    if (given.ends_with('/')) {
        if (command != "view")
            return tool_result::failure(
                code::invalid_parameters,
                "`" + given + "` names a folder; `" + command +
                    "` needs a file path (view the folder to see its files).");
        return list_files_tool().run({{"path", path}}, context, how);
    }
    if (command == "view") return view(p, context, path);

    auto new_str = optional_string_param(p, "new_str");
    if (command == "create") {
        auto text = optional_string_param(p, "file_text");
        if (!text) return missing("file_text", command);
        return create_new_file(context, path, *text, how);
    }

    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before) return failure;
    text_document doc(*before);
    edit_outcome outcome;
    if (command == "str_replace") {
        auto old_str = optional_string_param(p, "old_str");
        if (!old_str) return missing("old_str", command);
        outcome = replace_unique(doc, *old_str, new_str.value_or(""));
    } else if (command == "insert") {
        auto line = optional_int_param(p, "insert_line");
        if (!line) return missing("insert_line", command);
        if (!new_str) return missing("new_str", command);
        outcome = insert_after(doc, *line, *new_str);
    } else {  // append
        if (!new_str) return missing("new_str", command);
        outcome = append_text(doc, *new_str);
    }
    if (!outcome) return tool_result::failure(outcome.error_code, outcome.message);
    text_document after(outcome.content);
    std::string summary = "Edited " + quoted(path) + " (" + command + ").";
    if (!outcome.note.empty()) summary += " " + outcome.note;
    auto result = commit_change(context, path, before, outcome.content, overwrite::allowed, how,
                                summary, snippet(after, outcome.first_line, outcome.last_line));
    if (result.ok && !outcome.note.empty()) result.data["tolerant_match"] = true;
    return result;
}

}  // namespace gateway::tools
