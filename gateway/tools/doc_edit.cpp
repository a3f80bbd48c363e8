#include "gateway/tools/doc_edit.hpp"

#include "gateway/tools/diff.hpp"
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
        "end. create: create the file with file_text. Give `path` for a workspace file, or "
        "`document` (its name) for the document open in the editor.",
        category::writing,
        R"({"type":"object","properties":{
            "command":{"type":"string","enum":["view","str_replace","insert","append","create"]},
            "path":{"type":"string","minLength":1,"description":"file path in the workspace: relative, or from its root with a leading / (/Chapter 5.md); a path ending in / views that folder"},
            "document":{"type":"string","minLength":1,"description":"the name of the document open in the editor, to work on it instead of a file"},
            "old_str":{"type":"string","minLength":1},
            "new_str":{"type":"string"},
            "insert_line":{"type":"integer","minimum":0},
            "file_text":{"type":"string"},
            "view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}},
            "required":["command"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

bool doc_edit_tool::needs_approval_for(const boost::json::object& p) const {
    // Views, and anything on a folder path (refused: it writes nothing), need no approval.
    return string_param(p, "command") != "view" && !string_param(p, "path").ends_with('/');
}

bool doc_edit_tool::uses_document(const boost::json::object& p) const {
    return p.contains("document");
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

// The numbered lines of `text` (all, or view_range), headed by `title`.
tool_result view(const boost::json::object& p, tool_context& context, std::string text,
                 const std::string& title, boost::json::object data) {
    text_document doc(std::move(text));
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
                                         std::to_string(end) + "] is invalid: it has " +
                                         std::to_string(doc.line_count()) +
                                         " lines; use [start, end] with 1 <= start <= end, or -1 "
                                         "as end for the end.");
    }
    auto body = doc.numbered(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
    data["line_count"] = doc.line_count();
    return tool_result::success(
        cap_text(title + " (" + std::to_string(doc.line_count()) + " lines)\n" + body,
                 context.limits.max_result_chars, "Use view_range to view a smaller part."),
        std::move(data));
}

// str_replace, insert or append on `doc`: the new content, or why not (a missing parameter is
// INVALID_PARAMETERS).
edit_outcome edit(const boost::json::object& p, const std::string& command,
                  const text_document& doc) {
    auto lacking = [&](std::string_view name) {
        auto why = missing(name, command);
        return edit_outcome{why.error_code, why.text, "", "", 0, 0};
    };
    auto new_str = optional_string_param(p, "new_str");
    if (command == "str_replace") {
        auto old_str = optional_string_param(p, "old_str");
        if (!old_str) return lacking("old_str");
        return replace_unique(doc, *old_str, new_str.value_or(""));
    }
    if (!new_str) return lacking("new_str");
    if (command == "insert") {
        auto line = optional_int_param(p, "insert_line");
        if (!line) return lacking("insert_line");
        return insert_after(doc, *line, *new_str);
    }
    return append_text(doc, *new_str);
}

// doc_edit on the chat's open document, named by `name`.
tool_result on_document(const boost::json::object& p, tool_context& context,
                        const std::string& command, const std::string& name, mode how) {
    if (!context.document || context.document->name != name)
        return tool_result::failure(
            code::doc_not_found,
            "No open document named " + quoted(name) + "; " +
                (context.document ? "the open document is " + quoted(context.document->name) + "."
                                  : std::string("no document is open in this chat.")));
    if (command == "view")
        return view(p, context, context.document->content, "Document " + quoted(name),
                    {{"name", name}});
    if (command == "create")
        return tool_result::failure(code::invalid_parameters,
                                    "The document " + quoted(name) +
                                        " exists; change it with str_replace, insert or append.");
    text_document doc(context.document->content);
    auto outcome = edit(p, command, doc);
    if (!outcome) return tool_result::failure(outcome.error_code, outcome.message);
    diff_stats stats;
    auto diff = unified_diff(name, doc.content(), outcome.content, true, true, &stats);
    boost::json::object data{{"name", name},
                             {"diff", diff},
                             {"added", stats.added},
                             {"removed", stats.removed},
                             {"applied", how == mode::execute}};
    if (how == mode::preview)
        return tool_result::success("Preview, document not changed yet:\n" + diff, std::move(data));
    context.document->content = std::move(outcome.content);
    text_document after(context.document->content);
    std::string summary = "Edited the document " + quoted(name) + " (" + command + ").";
    if (!outcome.note.empty()) summary += " " + outcome.note;
    return tool_result::success(
        summary + "\n" + snippet(after, outcome.first_line, outcome.last_line), std::move(data));
}

}  // namespace

tool_result doc_edit_tool::run(const boost::json::object& p, tool_context& context,
                               mode how) const {
    auto command = string_param(p, "command");
    auto document = optional_string_param(p, "document");
    if (document.has_value() == p.contains("path"))
        return tool_result::failure(code::invalid_parameters,
                                    "Give either `path` (a workspace file) or `document` (the "
                                    "open document's name), not both and not neither.");
    if (document) return on_document(p, context, command, *document, how);
    if (!context.files) return no_workspace();
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
    if (command == "view") {
        tool_result failure;
        auto text = load_text(context, path, failure);
        if (!text) return failure;
        return view(p, context, std::move(*text), "File " + quoted(path), {{"path", path}});
    }
    if (command == "create") {
        auto text = optional_string_param(p, "file_text");
        if (!text) return missing("file_text", command);
        return create_new_file(context, path, *text, how);
    }

    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before) return failure;
    text_document doc(*before);
    auto outcome = edit(p, command, doc);
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
