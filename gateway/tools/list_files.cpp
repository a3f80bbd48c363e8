#include "gateway/tools/list_files.hpp"

#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>

namespace gateway::tools {

const tool_spec& list_files_tool::spec() const {
    static const tool_spec s{
        "list_files",
        "List a folder's entries with type, size and modification time (recursive optional). "
        ".gitignore is honoured; .git, node_modules and build folders are skipped.",
        category::search,
        R"({"type":"object","properties":{
            "path":{"type":"string","default":".","description":"folder relative to the workspace root"},
            "recursive":{"type":"boolean","default":false}},
            "additionalProperties":false})",
        read_files,
        false};
    return s;
}

namespace {

const char* type_name(entry_type type) {
    switch (type) {
        case entry_type::file:
            return "file";
        case entry_type::directory:
            return "dir";
        case entry_type::symlink:
            return "link";
        case entry_type::other:
            return "other";
    }
    return "other";
}

}  // namespace

tool_result list_files_tool::run(const boost::json::object& p, tool_context& context, mode) const {
    if (!context.files) return no_workspace();
    auto path = normalize_relative(string_param(p, "path", "."));
    bool recursive = bool_param(p, "recursive", false);
    int cap = context.limits.list_cap;
    int total = 0;
    std::string lines;
    boost::json::array entries;
    std::vector<std::string> on_disk;  // listed paths that have pending edits
    auto status = walk(context.files->files(), path, {recursive, true}, [&](const walk_entry& e) {
        if (++total > cap) return walk_action::next;  // keep counting what is not shown
        struct stat info {};
        ::fstatat(e.dir_fd, e.name, &info, AT_SYMLINK_NOFOLLOW);
        char when[32] = "";
        std::tm utc{};
        ::gmtime_r(&info.st_mtime, &utc);
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", &utc);
        char line[64];
        std::snprintf(line, sizeof line, "%-5s %10lld  %s  ", type_name(e.type),
                      static_cast<long long>(info.st_size), when);
        lines += line;
        lines += e.path;
        if (e.type == entry_type::directory) lines += '/';
        boost::json::object entry{{"path", e.path},
                                  {"type", type_name(e.type)},
                                  {"size", static_cast<long long>(info.st_size)},
                                  {"modified", static_cast<long long>(info.st_mtime)}};
        if (const auto* pending = context.pending ? context.pending->find(e.path) : nullptr) {
            lines += *pending ? "  (pending: edited, awaiting review)"
                              : "  (pending: deleted, awaiting review)";
            entry["pending"] = *pending ? "edited" : "deleted";
            on_disk.push_back(e.path);
        }
        lines += '\n';
        entries.push_back(std::move(entry));
        return walk_action::next;
    });
    // A folder that only pending edits created is listed from them.
    bool pending_folder = !status && status.error_code == code::not_found && context.pending &&
                          std::any_of(context.pending->files.begin(), context.pending->files.end(),
                                      [&](const auto& f) {
                                          return f.second && f.first.size() > path.size() &&
                                                 f.first.starts_with(path) &&
                                                 f.first[path.size()] == '/';
                                      });
    if (!status && !pending_folder) return tool_result::failure(status.error_code, status.message);
    // Files the agent created in review mode are not on disk yet: listed as pending.
    if (context.pending)
        for (const auto& [file, content] : context.pending->files) {
            if (!content || std::find(on_disk.begin(), on_disk.end(), file) != on_disk.end())
                continue;
            auto slash = file.rfind('/');
            auto folder = slash == std::string::npos ? std::string(".") : file.substr(0, slash);
            bool inside = recursive
                              ? path == "." || (file.size() > path.size() &&
                                                file.starts_with(path) && file[path.size()] == '/')
                              : folder == path;
            if (!inside || ++total > cap) continue;
            char line[64];
            std::snprintf(line, sizeof line, "%-5s %10zu  %-16s  ", "file", content->size(),
                          "pending");
            lines += line;
            lines += file + "  (pending: created, awaiting review)\n";
            entries.push_back(boost::json::object{{"path", file},
                                                  {"type", "file"},
                                                  {"size", content->size()},
                                                  {"pending", "created"}});
        }
    std::string text = "Contents of " + quoted(path) + (recursive ? " (recursive)" : "") + ": " +
                       std::to_string(total) + (total == 1 ? " entry" : " entries") + "\n" + lines;
    if (total > cap)
        text += "... and " + std::to_string(total - cap) +
                " more entries not shown. Narrow the listing with a subfolder path, list "
                "without recursive, or use find_files with a pattern.\n";
    return tool_result::success(std::move(text), {{"path", path},
                                                  {"entries", std::move(entries)},
                                                  {"total", total},
                                                  {"truncated", total > cap}});
}

}  // namespace gateway::tools
