#pragma once

#include "gateway/providers/conversation.hpp"
#include "gateway/store/records.hpp"

#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// A run's conversation, typed: the providers' message model, in the live run, in its stored
// state and in the store. Calls are tool_call parts and results tool_result parts in both tool
// protocols; the JSON protocol renders them as text (json_protocol.hpp), native mode hands them
// to the provider's adapter as they are.
namespace gateway::agent {

using message = providers::message;
using conversation = std::vector<message>;

inline message user_text(std::string text) {
    return message::of_text(providers::role::user, std::move(text));
}
inline message assistant_text(std::string text) {
    return message::of_text(providers::role::assistant, std::move(text));
}

// A call of the JSON protocol as the conversation keeps it: its terminate flag rides in the
// call's provider_meta, which no adapter sends.
providers::tool_call protocol_call(std::string id, std::string tool, boost::json::object parameters,
                                   bool terminate);
bool terminates(const providers::tool_call& c);

// A conversation message as a run_messages row (format 2), and a row back: format 2 is the
// message's JSON; format 1 (rows written before the conversation was typed) is a role and its
// content, read by read_legacy.
store::run_message_record message_row(const std::string& run_id, std::int64_t seq,
                                      const message& m);
boost::system::result<message> message_of_row(const store::run_message_record& row);

// A message as an older build stored it: "user" and "assistant" with their text; a native turn
// as "assistant_calls" ({"text", "calls": [{"id", "name", "arguments", "provider_meta"}]}) and
// its result as "tool" ({"call_id", "name", "content", "is_error"}).
boost::system::result<message> read_legacy(std::string_view role, std::string_view content);

// A message of a stored run state: its JSON form, or {"role", "content"} (states before
// version 4).
boost::system::result<message> read_message(const boost::json::value& v);

// About how many bytes `m` takes in a request, for the upstream's context budget.
std::size_t approx_bytes(const message& m);

}  // namespace gateway::agent
