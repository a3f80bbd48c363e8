#pragma once

#include <string_view>

// The types of a run's events, as the Context API streams them (docs/context-api.md lists what
// each carries): named once, so an emitter and a reader cannot disagree on a spelling.
namespace gateway::event {

inline constexpr std::string_view run_started = "run.started";
inline constexpr std::string_view run_completed = "run.completed";
inline constexpr std::string_view run_failed = "run.failed";
inline constexpr std::string_view run_cancelled = "run.cancelled";

inline constexpr std::string_view model_requested = "model.requested";
inline constexpr std::string_view model_replied = "model.replied";
inline constexpr std::string_view model_retry = "model.retry";
inline constexpr std::string_view model_salvaged = "model.salvaged";
inline constexpr std::string_view context_trimmed = "context.trimmed";

inline constexpr std::string_view message = "message";
inline constexpr std::string_view message_delta = "message.delta";
inline constexpr std::string_view message_reset = "message.reset";

inline constexpr std::string_view tool_call = "tool.call";
inline constexpr std::string_view tool_result = "tool.result";
// A guardrail masked or withheld a tool's result before the model read it.
inline constexpr std::string_view guardrail_applied = "guardrail.applied";
inline constexpr std::string_view approval_required = "approval.required";
inline constexpr std::string_view approval_resolved = "approval.resolved";
inline constexpr std::string_view write_undone = "write.undone";
inline constexpr std::string_view document_updated = "document.updated";
inline constexpr std::string_view session_updated = "session.updated";
inline constexpr std::string_view session_resolved = "session.resolved";

inline constexpr std::string_view workflow_parameters = "workflow.parameters";
inline constexpr std::string_view step_started = "step.started";
inline constexpr std::string_view step_completed = "step.completed";
inline constexpr std::string_view step_skipped = "step.skipped";

// Whether the event ends its run.
constexpr bool ends_run(std::string_view type) {
    return type == run_completed || type == run_failed || type == run_cancelled;
}

}  // namespace gateway::event
