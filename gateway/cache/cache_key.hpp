#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::cache {

// A request's head as its key reads it.
struct head_view {
    // Its end-to-end fields as sent (no hop-by-hop field, Host or Content-Length), in order.
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    std::string_view target;      // with its query
    std::string_view key_id;      // the virtual key that let it in; "": none
    std::string_view key_secret;  // that key's secret, as presented
};

// What of a head is in the key (docs/operations.md, "Response cache"). Each field and query
// parameter is one of three kinds:
// - neutral, left out: it cannot change the answer (Accept*, Content-Type, User-Agent,
//   Cache-Control, Pragma, Expect, Idempotency-Key, Origin, Referer, DNT, Priority, Via, Forwarded,
//   X-Real-IP, X-Request-Id, traceparent, tracestate, baggage, and the prefixes x-stainless-, sec-,
//   x-forwarded-; the query's `alt`, as :streamGenerateContent is read as :generateContent);
// - a credential: Authorization (any scheme), Cookie, and every name names_a_secret holds
//   for one (x-api-key, x-goog-api-key, api-key, a custom x-…-auth header, the query's `key`…);
// - anything else may change the answer (anthropic-version, anthropic-beta, openai-beta,
//   x-goog-*, openai-organization, a query's api-version…): its name and value are in `varies`.
struct head_key {
    // Whose answer it is: the virtual key's id and a digest of its secret, and the digest of
    // every credential presented, by name; "" for a request with none, and with `shared`.
    std::string scope;
    // What else in the head can change the answer, whatever `shared` says.
    std::string varies;
};
head_key head_key_of(const head_view& head, bool shared);

// What a request's answer is cached under: the SHA-256 of
// - the client's API: its path, with Gemini's :streamGenerateContent read as :generateContent;
// - `target`: where it goes (the route and its targets, or the upstream and model);
// - `head`: whose it is, and what else in its head can change the answer (head_key_of);
// - its body as canonical JSON (object members sorted, no whitespace) without `stream`,
//   `stream_options` and `user`, which do not change the answer. Everything else is in it:
//   messages, tools, tool_choice, temperature, response_format…
// nullopt with `why_not` set for a request whose answer is not cached: a body that is not a JSON
// object, several choices (`n` or Gemini's candidateCount above 1), or log probabilities (a hit
// could not reproduce them).
std::optional<std::string> key_of(std::string_view body, std::string_view api_path,
                                  std::string_view target, const head_key& head,
                                  std::string& why_not);

// `v` with object members sorted by name and no whitespace: equal for equal JSON values.
std::string canonical_json(const boost::json::value& v);

}  // namespace gateway::cache
