#include "gateway/tools/read_file.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/text_document.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

const tool_spec& read_file_tool::spec() const {
    static const tool_spec s{
        "read_file",
        "Read a text file as numbered lines (`cat -n` style) with a header giving the total. "
        "Files over 200 KB need start_line/end_line.",
        category::reading,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "start_line":{"type":"integer","minimum":1},
            "end_line":{"type":"integer","minimum":1}},
            "required":["path"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

tool_result read_file_tool::run(const boost::json::object& p, tool_context& context, mode) const {
    if (!context.files) return no_workspace();
    auto path = string_param(p, "path");
    auto start = optional_int_param(p, "start_line");
    auto end = optional_int_param(p, "end_line");
    bool ranged = start || end;
    auto file = read_view(context, path,
                          ranged ? context.limits.max_file_bytes : context.limits.max_read_bytes);
    if (!file) {
        if (file.error_code == code::file_too_large && !ranged)
            file.message +=
                " Read it in parts with start_line and end_line (for example 1-400), "
                "or use search_files to find the lines you need.";
        return tool_result::failure(file.error_code, file.message);
    }
    text_document doc(std::move(file.text));
    auto total = static_cast<long long>(doc.line_count());
    long long first = start.value_or(1), last = end.value_or(total);
    if (total == 0)
        return tool_result::success("File " + quoted(path) + " is empty (0 lines).",
                                    {{"path", path}, {"line_count", 0}});
    if (first > total)
        return tool_result::failure(code::invalid_range,
                                    "start_line " + std::to_string(first) + " is past the end of " +
                                        quoted(path) + " (" + std::to_string(total) + " lines).");
    if (last < first)
        return tool_result::failure(code::invalid_range, "end_line " + std::to_string(last) +
                                                             " is before start_line " +
                                                             std::to_string(first) + ".");
    last = std::min(last, total);
    std::string header = "File " + quoted(path) + " (" + std::to_string(total) + " lines";
    if (first != 1 || last != total)
        header += ", showing " + std::to_string(first) + "-" + std::to_string(last);
    header += ")\n";
    auto body = doc.numbered(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
    return tool_result::success(
        cap_text(header + body, context.limits.max_result_chars,
                 "Read the rest with start_line and end_line."),
        {{"path", path}, {"line_count", total}, {"start_line", first}, {"end_line", last}});
}

}  // namespace gateway::tools
