#pragma once

#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/limiter.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::admin {

// A request let in: the key it came with and its claim on the key's limits.
struct pass {
    std::shared_ptr<const virtual_key> key;
    claim counted;
    bool limited = false;  // a claim was counted and must be settled
};

// What a request asks of the models, as far as the gateway can tell before forwarding it
// (passthrough::models_of reads it from the path, a JSON or multipart body, or a batch).
struct requested_models {
    std::vector<std::string> names;  // every model the request names
    bool established = false;        // `names` is all of them
    bool model_less = false;         // the request uses no model by nature (a listing, a file)
    bool tunnel = false;             // a WebSocket tunnel: its frames are not read
};

// Virtual keys in front of /v1: with no key ever configured every request goes on as before;
// once there was one, a request must present a live one (401 otherwise), ask for a model the key
// allows (403) and fit its limits (429 with retry-after and x-ratelimit-* headers). Tokens are
// reserved from an estimate (request bytes / 4, plus max_tokens when the body sets it) and settled
// with the answer's reported usage by leave(). Thread-safe.
class gatekeeper {
public:
    gatekeeper(const key_ring& keys, limiter& limits);

    bool active() const { return keys_.enforced(); }

    // The key the request head presents; a 401 reply when it presents none that is live.
    std::variant<std::shared_ptr<const virtual_key>, http::reply> identify(
        const http::request& req, std::int64_t now_ms) const;

    // Checks the models and the limits for `key`; counts the request when it may go on. A key
    // with a model list is refused (403) a request whose models the gateway could not establish
    // (unless it is model-less by nature), and the WebSocket tunnel, whose frames it does not
    // read; so is a key with token limits or a budget the tunnel, which no usage would settle.
    net::awaitable<std::variant<pass, http::reply>> admit(std::shared_ptr<const virtual_key> key,
                                                          const http::request& req,
                                                          const requested_models& asked);

    // The request ended: its reserved tokens replaced by `used_tokens` (the estimate when the
    // answer reported none), its parallel slot freed.
    net::awaitable<void> leave(pass p, std::optional<std::uint64_t> used_tokens);

private:
    const key_ring& keys_;
    limiter& limits_;
};

// The tokens a request will use at most as far as can be told before it runs: its body's bytes
// / 4 (about a token each) plus `max_tokens` / `max_completion_tokens` / `max_output_tokens`
// when the body sets one.
std::uint64_t estimate_tokens(std::string_view body);

}  // namespace gateway::admin
