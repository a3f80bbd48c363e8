#pragma once

#include "gateway/providers/adapter.hpp"

namespace gateway::providers::gemini {

// Google Gemini generateContent (`<base>/models/{model}:generateContent`, streamed with
// `:streamGenerateContent?alt=sse`, key in x-goog-api-key; a model name other than letters,
// digits and `-._~` is refused, never written into the target). The encoder keeps the API's rules:
// roles `user`/`model` alternate (same-role turns merged); a function response is an object
// ({"content": text}, or {"error": text}); schemas are reduced to the OpenAPI subset Gemini reads
// (`$ref` inlined; `additionalProperties`, `$schema` and the like left out); a call's
// thoughtSignature goes back verbatim. Gemini's calls carry no id: the decoder makes a stable
// one (`gemini_` + a hash of the reply, the position and the call) and results are mapped back
// by it; an id Gemini did give is kept and echoed.
const providers::adapter& adapter();

// The schema Gemini accepts for a JSON Schema (see above), or why there is none: a recursive
// `$ref`, nesting past 64 levels, or an expansion past 50,000 nodes once `$ref`s are inlined
// (the encoder refuses the request with that reason, naming the tool).
struct reduced_schema {
    json::object schema;
    std::string error;  // set: no schema
};
reduced_schema schema_for_gemini(const json::object& schema);

}  // namespace gateway::providers::gemini
