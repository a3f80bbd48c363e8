#pragma once

#include <boost/beast/http/message.hpp>

#include <string>
#include <string_view>

namespace gateway::http {

// Where a client put its API key.
enum class key_place { none, bearer, x_api_key, x_goog_api_key, query };

struct presented_key {
    std::string value;  // empty: none
    key_place place = key_place::none;
};

// The API key a request head presents, in the first of these places that holds one:
// `Authorization: Bearer …` (OpenAI SDKs; the scheme in any case, spaces after it skipped),
// `x-api-key` (Anthropic), `x-goog-api-key` (Gemini), the query parameter `key` (Gemini's REST
// convention, percent-decoded). Pure.
presented_key presented_key_of(const boost::beast::http::request_header<>& head);

// `target` without any `key` query parameter (however its name is encoded); the path and every
// other parameter byte for byte, `?` dropped when nothing is left; a target without one unchanged.
// For a request whose key the gateway replaces: the client's key never travels upstream in the
// query either.
std::string without_query_key(std::string_view target);

// Whether `target`'s query holds a `key` parameter.
bool has_query_key(std::string_view target);

}  // namespace gateway::http
