#pragma once

// The fake upstream's Google Vertex AI: Gemini's generateContent below publishers/google and
// Claude's rawPredict below publishers/anthropic, each under a project and a location, with an
// OAuth 2 access token. Written from Vertex AI's documentation; the answers are the Gemini and
// Anthropic fakes' own (fake_providers.hpp), and so are the body rules, but for what rawPredict
// changes (no `model`, its own `anthropic_version`).

#include "tests/support/fake_providers.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::testing::fake_vertex {

// What a Vertex AI path names: /{version}/projects/{project}/locations/{location}/publishers/
// {publisher}/models/{model}:{method}[?query], of the v1 or v1beta1 API (any other version is
// no path Vertex serves).
struct call {
    std::string version;
    std::string project;
    std::string location;
    std::string publisher;
    std::string model;
    std::string method;
    std::string query;  // after `?`, "" when none
    // streamRawPredict, or streamGenerateContent (with alt=sse: Vertex's other stream is a JSON
    // array, which the fake does not serve)
    bool stream = false;
};

// The path's parts; nullopt when `target` is no Vertex AI model path.
std::optional<call> read_path(std::string_view target);

// Whether an access token is good: "" when it is, else why not ("expired", "unknown"). Null in
// fake_options: any non-empty token is good.
using token_check = std::function<std::string(std::string_view token)>;

// Google's 401 UNAUTHENTICATED, as Vertex answers a request without a good access token.
fake_providers::answer unauthenticated(std::string_view why);

// Vertex's refusal of `r` (whose path is `c`), else nullopt: a publisher or method it does not
// have (404 NOT_FOUND), streamGenerateContent without alt=sse (400), no `Authorization: Bearer`
// or a token `check` refuses (401), then for Claude rawPredict's body rules (no `model`: 400
// "Extra inputs are not permitted"; `anthropic_version: vertex-2023-10-16`) and Messages' own,
// for Gemini generateContent's. countTokens has Gemini's rules.
std::optional<fake_providers::answer> refusal(const received_request& r,
                                              const boost::json::value& body, const call& c,
                                              const token_check& check);

}  // namespace gateway::testing::fake_vertex
