#pragma once

#include "gateway/agent/conversation.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/tools/registry.hpp"

#include <optional>
#include <string>
#include <string_view>

// The strict-JSON tool protocol over the typed conversation: how its messages are said to a
// model that is not given tools (a call as our call object, a result as a user turn naming its
// tool), the response format that pins replies to it on a json_schema upstream, and what of a
// reply the parser (tool_call_parser.hpp) reads.
namespace gateway::agent {

// `m` as the JSON protocol says it: an assistant turn's first call as our call object (the
// protocol makes one call a turn; a native turn's others are left out), a tool message's results
// as a user turn ("Result of `tool`:" before a success; a failure says so itself), text as it is.
message protocol_message(const message& m);

// For a json_schema upstream: one branch per tool `role` may use, each pinning the tool's name
// and its parameter schema, and one branch for the final answer ({"answer": "…"}).
providers::json_format protocol_format(const tools::registry& tools, tools::role role);

// With a json_schema upstream the final answer arrives as {"answer": "…"}: its text, or nullopt
// when `content` is not that.
std::optional<std::string> schema_answer(std::string_view content);

// The text the parser reads of a reply: its text, or, when a model answered with a native call
// instead (some insist), its first call restated in the protocol, so that it is judged like any
// other.
std::string protocol_text(const providers::reply& r);

}  // namespace gateway::agent
