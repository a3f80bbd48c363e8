#pragma once

#include "gateway/config/config.hpp"
#include "gateway/http/context.hpp"
#include "gateway/passthrough/client.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/upstream/connection.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/routes.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::passthrough {

// Answers a request in the client's API (`in`: Chat Completions, Messages, Responses) from an
// upstream of another dialect: the body is read into the conversation model (fields that cannot
// be translated are a 400 naming them), sent in the provider's dialect, and the reply comes back
// in the client's API, whole or as the events of its stream written as the provider streams them.
// Provider errors come back in the client's error envelope with the provider's status and message
// (and its retry-after). Stateless: what the provider needs on the next turn travels in the
// reply. Cancelled by closing `state.upstream` (the client watcher does).
//
// With `hold_failures` (a route's attempt), a failure the attempt loop would try another target
// for — a connection that failed, an answer upstream::tries_another() (or, with
// `hold_context_window`, a refusal for the context window), or a stream that failed or ended
// before its first content — is not written: it is returned, and nothing has reached the client.
// Anything else is answered as without it.
// `first_byte`: how long to wait for the response head (0: the upstream's own); `resend`: whether
// a request that met a reset on a reused connection may go again (exchange_hooks::resend).
// The key sent is translated_key(…, up, state.forward_key); while nothing is committed no read
// waits past state.hold_until; with state.stopping a failed connection answers 503.
// A model call read into the conversation model by the client's API, at most once per request:
// for the response cache's key and for every translated attempt. What it reads is the body as
// the client sent it (a target that names another model is told so by the attempt, not by a
// body rewritten for it) and the model a Gemini path names.
class call_reading {
public:
    call_reading(const http::request& req, const providers::ingress* api) : req_(req), api_(api) {}

    const providers::ingress* api() const { return api_; }
    // The request as its API reads it; null when it cannot be (failure() says why) or when the
    // request is no model call (api() is null).
    const providers::request* request();
    const providers::parse_failure& failure() const;

private:
    // What the reading found, made at the first request(): a request that is never read (the
    // plain passthrough) carries no room for it in its coroutine frame.
    struct reading {
        std::optional<providers::request> request;
        providers::parse_failure failure;
    };
    const http::request& req_;
    const providers::ingress* api_;
    std::unique_ptr<reading> read_;
};

struct translate_failure {
    unsigned upstream_status = 0;  // the provider's status; 0: the connection failed
    upstream::verdict judged = upstream::verdict::failed;  // the provider's answer, judged
    unsigned status = 0;                                   // and the client's
    std::string body;                                      // in the client's error envelope
    std::optional<config::duration> retry_after;
    upstream::failure transport;
};
// `asked`: the request read (its api() is the client's API); `model`: the name this target is
// to hear ("" keeps the one the request names).
net::awaitable<std::optional<translate_failure>> translate(
    http::request_context& ctx, upstream::pool& pool, exchange_state& state, call_reading& asked,
    std::string_view model = {}, bool hold_failures = false, config::duration first_byte = {},
    std::function<bool()> resend = {}, bool hold_context_window = false);

// An answer kept by the response cache, written in the client's API (`in`) as `asked` wants it:
// whole, or as the events of a stream (one write), under a fresh id and the model the client
// named; `fields` go in the head.
net::awaitable<void> answer_stored(http::request_context& ctx, const providers::ingress& in,
                                   const providers::request& asked, const providers::reply& stored,
                                   std::vector<std::pair<std::string, std::string>> fields);

// A gateway error (`ec`, with `detail`) in the client's error envelope.
net::awaitable<void> write_error_as(http::request_context& ctx, const providers::ingress& in,
                                    boost::system::error_code ec, std::string_view detail,
                                    std::vector<std::pair<std::string, std::string>> fields = {});

// A guardrail's block (400 guardrail_blocked; `message` names the guardrail and its rule) in the
// error envelope of the client's `dialect`: Anthropic's, Google's, else OpenAI's with its code.
net::awaitable<void> write_blocked(http::request_context& ctx, config::provider_kind dialect,
                                   std::string_view message);

// Anthropic's count_tokens or Gemini's countTokens (`in`) on a translated route: the gateway's
// estimate (providers::estimate_input_tokens), or the 400 for a body it cannot read.
net::awaitable<void> count_tokens(http::request_context& ctx, const providers::ingress& in);

}  // namespace gateway::passthrough
