#pragma once

// Model lists in each provider's shape (docs/routing.md, "Which model goes where"): how the
// gateway asks an upstream for its models (OpenAI's `GET /models`, Anthropic's `GET /v1/models`
// paged by `after_id`, Gemini's `models.list` paged by `pageToken`), how it reads each page, and
// how it answers a client's listing, and a model it does not serve, in the client's dialect.

#include "gateway/providers/conversation.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::providers {

// One model a client can call.
struct listed_model {
    std::string id;            // the name a client sends as `model`
    std::string owned_by;      // OpenAI's owned_by: the upstream's own, else the upstream's name
    std::int64_t created = 0;  // seconds since the epoch; 0: unknown
    std::string display_name;  // "": the id
    // An OpenAI-compatible upstream's own entry, as it listed it (its extra members kept for
    // an OpenAI client); empty for a model the gateway names itself.
    json::object original;
    // What the gateway charges for it, given in a listing as `contextgate_price`; null when it
    // has no one price (unpriced). Set for a listing only (upstream::model_catalog::merge), it
    // points into the price table of the generation the listing is answered by.
    const config::price_entry* price = nullptr;
};

// The target, below the upstream's base path, of a page of `p`'s model list; `page` is the
// token the page before gave ("" for the first).
std::string model_list_target(provider p, std::string_view page);

// Reads one page of `p`'s model list into `out` and the next page's token into `next` (""
// after the last page). False with `error` when the body is no such list.
bool read_model_page(provider p, std::string_view body, std::vector<listed_model>& out,
                     std::string& next, std::string& error);

// A client's listing answered in its dialect: OpenAI's `{"object":"list","data":[…]}`,
// Anthropic's page (`query`'s `limit`, default 20, `after_id`, `before_id`; `has_more`,
// `first_id`, `last_id`) or Gemini's `{"models":[…]}` (`pageSize`, default 50, `pageToken`;
// `nextPageToken`), read from the request's `target`. An entry of a priced model has one member
// more in every dialect, `contextgate_price`: `{"unit":"usd_per_1m_tokens","input":2.5,…}`
// with the rates its price gives (price_json); an upstream's own member of that name is
// replaced.
std::string model_list_answer(provider dialect, const std::vector<listed_model>& models,
                              std::string_view target);

// A price as a listing gives it: `unit` ("usd_per_1m_tokens"), then the rates the price gives
// (`input`, `output`, `cache_read`, `cache_write`, `cache_write_1h`, `reasoning`) and its
// `long_context` tier (`above` and its rates), each in its shortest decimal form (2.5, not the
// 2.5E0 a JSON serializer may write).
std::string price_json(const config::price_entry& price);

// The body of the 404 for a model the gateway does not serve, in the dialect's error envelope:
// OpenAI's invalid_request_error with `param: model` and `code: model_not_found`, Anthropic's
// not_found_error, Gemini's NOT_FOUND.
std::string model_not_found_body(provider dialect, std::string_view message);

}  // namespace gateway::providers
