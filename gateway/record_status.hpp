#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

// The statuses of a run, of a tool call and of an edit session: typed everywhere inside the
// gateway, mapped to their names only where they cross into a database row or the API's JSON.
// Here, below both the store that keeps them and the agent and sessions that change them.
namespace gateway {

enum class run_status { running, awaiting_approval, completed, failed, cancelled };

enum class tool_call_status {
    pending,
    awaiting_approval,
    approved,
    rejected,
    executing,
    done,
    failed,
    cancelled,
    expired
};

enum class edit_session_status { open, accepted, rejected };

namespace detail {

// Each status's name, in the enum's order.
inline constexpr std::array<std::string_view, 5> run_status_names{
    "running", "awaiting_approval", "completed", "failed", "cancelled"};
inline constexpr std::array<std::string_view, 9> tool_call_status_names{
    "pending", "awaiting_approval", "approved", "rejected", "executing", "done",
    "failed",  "cancelled",         "expired"};
inline constexpr std::array<std::string_view, 3> edit_session_status_names{"open", "accepted",
                                                                           "rejected"};

template <class Status, std::size_t N>
constexpr std::optional<Status> status_named(const std::array<std::string_view, N>& names,
                                             std::string_view name) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == name) return static_cast<Status>(i);
    return std::nullopt;
}

}  // namespace detail

// The name a status is stored and shown by.
constexpr std::string_view status_name(run_status s) {
    return detail::run_status_names[static_cast<std::size_t>(s)];
}
constexpr std::string_view status_name(tool_call_status s) {
    return detail::tool_call_status_names[static_cast<std::size_t>(s)];
}
constexpr std::string_view status_name(edit_session_status s) {
    return detail::edit_session_status_names[static_cast<std::size_t>(s)];
}

// The status a name stands for; nullopt for any other text (a reader decides what that means: a
// row holding one is corrupt).
constexpr std::optional<run_status> parse_run_status(std::string_view name) {
    return detail::status_named<run_status>(detail::run_status_names, name);
}
constexpr std::optional<tool_call_status> parse_tool_call_status(std::string_view name) {
    return detail::status_named<tool_call_status>(detail::tool_call_status_names, name);
}
constexpr std::optional<edit_session_status> parse_edit_session_status(std::string_view name) {
    return detail::status_named<edit_session_status>(detail::edit_session_status_names, name);
}

// completed, failed and cancelled: the run will not change again.
constexpr bool is_final(run_status s) {
    return s == run_status::completed || s == run_status::failed || s == run_status::cancelled;
}

}  // namespace gateway
