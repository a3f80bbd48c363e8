#pragma once

#include "gateway/tools/tool.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

namespace gateway::tools {
class registry;
}

namespace gateway::agent {

// Why a model reply could not be used. Each class has its own feedback for the model.
enum class failure {
    none,
    no_json,           // a tool call was clearly attempted, but there is no JSON object
    invalid_json,      // an object is there but is not valid JSON (position and excerpt)
    multiple_calls,    // more than one call object in one reply
    unknown_tool,      // the tool does not exist for this chat's role (valid names listed)
    schema_violation,  // the parameters fail the tool's schema (JSON pointer named)
    truncated,         // finish_reason "length": the reply was cut off
};

// "NO_JSON", "INVALID_JSON", … as used in events and errors.
std::string_view failure_name(failure f);

// A call in the protocol's normalised form, as it goes into the history (the model learns the
// clean form): {"tool": …, "parameters": {…}, "terminate": …}.
std::string call_text(std::string_view tool, const boost::json::object& parameters, bool terminate);

struct tool_call {
    std::string tool;
    boost::json::object parameters;
    bool terminate = false;
};

// One model reply, understood. `final_answer`: the text is the answer. `call`: a validated tool
// call. `malformed`: `reason` says why, and `message` is the precise feedback to send back.
struct parsed_reply {
    enum class kind { final_answer, call, malformed };
    kind what = kind::final_answer;
    std::string answer;
    tool_call call;
    failure reason = failure::none;
    std::string message;
};

// Parses a reply per the agent protocol: plain text is a final answer; otherwise the first
// balanced top-level JSON object (string- and escape-aware) that looks like a call is taken, with
// code fences and prose around it tolerated. `name` and `arguments` are accepted as aliases for
// `tool` and `parameters`; parameters given as a JSON string are parsed again. The shapes of
// native function calling written as text ({"type": "function", "function": {"name",
// "arguments"}}, a "tool_calls" array of them) are calls when they name a known tool. The tool must
// be in `role`'s part of `tools` and the parameters must satisfy its schema. Never throws; the
// input is bounded by the caller (the upstream body limit) and JSON depth is limited here.
parsed_reply parse_reply(std::string_view text, std::string_view finish_reason,
                         const tools::registry& tools, tools::role role);

}  // namespace gateway::agent
