#include "gateway/tools/find_files.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/glob.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

#include <algorithm>

namespace gateway::tools {

const tool_spec& find_files_tool::spec() const {
    static const tool_spec s{
        "find_files",
        "Find files whose path matches a glob: `*`, `?`, `[...]`, `{a,b}`, `**` across folders; "
        "a pattern without `/` matches file names at any depth; a leading `!` inverts it. "
        "Sorted, at most 100 results.",
        category::search,
        R"({"type":"object","properties":{
            "pattern":{"type":"string","minLength":1,"description":"glob, e.g. **/*.ts or src/**/test_*.py"},
            "path":{"type":"string","default":".","description":"folder to search in"},
            "exclude":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}],
                       "description":"glob(s) of paths to leave out"}},
            "required":["pattern"],"additionalProperties":false})",
        read_files,
        false};
    return s;
}

tool_result find_files_tool::run(const boost::json::object& p, tool_context& context, mode) const {
    if (!context.files) return no_workspace();
    auto base = normalize_relative(string_param(p, "path", "."));
    std::string pattern = string_param(p, "pattern");
    bool negated = pattern.starts_with('!');
    if (negated) pattern.erase(0, 1);
    std::string error;
    auto wanted = glob::compile(pattern, error);
    if (!wanted.valid()) return tool_result::failure(code::invalid_pattern, error);
    std::vector<glob> excluded;
    std::vector<std::string> exclude_patterns;
    if (auto* e = p.if_contains("exclude")) {
        if (e->is_string()) exclude_patterns.emplace_back(e->as_string());
        if (e->is_array())
            for (const auto& item : e->as_array())
                if (item.is_string()) exclude_patterns.emplace_back(item.as_string());
    }
    for (const auto& x : exclude_patterns) {
        auto compiled = glob::compile(x.starts_with('!') ? x.substr(1) : x, error);
        if (!compiled.valid()) return tool_result::failure(code::invalid_pattern, error);
        excluded.push_back(std::move(compiled));
    }

    auto prefix = base == "." ? std::size_t{0} : base.size() + 1;
    std::vector<std::string> found;
    auto status = walk(context.files->files(), base, {}, [&](const walk_entry& e) {
        if (e.type == entry_type::directory) return walk_action::next;
        // Patterns are relative to the searched folder.
        std::string_view relative = e.path;
        if (prefix && relative.size() > prefix) relative.remove_prefix(prefix);
        if (wanted.matches(relative) == negated) return walk_action::next;
        for (const auto& x : excluded)
            if (x.matches(relative)) return walk_action::next;
        found.push_back(e.path);
        return walk_action::next;
    });
    if (!status) return tool_result::failure(status.error_code, status.message);
    std::sort(found.begin(), found.end());
    auto total = found.size();
    auto cap = static_cast<std::size_t>(context.limits.find_cap);
    std::string text;
    if (total == 0) {
        text = "No files match " + quoted(string_param(p, "pattern")) + " in " + quoted(base) +
               ". A pattern without `/` matches file names; use **/ to span folders.\n";
    } else {
        text = "Found " + std::to_string(total) + (total == 1 ? " file" : " files");
        if (total > cap) text += ", showing the first " + std::to_string(cap);
        text += ":\n";
    }
    boost::json::array files;
    for (std::size_t i = 0; i < std::min(total, cap); ++i) {
        text += found[i] + "\n";
        files.emplace_back(found[i]);
    }
    if (total > cap)
        text += "... " + std::to_string(total - cap) +
                " more. Narrow the pattern or the path, or add an exclude.\n";
    return tool_result::success(
        std::move(text),
        {{"files", std::move(files)}, {"total", total}, {"truncated", total > cap}});
}

}  // namespace gateway::tools
