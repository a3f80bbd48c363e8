#include "gateway/providers/genai_trace.hpp"

#include <boost/json/serialize.hpp>

namespace gateway::providers {

std::string_view genai_provider_name(provider p) {
    switch (p) {
        case provider::anthropic:
            return "anthropic";
        case provider::gemini:
            return "gcp.gemini";
        case provider::bedrock:
            return "aws.bedrock";
        case provider::openai:
            break;
    }
    return "openai";
}

void describe_call(observability::span& s, std::string_view operation, provider p,
                   std::string_view model, std::string_view host, std::uint16_t port) {
    if (!s.recording()) return;
    s.set("gen_ai.operation.name", operation);
    s.set("gen_ai.provider.name", genai_provider_name(p));
    if (!model.empty()) s.set("gen_ai.request.model", model);
    s.set("server.address", host);
    s.set("server.port", static_cast<std::int64_t>(port));
}

void describe_reply(observability::span& s, const reply& r) {
    if (!s.recording()) return;
    if (!r.id.empty()) s.set("gen_ai.response.id", r.id);
    if (!r.model.empty()) s.set("gen_ai.response.model", r.model);
    s.set("gen_ai.response.finish_reasons",
          std::vector<std::string>{std::string(openai_finish_reason(r.why))});
    if (!observability::capture_content()) return;
    // The semantic conventions' output message: role, parts (text, tool calls), finish reason.
    json::array parts;
    for (const auto& p : r.content.parts) {
        if (p.what == part::kind::text)
            parts.push_back(json::object{{"type", "text"}, {"content", p.text}});
        else if (p.what == part::kind::tool_call)
            parts.push_back(json::object{{"type", "tool_call"},
                                         {"id", p.call.id},
                                         {"name", p.call.name},
                                         {"arguments", p.call.arguments}});
    }
    json::array out{json::object{{"role", "assistant"},
                                 {"parts", std::move(parts)},
                                 {"finish_reason", openai_finish_reason(r.why)}}};
    s.set("gen_ai.output.messages", observability::bounded_content(json::serialize(out)));
}

void describe_usage(observability::span& s, const usage& used) {
    if (!s.recording() || !used.known) return;
    s.set("gen_ai.usage.input_tokens", used.input);
    s.set("gen_ai.usage.output_tokens", used.output);
}

void describe_input(observability::span& s, const json::value& messages) {
    if (!s.recording() || !observability::capture_content()) return;
    s.set("gen_ai.input.messages", observability::bounded_content(json::serialize(messages)));
}

}  // namespace gateway::providers
