#pragma once

#include "gateway/http/request_values.hpp"
#include "gateway/prompts/prompt_library.hpp"
#include "gateway/store/records.hpp"
#include "gateway/workflows/workflow.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// How the Context API shows its resources as JSON, and reads its paging parameters. Pure
// functions.
namespace gateway::context {

namespace json = boost::json;

json::object chat_json(const store::chat_record& c);
json::object message_json(const store::message_record& m);
json::object prompt_json(const prompts::prompt& p);
json::object workflow_json(const workflows::workflow& w);
// A tool call whole, as GET /context/runs/{id}/calls/{call_id} shows it.
json::object tool_call_json(const store::tool_call_record& t);

// `item` with its long strings cut to `limit` bytes; when any was, `truncated` lists their JSON
// pointers and `full` names the resource that has them whole.
json::value excerpt_of(json::object item, std::size_t limit, const std::string& full);

// A run as the API shows it: its calls as excerpts (each names its own URL for the whole call),
// `pending_approval`, the call awaiting a decision, and what its model calls used and cost
// (`usage`, `model_calls`, `cost_usd`, `unpriced_calls`, `estimated_calls`). `input` is the user
// message that started it; when `whole` is false (the chat view, whose messages carry input and
// output) the run's own long texts are cut too.
json::value run_json(const store::run_record& r, const std::vector<store::tool_call_record>& calls,
                     const std::optional<std::string>& input, std::size_t limit, bool whole);

// `?limit=` (1 to 500, default 50) and `?before=` (a message id) of a page of messages; the
// error when they are not numbers in range.
std::string page_of(std::string_view target, std::size_t& limit, std::int64_t& before);

}  // namespace gateway::context
