#pragma once

#include "gateway/http/context.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/upstream/connection.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::observability {
class counter;
}  // namespace gateway::observability
namespace gateway::guardrails {
class engine;
class model_caller;
class selection;
class webhooks;
}  // namespace gateway::guardrails

namespace gateway::passthrough {

namespace net = boost::asio;

// The fields a route of the configuration adds to the client's head: x-contextgate-upstream
// (the target that answered) and x-contextgate-attempts. Views and a number, so that setting
// them per attempt allocates nothing.
struct route_fields {
    std::string_view upstream;  // the target's upstream name (the configuration's string)
    int attempts = 0;           // 0: no route of the configuration took the request
    std::string_view cache;     // x-contextgate-cache: hit | miss | skip; "": not cached
    // x-contextgate-cost-usd (cost_text), when the cost is known before the head goes
    // out: a whole JSON answer, a cache hit; "": not given.
    std::string_view cost;
    // As a list, for the writers that take one.
    std::vector<std::pair<std::string, std::string>> list() const {
        std::vector<std::pair<std::string, std::string>> out;
        if (attempts > 0) {
            out.emplace_back("x-contextgate-upstream", std::string(upstream));
            out.emplace_back("x-contextgate-attempts", std::to_string(attempts));
        }
        if (!cache.empty()) out.emplace_back("x-contextgate-cache", std::string(cache));
        if (!cost.empty()) out.emplace_back("x-contextgate-cost-usd", std::string(cost));
        return out;
    }
};

// The price of one model as one upstream serves it (the name the upstream hears), on one worker,
// with its metric series: found once (handler::price_of). Null counters: metrics are off.
struct model_price {
    const config::price_entry* price = nullptr;  // null: unpriced
    observability::counter* usd = nullptr;
    observability::counter* unpriced = nullptr;
};

// Shared between the exchange and the client watcher of one request. Linked into its handler's
// list of requests in flight (handler::stop_waiting) while the attempt loop runs, and out of it
// when destroyed: no allocation per request.
struct exchange_state
    : boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
    const http::request_context* ctx = nullptr;  // the request's, while it is in the list
    upstream::connection* upstream = nullptr;    // the connection in use, to close on disconnect
    net::steady_timer* backoff = nullptr;        // a wait before a retry, to cancel on disconnect
    bool client_gone = false;
    // What the answer showed, for metrics, limits and usage: its first body bytes (time to first
    // token of a stream), whether it streamed, the usage it reported and where that came from.
    std::chrono::steady_clock::time_point first_body{};
    bool streamed = false;
    providers::usage used;
    std::string_view usage_source = "none";  // body | stream | estimate | none
    bool answered = false;                   // the upstream answered with a status (2xx or not)
    // For the settlement rule (providers::settled_usage): content bytes relayed to the client, and
    // whether the whole answer was relayed.
    std::uint64_t delivered_bytes = 0;
    bool complete = false;
    route_fields fields;  // for the client's head besides the upstream's
    // The attempt's price (its upstream, the model it heard) when the request names a model (and
    // counts no tokens); a copy, as a lookup past the per-worker bound is kept nowhere. Its cost
    // as the head gives it (fields.cost views it).
    std::optional<model_price> price;
    std::string cost_text;
    // For the response cache, when the answer may be stored (`keep_answer`): the body relayed
    // as it came (up to `kept_limit`; `kept_whole` false past it), or the answer a translation
    // read.
    bool keep_answer = false;
    std::string kept_body;
    std::size_t kept_limit = 0;
    bool kept_whole = true;
    std::unique_ptr<providers::reply> translated_reply;  // (not inline: most requests have none)
    // The attempt's CLIENT span, when it is traced: sent upstream as the traceparent instead of
    // the client's (whose span is its parent).
    const observability::trace_context* trace = nullptr;
    // Whether the client's credential may go to this attempt's target (its provider is the one
    // the credential was presented for: forwarded_provider).
    bool forward_key = true;
    // Whose key a translated attempt's target heard (translate() sets it): how its refusal is
    // judged.
    upstream::credential presented = upstream::credential::gateway;
    // The attempt sends a /v1/messages client's body to Claude on Bedrock through InvokeModel
    // (providers/bedrock_invoke.hpp): its event stream is relayed as Anthropic's SSE, its errors
    // in Anthropic's envelope.
    bool messages_by_invoke = false;
    // The answer's guardrails (destination::answer_guards) and the engine they are of; null:
    // the answer is relayed unread. Their webhooks and model checks, and the model and key a
    // webhook is told the answer is for.
    const guardrails::engine* guard_rules = nullptr;
    const guardrails::selection* answer_guards = nullptr;
    guardrails::webhooks* guard_hooks = nullptr;
    guardrails::model_caller* guard_models = nullptr;
    std::string_view guard_model;
    std::string_view guard_key;
    // While nothing is committed, no read waits past this: the route's deadline.
    std::optional<std::chrono::steady_clock::time_point> hold_until;
    // The worker's drain time is over: the attempt in flight (or its backoff) was stopped, and
    // the client gets stopped_by_shutdown() rather than a closed socket.
    bool stopping = false;
};

// The failure a request stopped by the end of the drain answers with (503, shutting_down).
upstream::failure stopped_by_shutdown();

// The usage to charge for a finished answer (providers::settled_usage for a 2xx to a request
// that names a model), on the context for the access log, the key's limits and the ledger.
void finish_usage(http::request_context& ctx, exchange_state& state);

// What the usage `state` holds costs at `state.price` (pricing::cost; estimated when the usage
// was); nullopt when the request has no price to look up (no table, not a model call).
std::optional<request_cost> cost_of(const exchange_state& state);

// For a whole answer whose usage is read before its head goes out (a JSON answer, relayed or
// translated): its cost, as settlement will charge it, into the head (`state.fields.cost`).
// `reported`: the usage the answer gave; `delivered_bytes`: its content's bytes.
void cost_in_head(const http::request_context& ctx, exchange_state& state,
                  const providers::usage& reported, std::uint64_t delivered_bytes);

// Settlement's money step, once finish_usage settled the usage of a 2xx answer: its cost on the
// context (`ctx.cost`, for the access log and later the ledger) and in the metrics
// (contextgate_cost_usd_total, or contextgate_unpriced_requests_total).
void settle_cost(http::request_context& ctx, const exchange_state& state);

class watch_list;

// Reads from the client while the exchange runs. Bytes are kept as the start of the next
// (pipelined) request, up to header_limit; end of stream or an error means the client went
// away: `state.client_gone` is set and the upstream connection is closed at once, so the upstream
// stops generating and the exchange ends on its next upstream read or write.
//
// The read starts only once the exchange has run for `watch_list::delay`: most exchanges with a
// fast upstream end before that, and each read started costs its operation, its cancellation
// when the exchange ends and a scheduler round trip to await that (5 % of the CPU per request,
// docs/benchmarks.md). A client that goes away is therefore noticed within that delay, not at
// once.
//
// A plain completion handler rather than a coroutine raced against the exchange: the race cost a
// parallel group per request (two spawned coroutines, their frames and cancellation state). The
// exchange runs alone; `stop()` ends the read when it is done.
class client_watch {
public:
    client_watch(http::request_context& ctx, exchange_state& state, watch_list& list);
    ~client_watch();
    client_watch(const client_watch&) = delete;
    client_watch& operator=(const client_watch&) = delete;

    // Whether the read has started (and stop() must be awaited).
    bool reading() const { return reader_ != nullptr; }

    // Once reading(): cancels the read if it is still pending and returns once its handler has
    // run, so the bytes it read are in the buffer and nothing refers to this request any more.
    // (A watch that never started leaves the list when destroyed.)
    net::awaitable<void> stop();

private:
    friend class watch_list;
    struct reader;
    void start_reading();

    http::request_context& ctx_;
    exchange_state& state_;
    watch_list& list_;
    std::chrono::steady_clock::time_point since_;
    client_watch* prev_ = nullptr;  // in list_ while waiting to start
    client_watch* next_ = nullptr;
    bool waiting_ = false;
    std::shared_ptr<reader> reader_;
};

// The client watches of one worker that have not started reading, oldest first, and the one
// timer that starts them once they are `delay` old. The timer is armed only while some watch
// waits and fires at most once per delay, so a request that ends before it costs a list link.
// One per worker, used from its thread only.
class watch_list {
public:
    static constexpr std::chrono::milliseconds delay{20};

    watch_list() = default;
    watch_list(const watch_list&) = delete;
    watch_list& operator=(const watch_list&) = delete;

    void add(client_watch& watch, const net::any_io_executor& executor);
    void remove(client_watch& watch);

private:
    void arm(std::chrono::steady_clock::time_point at);
    void tick();

    client_watch* first_ = nullptr;
    client_watch* last_ = nullptr;
    std::optional<net::steady_timer> timer_;  // made on first use, on the worker's executor
    bool armed_ = false;
    // The timer's handler holds it weakly: it does nothing once the list is gone.
    std::shared_ptr<watch_list*> alive_ = std::make_shared<watch_list*>(this);
};

// Writes `data` to the client within the server's write timeout.
net::awaitable<boost::system::error_code> write_client(http::request_context& ctx,
                                                       net::const_buffer data);

}  // namespace gateway::passthrough
