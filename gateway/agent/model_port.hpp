#pragma once

#include "gateway/config/config.hpp"
#include "gateway/error.hpp"
#include "gateway/observability/trace.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/request_cost.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace gateway::guardrails {
class engine;
class model_caller;
class webhooks;
}  // namespace gateway::guardrails

namespace gateway::agent {

// The guardrails of the configuration the model calls go out in (its engine, webhooks and the
// model checks' caller, null for none), which the agent checks its tools' results with before the
// model reads them; `hold` keeps them while they are used (a reload may replace them).
struct guardrails_in_force {
    std::shared_ptr<const void> hold;
    const guardrails::engine* rules = nullptr;
    guardrails::webhooks* hooks = nullptr;
    guardrails::model_caller* models = nullptr;
};

// Why a model call gave no reply: the gateway's error code for it (the transport's
// upstream_*, the upstream's answer by its status: rate_limited, bad_request, …), whether the run
// cancelled it, and the message for the run's error and the human (the provider's own, when it
// gave one).
struct model_failure {
    errc code = errc::upstream_bad_response;
    bool cancelled = false;
    std::string message;
};

// What an answered model call was charged, settled as /v1 settles a request (docs/operations.md
// "Prices and cost"): the upstream that answered and the model it heard (a route target's own
// name, after the upstream's model_map); the usage the upstream reported, or the gateway's
// estimate when it reported none (`cost.estimated`); and what that cost at the upstream's price
// for the model in the configuration the call started in (`cost.priced` false: it has none).
struct settled_call {
    std::string upstream;
    std::string model;
    providers::usage used;
    request_cost cost;
};

// A model call's reply, and what it was charged.
struct model_answer {
    providers::reply reply;
    settled_call settled;
};

// A model call's outcome: the answer, or why there is none.
template <class Answer>
using model_result = std::variant<Answer, model_failure>;

// A call the model port is about to repeat after a 429, a 5xx or a failed connection.
struct model_retry {
    int attempt = 0;  // 1 for the first retry
    int of = 0;
    std::string why;  // "upstream `openai` answered 429", "cannot connect …"
    config::duration wait{0};
};

// Told before each backoff wait of a retried model call; awaited, so it may store an event.
using retry_hook = std::function<boost::asio::awaitable<void>(model_retry)>;

// Told the text of a streamed reply as it arrives (what one upstream read brought), and told
// `reset` when text it was told is withdrawn (the attempt failed and is tried again). Awaited.
// An empty hook: the reply is not streamed.
using text_hook = std::function<boost::asio::awaitable<void>(std::string text, bool reset)>;

// Lets the run that owns a model call stop it at once: the port registers how (close the
// connection in use, end a backoff wait) while the call is in flight. Used on the run's
// executor only.
class call_canceller {
public:
    void cancel() {
        cancelled_ = true;
        if (stop_) stop_();
    }
    bool cancelled() const { return cancelled_; }
    // Ready for the next call (a cancel applies to the call in flight only).
    void reset() { cancelled_ = false; }
    // What cancel() does for the step in flight; an empty function when there is none.
    void on_cancel(std::function<void()> stop) { stop_ = std::move(stop); }

private:
    bool cancelled_ = false;
    std::function<void()> stop_;
};

// What the agent loop needs from a model: one turn of a conversation (retried on 429, 5xx and
// failed connections, `on_retry` awaited before each wait), cancellable through `cancel`, and
// the upstream a model name is routed to (its tool protocol, json_schema flag, context budget).
// The model_client implements it over HTTP; tests script it in memory.
class model_port {
public:
    virtual ~model_port() = default;
    // One turn, said in the dialect of the upstream `request.model` (the chat's model name) is
    // routed to by that provider's adapter, its model_map applied. With `on_text` the request is
    // streamed and its text told as it arrives; the reply is the same. `trace`: the traced span
    // of the call, sent upstream as its traceparent. The answer is settled: counted in the usage
    // ledger and priced.
    virtual boost::asio::awaitable<model_result<model_answer>> converse(
        providers::request request, std::string request_id, call_canceller& cancel,
        retry_hook on_retry, text_hook on_text = {},
        const observability::trace_context* trace = nullptr) = 0;
    // A copy: the configuration it comes from may be reloaded while the caller holds it.
    virtual config::upstream_config upstream_for(std::string_view model) const = 0;
    // The engine is stopping: release what is kept between calls (pooled connections).
    virtual void shutdown() = 0;
    // The guardrails now in force; none unless the port serves a configuration's.
    virtual guardrails_in_force guardrails() const { return {}; }
};

}  // namespace gateway::agent
