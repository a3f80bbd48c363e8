#pragma once

#include "gateway/http/reply.hpp"
#include "gateway/store/records.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::admin {

class key_ring;

// What GET /admin/usage asks for: the store's query (its filter and what its rows are per) and
// whether the answer is CSV rather than JSON.
struct usage_request {
    store::usage_query query;
    bool csv = false;
    // Per team, and only the team's keys (a key knows its team: the store's usage is per key, so
    // api::usage reads it per key, fills each row's `team` and regroups it with regroup()).
    bool by_team = false;
    std::string team;
};

// The request a target's query string makes: `key`, `model`, `upstream`, `team`, `from` and `to`
// (days, inclusive), `group_by` (a comma list of day, key, model, upstream and team; absent:
// key,model) and
// `format` (json, the default, or csv). The error names the parameter and what it allows; ""
// when the request is good.
std::string usage_request_of(std::string_view target, usage_request& out);

// The report of `rows` as `asked` wants it. Each row carries the dimensions the query is per
// (`day`, `key_id` with `key_name`, null or empty for an id no key has, `model`, `upstream`,
// `team`, "" for keys of no team),
// then `requests`, the token figures, `usd` (what the priced requests cost, an exact decimal),
// `unpriced_requests`, `estimated_requests`, `cache_hits` and `saved_usd`. JSON:
// {"object": "list", "data": [rows]}. CSV (RFC 4180): a header row of the same names, then one
// line per row, offered as the file usage-<from>-<to>.csv (`from` "all" when the query has
// none, `to` today's UTC day, `now_ms`'s, when it has none).
// `rows` (per key, each with its `team`) summed into one row per the dimensions `asked` is per,
// in the store's order.
std::vector<store::usage_row> regroup(const std::vector<store::usage_row>& rows,
                                      const usage_request& asked);

http::reply usage_reply(const std::vector<store::usage_row>& rows, const usage_request& asked,
                        const key_ring& keys, std::int64_t now_ms);

}  // namespace gateway::admin
