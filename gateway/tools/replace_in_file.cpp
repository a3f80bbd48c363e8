#include "gateway/tools/replace_in_file.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/file_change.hpp"
#include "gateway/tools/text_document.hpp"

#include <re2/re2.h>

namespace gateway::tools {

const tool_spec& replace_in_file_tool::spec() const {
    static const tool_spec s{
        "replace_in_file",
        "Replace every occurrence of a literal text or RE2 regular expression in a file "
        "(`\\1` in `replace` refers to a regex group). preview_only returns the diff without "
        "writing. Zero matches is not an error.",
        category::writing,
        R"({"type":"object","properties":{
            "path":{"type":"string","minLength":1,"description":"file path relative to the workspace root"},
            "find":{"type":"string","minLength":1,"description":"text or regular expression to find"},
            "replace":{"type":"string","description":"replacement text"},
            "is_regex":{"type":"boolean","default":false},
            "preview_only":{"type":"boolean","default":false}},
            "required":["path","find","replace"],"additionalProperties":false})",
        write_files,
        true};
    return s;
}

tool_result replace_in_file_tool::run(const boost::json::object& p, tool_context& context,
                                      mode how) const {
    auto path = string_param(p, "path");
    auto find = string_param(p, "find");
    auto replace = string_param(p, "replace");
    tool_result failure;
    auto before = load_text(context, path, failure);
    if (!before) return failure;

    std::string after = *before;
    int count = 0;
    if (bool_param(p, "is_regex", false)) {
        RE2::Options options;
        options.set_log_errors(false);
        RE2 re(find, options);
        if (!re.ok())
            return tool_result::failure(code::invalid_regex, "Invalid regular expression " +
                                                                 quoted(find) + ": " + re.error());
        std::string rewrite_error;
        if (!re.CheckRewriteString(replace, &rewrite_error))
            return tool_result::failure(
                code::invalid_regex,
                "Invalid replacement " + quoted(replace) + ": " + rewrite_error);
        count = RE2::GlobalReplace(&after, re, replace);
    } else {
        text_document doc(*before);
        auto found = doc.find_all(find);
        count = static_cast<int>(found.size());
        std::string rebuilt;
        std::size_t last = 0;
        for (auto offset : found) {
            rebuilt.append(*before, last, offset - last);
            rebuilt += replace;
            last = offset + find.size();
        }
        rebuilt.append(*before, last);
        after = std::move(rebuilt);
    }
    auto summary = std::to_string(count) + (count == 1 ? " replacement" : " replacements") +
                   " in " + quoted(path) + ".";
    if (count == 0 || after == *before)
        return tool_result::success(summary + " The file was not modified.",
                                    {{"path", path}, {"replacements", count}, {"diff", ""}});
    auto result =
        commit_change(context, path, before, after, overwrite::allowed,
                      bool_param(p, "preview_only", false) ? mode::preview : how, summary);
    if (result.ok) result.data["replacements"] = count;
    return result;
}

}  // namespace gateway::tools
