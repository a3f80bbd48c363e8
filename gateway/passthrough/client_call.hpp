#pragma once

#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/providers/ingress.hpp"

#include <cstdint>
#include <string_view>

namespace gateway::passthrough {

// The model APIs the gateway reads, answers from its cache and translates; every other /v1
// request is forwarded as it came.
enum class client_api : std::uint8_t {
    other,
    chat_completions,       // POST /v1/chat/completions
    responses,              // POST /v1/responses
    messages,               // POST /v1/messages
    messages_count_tokens,  // POST /v1/messages/count_tokens
    generate_content,       // POST …/models/{model}:generateContent | :streamGenerateContent
    gemini_count_tokens,    // POST …/models/{model}:countTokens
};

// What a /v1 (or /v1beta) request is, read once from its method and target at the edge; the
// stages after it (routing, the key's model list, the cache, the attempt loop, translation, the
// spans) ask it instead of reading the path again. Views into the request's target.
struct client_call {
    std::string_view target;  // as the client sent it, with the query
    std::string_view path;    // without the query
    bool post = false;
    bool upgrade = false;  // a WebSocket upgrade (tunnelled, never translated)
    client_api api = client_api::other;
    // The dialect the client speaks, by its path: Gemini's /v1beta/… and /v1/models/{m}:{method},
    // Anthropic's /v1/messages…, Bedrock's runtime below /bedrock, Vertex AI's below /vertex
    // (Anthropic's for publishers/anthropic, Gemini's for publishers/google), else OpenAI's.
    config::provider_kind dialect = config::provider_kind::openai;
    // Gemini's stable API (/v1/models/{m}:{method}), asked of the same upstream as /v1beta.
    bool gemini_stable = false;
    // The model Gemini's path names (providers::gemini_path_model), Bedrock's (as sent:
    // percent-encoded once) or Vertex AI's; "" for other paths.
    std::string_view path_model;
    // Bedrock's operation after the model id: "/converse", "/converse-stream", "/invoke" or
    // "/invoke-with-response-stream"; "" for other paths.
    std::string_view bedrock_operation;
    // Vertex AI's own API, /vertex/{v1|v1beta1}/projects/{p}/locations/{l}/publishers/{publisher}/
    // models/{m}:{method} (forwarded to a Vertex upstream only, never translated), its method when
    // the gateway forwards it (providers::vertex::read_native_path; "" for any other) and the
    // API version it asked, which the upstream is asked too (any other call is asked of v1).
    bool vertex = false;
    std::string_view vertex_method;
    std::string_view vertex_version = "v1";
    // The GenAI operation (gen_ai.operation.name; "" when the path names none) and the template
    // the request's SERVER span is named by ("" keeps the router's).
    std::string_view operation;
    std::string_view route;

    // A model call the gateway can read into the conversation model (and so translate or answer
    // from its cache): Chat Completions, Responses, Messages, generateContent.
    bool model_call() const {
        return api == client_api::chat_completions || api == client_api::responses ||
               api == client_api::messages || api == client_api::generate_content;
    }
    bool counts_tokens() const {
        return api == client_api::messages_count_tokens || api == client_api::gemini_count_tokens;
    }
};

// Whether the request asks for a WebSocket (`Upgrade: websocket`): tunnelled, never translated.
bool is_websocket_upgrade(const http::request& req);

// Pure; `upgrade`: is_websocket_upgrade (the handler reads it once and passes it).
client_call classify(boost::beast::http::verb method, std::string_view target, bool upgrade);

// The client's API for a model call, as the gateway reads and answers it when it translates or
// answers from the response cache; null for any other request.
const providers::ingress* ingress_of(const client_call& call);

}  // namespace gateway::passthrough
