#pragma once

#include "gateway/agent/model_port.hpp"
#include "gateway/config/config.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/upstream/model_router.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/usage_sink.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gateway::agent {

namespace net = boost::asio;

// The model port over HTTP: non-streaming chat completions through the same upstream
// connections, routing rules and authentication as the passthrough (upstream::start_exchange).
// 429, 408 and 5xx answers and failed connections are retried `model_retries` times with
// exponential backoff from 0.5 s, or after the upstream's `retry-after-ms` / `retry-after` when
// it sent one (at most 60 s). One client per executor: its pools are not thread-safe.
class model_client final : public model_port {
public:
    // `upstreams` and `router` as the /v1 face has them; `model_retries`: context.model_retries.
    model_client(const std::vector<config::upstream_config>& upstreams, unsigned model_retries,
                 const upstream::model_router& router,
                 const std::vector<std::shared_ptr<net::ssl::context>>& tls_contexts,
                 net::any_io_executor executor, upstream::usage_sink* ledger = nullptr);

    // `body` is the complete JSON request; `model` picks the upstream. `request_id` goes out as
    // x-request-id.
    net::awaitable<model_result<model_reply>> complete(std::string model, std::string body,
                                                       std::string request_id,
                                                       call_canceller& cancel, retry_hook on_retry,
                                                       text_hook on_text = {}) override;

    // The request in the dialect of the upstream `request.model` is routed to (Anthropic,
    // Gemini or OpenAI tool_calls), not streamed; the reply decoded by its adapter.
    net::awaitable<model_result<providers::reply>> converse(providers::request request,
                                                            std::string request_id,
                                                            call_canceller& cancel,
                                                            retry_hook on_retry,
                                                            text_hook on_text = {}) override;

    const config::upstream_config& upstream_for(std::string_view model) const override;

    // Closes the pooled connections and pools none from now on (the engine is stopping).
    void shutdown() override;

private:
    struct attempt_result;
    // A 2xx answer: its body (not streamed), or the reply assembled from its events.
    struct answer {
        std::string body;
        providers::reply streamed;
    };
    // How a streamed answer is read: its dialect's decoder, and who is told its text.
    struct streaming {
        const providers::adapter* adapter = nullptr;
        text_hook on_text;
    };
    // One request with the retry policy above; `explain` turns an error answer into its text.
    net::awaitable<model_result<answer>> send(
        upstream::pool& pool, const std::string& head, const std::string& body,
        const std::string& request_id, call_canceller& cancel, retry_hook on_retry,
        const std::function<std::string(unsigned, std::string_view)>& explain,
        const streaming& stream);
    net::awaitable<attempt_result> attempt(upstream::pool& pool, const std::string& head,
                                           const std::string& body, call_canceller& cancel,
                                           const streaming& stream);

    // Metrics and the usage ledger (key "context") for a model call that succeeded.
    void account(const config::upstream_config& up, const std::string& model,
                 const providers::usage& used, std::chrono::steady_clock::time_point started);

    const std::vector<config::upstream_config>& upstreams_;
    unsigned model_retries_;
    const upstream::model_router& router_;
    net::any_io_executor executor_;
    upstream::usage_sink* ledger_;
    std::vector<upstream::pool> pools_;
};

// The text of a chat.completion response body: choices[0].message.content and finish_reason.
// A reply made of native `tool_calls` instead (some models insist) is turned into our protocol's
// JSON call, so the loop sees one shape. A failure (upstream_bad_response) when the body is not
// such a response.
model_result<model_reply> read_completion(std::string_view body);

// Seconds or milliseconds to wait from retry-after-ms / retry-after (delta seconds); nullopt
// when neither is present or readable.
std::optional<config::duration> retry_after(std::string_view retry_after_ms,
                                            std::string_view retry_after);

}  // namespace gateway::agent
