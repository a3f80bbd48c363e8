#pragma once

#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/limiter.hpp"
#include "gateway/http/context.hpp"
#include "gateway/http/reply.hpp"
#include "gateway/passthrough/admission.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::admin {

class budget_alerts;

class team_book;
struct team;

// A request let in: its claims on the key's limits and on its team's USD budget (a ticket's
// claim).
struct pass {
    claim counted;
    bool limited = false;  // a claim was counted and must be settled
    claim team;            // the team's budget account (team_account), when it has a USD budget
    bool team_limited = false;
    std::shared_ptr<const admin::team> charged_team;  // whose account `team` is: its alerts
};

// Virtual keys in front of /v1: with no key ever configured every request goes on as before;
// once there was one, a request must present a live one (401 otherwise), ask for a model the key
// allows (403) and fit its limits (429 with retry-after and x-ratelimit-* headers). Tokens are
// reserved from an estimate (estimate_of) and settled with the answer's reported usage by
// settle(). A key with a USD budget reserves what the request may cost at the most expensive of
// the targets it may reach (its estimated input at their input rate, its output cap or
// `admin.budget_default_output_tokens` at their output rate), is refused (403) a request one of
// those targets has no price for, and settles with the cost settlement priced; each settled cost
// goes past the budget alerts' thresholds at most once (budget_alerts). A key a team owns is
// bound by the team's models too (403) and by its USD budget, one more budget account reserved
// and settled beside the key's own (429 naming the team when it is spent). The passthrough's
// admission. Thread-safe.
class gatekeeper final : public passthrough::admission {
public:
    // `alerts` may be null (no alerts).
    gatekeeper(const key_ring& keys, const team_book& teams, limiter& limits,
               const config::admin_config& settings, budget_alerts* alerts = nullptr);

    // The settings of a reloaded configuration, for the requests admitted from now on.
    void configure(const config::admin_config& settings);

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
        const passthrough::requested_models& asked,
        const passthrough::price_lookup& prices) override;

    // The request ended: its reserved tokens replaced by what it used (the estimate when the
    // answer reported none), its USD reservation by its cost (the reservation stays charged when
    // the cost is unknown), its parallel slot freed.
    net::awaitable<void> settle(passthrough::ticket admitted,
                                passthrough::request_usage used) override;

private:
    const key_ring& keys_;
    const team_book& teams_;
    limiter& limits_;
    budget_alerts* alerts_;
    std::atomic<std::uint64_t> default_output_tokens_;
};

// What a request will use at most as far as can be told before it runs: its input, its body's
// bytes / 4 (about a token each), and its output cap, `max_tokens` / `max_completion_tokens` /
// `max_output_tokens` (Gemini's generationConfig.maxOutputTokens) when the body sets one.
struct token_estimate {
    std::uint64_t input = 0;
    std::optional<std::uint64_t> output_cap;
};
token_estimate estimate_of(std::string_view body);

// The tokens a request will use at most for token limits: its input and its output cap when it
// sets one.
std::uint64_t estimate_tokens(std::string_view body);

// What a request estimated as `estimate` (its output as `default_output` when it sets no cap)
// costs at the most expensive of `prices`, in nano-dollars; nullopt when one of them is unpriced.
std::optional<std::uint64_t> estimate_usd_nano(
    const token_estimate& estimate, std::uint64_t default_output,
    const std::vector<passthrough::target_price>& prices);

}  // namespace gateway::admin
