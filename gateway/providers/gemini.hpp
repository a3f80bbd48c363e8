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

// What a schema weighs once written: its nodes (values and object keys) and bytes (about its
// JSON text: strings and keys by length, other scalars 8 each).
struct schema_weight {
    std::size_t nodes = 0;
    std::size_t bytes = 0;
    schema_weight& operator+=(schema_weight o) {
        nodes += o.nodes;
        bytes += o.bytes;
        return *this;
    }
    friend schema_weight operator+(schema_weight a, schema_weight b) { return a += b; }
};

// What reducing one request's schemas may write, shared by all its tools: what they weigh as
// sent plus max_growth, so that inlining `$ref`s adds at most 50,000 nodes and 1 MiB to a
// request however many tools it declares (a schema without `$ref`s never runs out).
class schema_budget {
public:
    static constexpr schema_weight max_growth{50'000, std::size_t(1) << 20};
    // The budget for these tools' parameters, or for one schema.
    explicit schema_budget(const std::vector<tool_spec>& tools);
    explicit schema_budget(const json::object& schema);
    // Takes `w` from what is left: false, and nothing left, when `w` is more than that.
    bool take(schema_weight w);

private:
    schema_weight left_ = max_growth;
};

// The schema Gemini accepts for a JSON Schema (see above), or why there is none: a recursive
// `$ref`, nesting past 64 levels, or an expansion past `budget` once `$ref`s are inlined (the
// encoder refuses the request with that reason, naming the tool). Without a budget, the schema's
// own (schema_budget(schema)).
struct reduced_schema {
    json::object schema;
    std::string error;  // set: no schema
};
reduced_schema schema_for_gemini(const json::object& schema, schema_budget& budget);
reduced_schema schema_for_gemini(const json::object& schema);

}  // namespace gateway::providers::gemini
