#pragma once

#include "gateway/config/config.hpp"
#include "gateway/passthrough/model_router.hpp"
#include "gateway/upstream/pool.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gateway::agent {

namespace net = boost::asio;

// What one chat completion gave: the reply's text and finish_reason, or why there is none.
struct model_reply {
    bool ok = false;
    bool cancelled = false;
    std::string content;
    std::string finish_reason;
    std::string error;  // when !ok: for the run's error and the human
};

// A call the client is about to repeat after a 429, a 5xx or a failed connection.
struct model_retry {
    int attempt = 0;  // 1 for the first retry
    int of = 0;
    std::string why;  // "upstream `openai` answered 429", "cannot connect …"
    config::duration wait{0};
};

// Lets the run that owns a call stop it: the connection in use is closed and a backoff wait ends
// at once. Used on the client's executor only.
class call_canceller {
public:
    void cancel();
    bool cancelled() const { return cancelled_; }

private:
    friend class model_client;
    bool cancelled_ = false;
    upstream::connection* connection_ = nullptr;
    net::steady_timer* backoff_ = nullptr;
};

// Non-streaming chat completions for the agent loop, through the same upstream connections,
// routing rules and authentication as the passthrough. 429 and 5xx answers and failed
// connections are retried `model_retries` times with exponential backoff, or after the
// upstream's `retry-after` / `retry-after-ms` when it sent one. One client per executor
// (its pools are not thread-safe).
class model_client {
public:
    model_client(const config::gateway_config& config, const passthrough::model_router& router,
                 const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
                 net::any_io_executor executor);

    // `body` is the complete JSON request; `model` picks the upstream. `request_id` goes out as
    // x-request-id. `on_retry` is told before each backoff wait.
    net::awaitable<model_reply> complete(std::string_view model, std::string body,
                                         std::string_view request_id, call_canceller& cancel,
                                         const std::function<void(const model_retry&)>& on_retry);

    const config::upstream_config& upstream_for(std::string_view model) const;

    // Closes the pooled connections and pools none from now on (the engine is stopping).
    void close_idle();

private:
    struct attempt_result;
    net::awaitable<attempt_result> attempt(upstream::pool& pool, const std::string& head,
                                           const std::string& body, call_canceller& cancel);

    const config::gateway_config& config_;
    const passthrough::model_router& router_;
    net::any_io_executor executor_;
    std::vector<upstream::pool> pools_;
};

// The text of a chat.completion response body: choices[0].message.content and finish_reason.
// A reply made of native `tool_calls` instead (some models insist) is turned into our protocol's
// JSON call, so the loop sees one shape. `error` is set when the body is not such a response.
model_reply read_completion(std::string_view body);

// Seconds or milliseconds to wait from retry-after-ms / retry-after (delta seconds); nullopt
// when neither is present or readable.
std::optional<config::duration> retry_after(std::string_view retry_after_ms,
                                            std::string_view retry_after);

}  // namespace gateway::agent
