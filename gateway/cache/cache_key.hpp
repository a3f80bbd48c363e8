#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gateway::cache {

// What a request's answer is cached under: the SHA-256 of
// - the client's API: its path, with Gemini's :streamGenerateContent read as :generateContent;
// - `target`: where it goes (the route and its targets, or the upstream and model);
// - `scope`: whose it is (the virtual key, the client's own provider key, or "" when shared);
// - its body as canonical JSON (object members sorted, no whitespace) without `stream`,
//   `stream_options` and `user`, which do not change the answer. Everything else is in it:
//   messages, tools, tool_choice, temperature, response_format…
// nullopt with `why_not` set for a request whose answer is not cached: a body that is not a JSON
// object, several choices (`n` or Gemini's candidateCount above 1), or log probabilities (a hit
// could not reproduce them).
std::optional<std::string> key_of(std::string_view body, std::string_view api_path,
                                  std::string_view target, std::string_view scope,
                                  std::string& why_not);

// `v` with object members sorted by name and no whitespace: equal for equal JSON values.
std::string canonical_json(const boost::json::value& v);

}  // namespace gateway::cache
