#pragma once

#include "gateway/observability/trace.hpp"
#include "gateway/providers/conversation.hpp"

#include <string>
#include <string_view>

namespace gateway::providers {

// What a model call's span says in the OpenTelemetry GenAI semantic conventions, for the /v1
// attempts and the agent's model calls alike (docs/operations.md "Tracing").

// gen_ai.provider.name: openai, anthropic, gcp.gemini.
std::string_view genai_provider_name(provider p);

// The attributes known before the call: gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model, server.address and server.port.
void describe_call(observability::span& s, std::string_view operation, provider p,
                   std::string_view model, std::string_view host, std::uint16_t port);

// What the reply said: gen_ai.response.id, gen_ai.response.model, gen_ai.response.finish_reasons,
// and, with tracing.capture_content, gen_ai.output.messages (its text and calls as JSON).
void describe_reply(observability::span& s, const reply& r);

// gen_ai.usage.input_tokens and output_tokens, when known.
void describe_usage(observability::span& s, const usage& used);

// gen_ai.input.messages (with tracing.capture_content): `messages`, bounded.
void describe_input(observability::span& s, const json::value& messages);

}  // namespace gateway::providers
