// The response cache's part in a model call (docs/operations.md, "Response cache"): looked up
// before the attempt loop, a hit answered in the client's API with no upstream call and no
// tokens charged; a complete 200 answer stored after it. What is stored is the answer in the
// conversation model, read from the bytes relayed (or the reply a translation read), so a hit
// is written as JSON or as a stream, whichever the request asks, and what the answer cost, so
// the usage ledger counts what each hit saved. A hit goes through the answer's guardrails as an
// upstream's answer does.
#include "gateway/passthrough/handler.hpp"

#include "gateway/cache/cache_key.hpp"
#include "gateway/clock.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/passthrough/answer_guard.hpp"
#include "gateway/passthrough/headers.hpp"
#include "gateway/passthrough/translator.hpp"
#include "gateway/providers/adapter.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>

namespace gateway::passthrough {

namespace {

// Whether a Cache-Control value carries `directive` (no-cache, no-store), in any case.
bool has_directive(std::string_view value, std::string_view directive) {
    while (!value.empty()) {
        auto comma = value.find(',');
        auto item = value.substr(0, comma);
        auto first = item.find_first_not_of(" \t");
        auto last = item.find_last_not_of(" \t");
        if (first != std::string_view::npos &&
            boost::beast::iequals(item.substr(first, last - first + 1), directive))
            return true;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return false;
}

// Where a request goes, as the key has it: the route and its targets, or the upstream and model.
std::string target_of(const destination& where, const config::route_config& route,
                      const std::vector<config::upstream_config>& upstreams) {
    if (!where.route) return "upstream " + upstreams[*where.upstream].name + " " + where.model;
    std::string out = "route " + route.model;
    for (const auto& t : route.targets) out += " " + t.upstream + "/" + t.model;
    return out;
}

}  // namespace

cache_plan handler::plan_cache(const http::request_context& ctx, const destination& where,
                               const config::route_config& route, call_reading& reading) {
    cache_plan plan;
    if (!cache_.store) return plan;
    auto ttl = where.route ? route.cache.ttl : upstreams_[*where.upstream].cache.ttl;
    plan.api = ttl.count() > 0 ? reading.api() : nullptr;
    if (!plan.api) return plan;  // not cached here, or not a model call
    plan.ttl = ttl;
    plan.dialect = where.call.dialect;
    plan.result = "skip";
    auto control = ctx.req[boost::beast::http::field::cache_control];
    // A Responses answer passed through byte for byte is not read into the conversation model:
    // cached only when the route's first target translates it.
    const auto& first = upstreams_[route.targets.front().index];
    if (where.call.api == client_api::responses &&
        first.provider == config::provider_kind::openai && !first.translate_responses)
        return plan;
    // A hit is written from the conversation model: only requests it reads whole are cached.
    plan.asked = reading.request();
    if (!plan.asked) return plan;
    // Whose answers these are (the virtual key's, and every credential presented), and what
    // else in the head can change them: the fields the upstream would hear, and the query.
    cache::head_view head;
    head.target = ctx.req.target();
    for_each_end_to_end(
        ctx.req, [&head](boost::beast::http::field, std::string_view name, std::string_view value) {
            head.fields.emplace_back(name, value);
        });
    std::string secret;
    if (!ctx.key_id.empty()) {
        secret = http::presented_key_of(ctx.req.base()).value;
        head.key_id = ctx.key_id;
        head.key_secret = secret;
    }
    std::string why_not;
    auto key = cache::key_of(ctx.req.body(), where.call.path, target_of(where, route, upstreams_),
                             cache::head_key_of(head, cache_.config->shared), why_not);
    if (!key) return plan;
    plan.key = std::move(*key);
    plan.read = !has_directive(control, "no-cache");
    plan.write = !has_directive(control, "no-store");
    return plan;
}

net::awaitable<bool> handler::answer_from_cache(http::request_context& ctx, cache_plan& plan,
                                                exchange_state& state) {
    auto& m = observability::metrics();
    if (!plan.read) {
        m.cache_lookups.with({"skip"}).inc();
        state.fields.cache = ctx.cache = plan.result;
        co_return false;
    }
    auto found = co_await cache_.store->get(plan.key);
    std::optional<cache::stored_answer> stored;
    if (found) stored = cache::decode_answer(*found);
    plan.result = stored ? "hit" : "miss";
    m.cache_lookups.with({std::string(plan.result)}).inc();
    state.fields.cache = ctx.cache = plan.result;
    if (!stored) co_return false;
    // A hit used no tokens and cost nothing: the key's limits and budget are charged nothing.
    ctx.input_tokens = 0;
    ctx.output_tokens = 0;
    ctx.cost = request_cost{0, true, false};
    state.fields.cost = "0";
    // The ledger counts it under no upstream (none answered), with what the stored answer cost
    // when it was made as what it saved.
    if (ledger_) {
        upstream::usage_record hit{ctx.key_id, ctx.model, ""};
        hit.cache_hit = true;
        hit.saved = stored->cost;
        hit.now_ms = now_ms();
        ledger_->record(hit);
    }
    // The answer's guardrails read a hit as they read an upstream's answer: it was stored for
    // whoever asked first, whose guardrails may not be this caller's.
    if (state.answer_guards) {
        std::string message;
        auto found = guard_stored_answer(stored->reply, state, message);
        if (found.result == guardrails::verdict::blocked) {
            observability::log_info("request " + ctx.request_id + ": " + message);
            co_await write_blocked(ctx, plan.dialect, message);
            co_return true;
        }
    }
    co_await answer_stored(ctx, *plan.api, *plan.asked, stored->reply, state.fields.list());
    co_return true;
}

std::optional<providers::reply> read_kept_answer(const http::request_context& ctx,
                                                 exchange_state& state,
                                                 config::provider_kind dialect) {
    // Complete successful answers only: never an error, a cut stream, or a client that left.
    if (!state.keep_answer || ctx.status != 200 || !state.complete || state.client_gone)
        return std::nullopt;
    std::optional<providers::reply> answer;
    if (state.translated_reply) answer = std::move(*state.translated_reply);
    if (!answer && state.kept_whole && !state.kept_body.empty()) {
        // Relayed as the client asked for it (InvokeModel's answer to a Messages client as
        // Anthropic's, Claude's on Vertex too): the name the client gave may be a route's.
        const auto& adapter = providers::adapter_for(dialect);
        std::string error;
        if (state.streamed) {
            providers::stream_reader reader(adapter, state.kept_limit);
            std::vector<providers::stream_delta> deltas;
            if (reader.feed(state.kept_body, deltas, error) && reader.finish(deltas, error)) {
                providers::reply_builder whole;
                for (const auto& d : deltas) whole.add(d);
                if (whole.finished()) {
                    auto assembled = whole.take(error);
                    if (error.empty()) answer = std::move(assembled);
                }
            }
        } else {
            providers::reply read;
            if (adapter.decode(state.kept_body, read, error)) answer = std::move(read);
        }
    }
    return answer;
}

net::awaitable<void> handler::keep_in_cache(const cache_plan& plan, const providers::reply* answer,
                                            const std::optional<request_cost>& cost) {
    if (!plan.write || plan.key.empty() || !answer) co_return;
    auto value = cache::encode_answer({*answer, cost});
    if (value.size() > cache_.config->max_entry_bytes) co_return;
    co_await cache_.store->put(plan.key, std::move(value), plan.ttl);
    observability::metrics().cache_stores.with().inc();
}

}  // namespace gateway::passthrough
