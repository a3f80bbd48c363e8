#pragma once

// The guardrails' checks of a model call's JSON body (docs/operations.md "Guardrails"): a request
// before it goes upstream, in any client's API (Chat Completions, Responses, Messages,
// generateContent, Bedrock's Converse and InvokeModel, embeddings' input), and a whole JSON
// answer before the client sees it. Pure code: the request path decides when and answers.
#include "gateway/guardrails/engine.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::guardrails {

// Calls `f` with every string below `v` that is text a model reads or writes: all of them but
// those under keys that name, identify or encode (type, role, id, model, signatures, base64
// data, URLs, …).
void for_each_text(boost::json::value& v, const std::function<void(boost::json::string&)>& f);

// Which members of a body hold the texts: a request's (messages, system, input, instructions,
// contents, systemInstruction, prompt) or an answer's (choices, content, output, candidates).
enum class body_kind { request, answer };

// A body's texts, read once, to be checked and rewritten in place.
class body_texts {
public:
    // Reads `body`; false when it is not a JSON object (there is nothing to check then).
    bool read(std::string_view body, body_kind kind);
    // Every text, in the body's order.
    const std::vector<boost::json::string*>& texts() const { return texts_; }
    // The texts joined by blank lines, as a webhook is sent them; at_joined() maps a span of it
    // back.
    std::string joined() const;
    // Replaces each span [begin, end) of joined() (in order, non-overlapping) with `label`.
    void replace_joined(const std::vector<std::pair<std::size_t, std::size_t>>& spans,
                        std::string_view label);
    // The body, written again.
    std::string write() const;

private:
    boost::json::value doc_;
    std::vector<boost::json::string*> texts_;
};

// What checking a body found: pass, masked (`texts` rewritten) or blocked (by `blocked_by`).
struct body_check {
    verdict result = verdict::pass;
    std::optional<finding> blocked_by;
};

// Checks each of `texts` with the selection's detectors: a block stops at the first; mask hits
// are replaced in place. Every hit is counted under `stage` (guardrails::record).
body_check check_texts(body_texts& texts, const engine& rules, const selection& chosen,
                       config::guardrail_stage stage);

// A whole JSON answer of a model API checked with the response stage's `chosen`: rewritten in
// place when masked; a body that is no JSON object passes.
body_check check_answer(std::string& body, const engine& rules, const selection& chosen);

// What a block says to the client and in the log: the guardrail and the rule, never the text.
// `what`: "request", "answer", "tool result".
std::string blocked_message(const finding& by, std::string_view what);

}  // namespace gateway::guardrails
