#include "gateway/passthrough/client_call.hpp"

#include "gateway/providers/vertex.hpp"

#include <boost/beast/core/string.hpp>

namespace gateway::passthrough {

namespace {

namespace bhttp = boost::beast::http;

struct known_path {
    std::string_view path;
    client_api api;
    std::string_view operation;
};

constexpr known_path exact_paths[] = {
    {"/v1/chat/completions", client_api::chat_completions, "chat"},
    {"/v1/responses", client_api::responses, "chat"},
    {"/v1/messages", client_api::messages, "chat"},
    {"/v1/messages/count_tokens", client_api::messages_count_tokens, ""},
    {"/v1/completions", client_api::other, "text_completion"},
    {"/v1/embeddings", client_api::other, "embeddings"},
};

// Gemini's methods, on /v1beta/models/{model}:{method} and the stable /v1/models/….
struct gemini_method {
    std::string_view suffix;
    client_api api;
    std::string_view operation;
    std::string_view beta_route;
    std::string_view stable_route;
};

constexpr gemini_method gemini_methods[] = {
    {":generateContent", client_api::generate_content, "generate_content",
     "/v1beta/models/{model}:generateContent", "/v1/models/{model}:generateContent"},
    {":streamGenerateContent", client_api::generate_content, "generate_content",
     "/v1beta/models/{model}:streamGenerateContent", "/v1/models/{model}:streamGenerateContent"},
    {":countTokens", client_api::gemini_count_tokens, "", "/v1beta/models/{model}:countTokens",
     "/v1/models/{model}:countTokens"},
    {":embedContent", client_api::other, "embeddings", "/v1beta/models/{model}:embedContent",
     "/v1/models/{model}:embedContent"},
};

// Bedrock's runtime API below /bedrock: /bedrock/model/{modelId}/{operation}.
struct bedrock_method {
    std::string_view suffix;
    std::string_view route;
};

constexpr bedrock_method bedrock_methods[] = {
    {"/converse", "/bedrock/model/{modelId}/converse"},
    {"/converse-stream", "/bedrock/model/{modelId}/converse-stream"},
    {"/invoke", "/bedrock/model/{modelId}/invoke"},
    {"/invoke-with-response-stream", "/bedrock/model/{modelId}/invoke-with-response-stream"},
};

}  // namespace

client_call classify(bhttp::verb method, std::string_view target, bool upgrade) {
    client_call call;
    call.target = target;
    call.path = target.substr(0, target.find('?'));
    call.post = method == bhttp::verb::post;
    call.upgrade = upgrade;
    auto path = call.path;
    // A model API is a POST that is no upgrade; other methods on its path are forwarded.
    bool call_verb = call.post && !upgrade;
    for (const auto& known : exact_paths)
        if (path == known.path) {
            call.operation = known.operation;
            call.route = known.path;
            if (call_verb) call.api = known.api;
            break;
        }
    if (path == "/v1/messages" || path.starts_with("/v1/messages/"))
        call.dialect = config::provider_kind::anthropic;
    bool beta = path.starts_with("/v1beta/models/");
    bool stable = path.starts_with("/v1/models/");
    if (beta || stable)
        for (const auto& m : gemini_methods) {
            if (!path.ends_with(m.suffix)) continue;
            call.operation = m.operation;
            call.route = beta ? m.beta_route : m.stable_route;
            // OpenAI's /v1/models/{id} is a GET: only a POST of these three is Gemini's.
            call.gemini_stable = stable && call.post && m.api != client_api::other;
            if (call_verb && (beta || call.gemini_stable)) call.api = m.api;
            break;
        }
    if (path.starts_with("/bedrock/")) {
        // Bedrock's own paths, forwarded to a Bedrock upstream as they came (never translated).
        call.dialect = config::provider_kind::bedrock;
        constexpr std::string_view prefix = "/bedrock/model/";
        if (path.starts_with(prefix))
            for (const auto& m : bedrock_methods) {
                if (!path.ends_with(m.suffix) || path.size() <= prefix.size() + m.suffix.size())
                    continue;
                auto id = path.substr(prefix.size(), path.size() - prefix.size() - m.suffix.size());
                // A model id has its `/` and `:` percent-encoded; a raw `/` is another path.
                if (id.find('/') != std::string_view::npos) break;
                call.path_model = id;
                call.bedrock_operation = m.suffix;
                call.operation = "chat";
                call.route = m.route;
                break;
            }
        return call;
    }
    if (path.starts_with("/vertex/")) {
        // Vertex AI's own paths: the publisher's dialect, the body forwarded as it came.
        call.vertex = true;
        if (auto native = providers::vertex::read_native_path(path)) {
            bool claude = native->publisher == "anthropic";
            call.dialect =
                claude ? config::provider_kind::anthropic : config::provider_kind::gemini;
            call.path_model = native->model;
            call.vertex_method = native->method;
            call.vertex_version = native->version;
            bool counts = native->method == "countTokens";
            if (counts && call_verb) call.api = client_api::gemini_count_tokens;
            call.operation = counts ? "" : claude ? "chat" : "generate_content";
            call.route =
                "/vertex/{version}/projects/{project}/locations/{location}/publishers/"
                "{publisher}/models/{model}:{method}";
        }
        return call;
    }
    if (path.starts_with("/v1beta/") || call.gemini_stable) {
        call.dialect = config::provider_kind::gemini;
        if (beta || call.gemini_stable)
            call.path_model = providers::gemini_path_model(path.substr(path.find("/models/") + 8));
    }
    return call;
}

bool is_websocket_upgrade(const http::request& req) {
    return boost::beast::iequals(req[bhttp::field::upgrade], "websocket");
}

const providers::ingress* ingress_of(const client_call& call) {
    switch (call.api) {
        case client_api::chat_completions:
            return &providers::chat_completions();
        case client_api::responses:
            return &providers::responses();
        case client_api::messages:
            return &providers::messages();
        case client_api::generate_content:
            return &providers::generate_content();
        default:
            return nullptr;
    }
}

}  // namespace gateway::passthrough
