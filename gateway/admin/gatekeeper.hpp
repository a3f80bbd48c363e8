#pragma once

#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/limiter.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/passthrough/admission.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::admin {

// A request let in: its claim on the key's limits (a ticket's claim).
struct pass {
    claim counted;
    bool limited = false;  // a claim was counted and must be settled
};

// Virtual keys in front of /v1: with no key ever configured every request goes on as before;
// once there was one, a request must present a live one (401 otherwise), ask for a model the key
// allows (403) and fit its limits (429 with retry-after and x-ratelimit-* headers). Tokens are
// reserved from an estimate (request bytes / 4, plus max_tokens when the body sets it) and settled
// with the answer's reported usage by settle(). The passthrough's admission. Thread-safe.
class gatekeeper final : public passthrough::admission {
public:
    gatekeeper(const key_ring& keys, limiter& limits);

    bool active() const override { return keys_.enforced(); }

    // The key the request head presents; a 401 reply when it presents none that is live.
    std::variant<passthrough::caller, http::reply> identify(const http::request& req,
                                                            std::int64_t now_ms) const override;

    // Checks the models and the limits for the caller's key; counts the request when it may go
    // on. A key with a model list is refused (403) a request whose models the gateway could not
    // establish (unless it is model-less by nature), and the WebSocket tunnel, whose frames it
    // does not read; so is a key with token limits or a budget the tunnel, which no usage would
    // settle.
    net::awaitable<std::variant<passthrough::ticket, http::reply>> admit(
        passthrough::caller who, const http::request& req,
        const passthrough::requested_models& asked) override;

    // The request ended: its reserved tokens replaced by `used_tokens` (the estimate when the
    // answer reported none), its parallel slot freed.
    net::awaitable<void> settle(passthrough::ticket admitted,
                                std::optional<std::uint64_t> used_tokens) override;

private:
    const key_ring& keys_;
    limiter& limits_;
};

// The tokens a request will use at most as far as can be told before it runs: its body's bytes
// / 4 (about a token each) plus `max_tokens` / `max_completion_tokens` / `max_output_tokens`
// when the body sets one.
std::uint64_t estimate_tokens(std::string_view body);

}  // namespace gateway::admin
