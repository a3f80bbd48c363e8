#include "gateway/tools/file_change.hpp"

#include "gateway/tools/diff.hpp"
#include "gateway/tools/digest.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/tools/text_document.hpp"
#include "gateway/tools/walker.hpp"
#include "gateway/tools/workspace.hpp"

namespace gateway::tools {

file_content read_view(const tool_context& context, std::string_view path, std::size_t limit) {
    if (context.pending) {
        auto relative = normalize_relative(path);
        if (const auto* pending = context.pending->find(relative)) {
            if (!*pending)
                return {"", code::not_found,
                        "File " + quoted(relative) +
                            " was deleted by an edit awaiting review (it is still on disk until "
                            "the user accepts)."};
            if (limit && (*pending)->size() > limit)
                return {"", code::file_too_large,
                        "File " + quoted(relative) + " is " + std::to_string((*pending)->size()) +
                            " bytes, over the limit of " + std::to_string(limit) + " bytes."};
            return {**pending, "", ""};
        }
    }
    return context.files->read(path, limit);
}

std::optional<std::string> load_text(tool_context& context, std::string_view path,
                                     tool_result& failure) {
    if (!context.files) {
        failure = no_workspace();
        return std::nullopt;
    }
    auto file = read_view(context, path, context.limits.max_file_bytes);
    if (!file) {
        failure = tool_result::failure(file.error_code, file.message);
        return std::nullopt;
    }
    return std::move(file.text);
}

tool_result commit_change(tool_context& context, std::string_view path,
                          const std::optional<std::string>& before, const std::string& after,
                          overwrite policy, mode how, const std::string& summary,
                          const std::optional<std::string>& detail) {
    if (!context.files) return no_workspace();
    if (after.size() > context.limits.max_write_bytes)
        return tool_result::failure(
            code::file_too_large, "The new content of " + quoted(path) + " would be " +
                                      std::to_string(after.size()) + " bytes, over the limit of " +
                                      std::to_string(context.limits.max_write_bytes) + " bytes.");
    auto relative = normalize_relative(path);
    diff_stats stats;
    auto diff =
        unified_diff(relative, before.value_or(""), after, before.has_value(), true, &stats);
    boost::json::object data{{"path", relative},
                             {"diff", diff},
                             {"added", stats.added},
                             {"removed", stats.removed},
                             {"applied", how == mode::execute},
                             {"before_sha256", before ? sha256_hex(*before) : std::string()},
                             {"after_sha256", sha256_hex(after)}};
    auto limit = context.limits.max_result_chars;
    if (how == mode::preview)
        return tool_result::success(
            cap_text("Preview, nothing written yet: " + summary + "\n" + diff, limit,
                     "The full diff is in the result data."),
            std::move(data));
    if (context.pending && context.pending->record) {
        context.pending->put(relative, after);
    } else {
        auto written = context.files->write(relative, after, policy);
        if (!written) return tool_result::failure(written.error_code, written.message);
    }
    std::string text = summary;
    text +=
        " (+" + std::to_string(stats.added) + " -" + std::to_string(stats.removed) + " lines)\n";
    text += detail ? *detail : diff;
    return tool_result::success(cap_text(std::move(text), limit, "Use read_file to see more."),
                                std::move(data));
}

tool_result create_new_file(tool_context& context, std::string_view path,
                            const std::string& content, mode how) {
    if (!context.files) return no_workspace();
    // This check gives the preview its answer; the write refuses an existing file atomically.
    auto existing = read_view(context, path, 0);
    if (existing || existing.error_code == code::file_too_large ||
        existing.error_code == code::binary_file)
        return tool_result::failure(
            code::file_exists,
            "File " + quoted(path) + " already exists; use edit_file or doc_edit to change it.");
    if (existing.error_code != code::not_found)
        return tool_result::failure(existing.error_code, existing.message);
    return commit_change(context, path, std::nullopt, content, overwrite::refused, how,
                         "Created " + quoted(path) + " with " +
                             std::to_string(text_document(content).line_count()) + " lines.",
                         "");
}

}  // namespace gateway::tools
