#pragma once

#include "gateway/agent/live_run.hpp"
#include "gateway/error.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gateway::agent {

// What may be asked of a run while it is driven: applied by the registry where the run is live,
// carried by the replica link to the replica that drives it otherwise. One type, so a new
// command is a new alternative the compiler makes every visitor handle.

// The human's decision on a call awaiting approval.
struct decide_command {
    std::string call_id;
    decision choice;
};
// Stop the run; it ends as `cancelled`.
struct cancel_command {};
// Append an event to the run's stream (numbered by whoever drives the run).
struct announce_command {
    std::string type;
    boost::json::object data;
};

using run_command = std::variant<decide_command, cancel_command, announce_command>;

// How a command went: nothing, or why it was refused.
using command_answer = std::optional<refusal>;

// The command's name on the wire ("decide", "cancel", "announce").
std::string_view kind_of(const run_command& command);

// JSON conversions (Boost.JSON value_from / try_value_to): a command is {"kind": …, its
// fields}; an answer is {} or {"refusal": {"code": …, "message": …}}. A command that does not
// read as one is an error, not a default.
void tag_invoke(boost::json::value_from_tag, boost::json::value& out, const run_command& command);
boost::json::result<run_command> tag_invoke(boost::json::try_value_to_tag<run_command>,
                                            const boost::json::value& in);
boost::json::object answer_json(const command_answer& answer);
command_answer answer_of(const boost::json::value& in);

}  // namespace gateway::agent
