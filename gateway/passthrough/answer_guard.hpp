#pragma once

// The guardrails' response stage over an answer the client gets whole (docs/operations.md
// "Guardrails"): a JSON answer an upstream gave (forwarded or translated), and a cache hit.
// Implemented in guard_stage.cpp, beside the request's stage.
#include "gateway/guardrails/request_scan.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/providers/conversation.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

namespace gateway::passthrough {

// Checks the JSON answer `body` (in the client's API) with `state`'s answer guardrails
// (state.answer_guards set): their detectors, then their webhooks and model checks, told the
// answer's texts joined. `body` is rewritten when masked. Blocked: `message` is what the client
// and the log are told (the guardrail, the rule, an outside check's reason; never the text).
net::awaitable<guardrails::body_check> guard_json_answer(std::string& body,
                                                         const exchange_state& state,
                                                         std::string& message);

// Checks a stored answer (a cache hit) with the detectors of `state`'s answer guardrails
// (state.answer_guards set): its text and reasoning parts and its tool calls' argument strings,
// masked in place. Its outside checks are not asked again: a hit answers without waiting on
// anyone. Blocked: `message` as above.
guardrails::body_check guard_stored_answer(providers::reply& reply, const exchange_state& state,
                                           std::string& message);

}  // namespace gateway::passthrough
