#pragma once

#include <optional>
#include <string_view>

namespace gateway {

// How the agent's writes in a chat land: `approve`, each waits for a human's approval; `review`,
// they are made on the AI's versions of the files and recorded in edit sessions for review.
enum class edit_mode { approve, review };

inline std::string_view edit_mode_name(edit_mode m) {
    return m == edit_mode::review ? "review" : "approve";
}

inline std::optional<edit_mode> parse_edit_mode(std::string_view name) {
    if (name == "approve") return edit_mode::approve;
    if (name == "review") return edit_mode::review;
    return std::nullopt;
}

}  // namespace gateway
