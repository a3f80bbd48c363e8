#pragma once

#include "gateway/providers/adapter.hpp"

namespace gateway::providers::gemini {

// Google Gemini generateContent (`<base>/models/{model}:generateContent`, streamed with
// `:streamGenerateContent?alt=sse`, key in x-goog-api-key). The encoder keeps the API's rules:
// roles `user`/`model` alternate (same-role turns merged); a function response is an object
// ({"content": text}, or {"error": text}); schemas are reduced to the OpenAPI subset Gemini reads
// (`$ref` inlined; `additionalProperties`, `$schema` and the like left out); a call's
// thoughtSignature goes back verbatim. Gemini's calls carry no id: the decoder makes a stable
// one (`gemini_` + a hash of the reply, the position and the call) and results are mapped back
// by it; an id Gemini did give is kept and echoed.
const providers::adapter& adapter();

// The schema Gemini accepts for a JSON Schema: see above.
json::object schema_for_gemini(const json::object& schema);

}  // namespace gateway::providers::gemini
