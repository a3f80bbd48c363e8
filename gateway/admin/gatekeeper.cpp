#include "gateway/admin/gatekeeper.hpp"

#include "gateway/admin/budget_alerts.hpp"
#include "gateway/admin/teams.hpp"
#include "gateway/clock.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/pricing/cost.hpp"

#include <boost/json/parse.hpp>

namespace gateway::admin {

namespace json = boost::json;

namespace {

// USD as whole nano-dollars, rounded as the usage ledger rounds them (a cost is never negative).
std::uint64_t nano_of(double usd) {
    return static_cast<std::uint64_t>(nano_usd(usd));
}

}  // namespace

token_estimate estimate_of(std::string_view body) {
    token_estimate estimate{(body.size() + 3) / 4, std::nullopt};
    // Most requests set no output cap: the body is parsed only when one may be there.
    if (body.find("ax_") == std::string_view::npos &&
        body.find("axOutput") == std::string_view::npos)
        return estimate;
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 64;
    auto value = json::parse(body, ec, {}, options);
    if (ec || !value.is_object()) return estimate;
    const auto& o = value.get_object();
    // A cap past 32 bits is no provider's: reserved as if none was set, rather than added (2^64 - 1
    // wrapped the estimate around to almost nothing).
    constexpr std::int64_t max_cap = 2'147'483'647;
    for (auto name : {"max_completion_tokens", "max_tokens", "max_output_tokens"})
        if (auto cap = integer_of(o.if_contains(name), 1, max_cap)) {
            estimate.output_cap = static_cast<std::uint64_t>(*cap);
            return estimate;
        }
    // Gemini's generationConfig.maxOutputTokens.
    if (const auto* g = o.if_contains("generationConfig"); g && g->is_object())
        if (auto cap = integer_of(g->get_object().if_contains("maxOutputTokens"), 1, max_cap))
            estimate.output_cap = static_cast<std::uint64_t>(*cap);
    return estimate;
}

std::uint64_t estimate_tokens(std::string_view body) {
    auto estimate = estimate_of(body);
    return estimate.input + estimate.output_cap.value_or(0);
}

std::optional<std::uint64_t> estimate_usd_nano(
    const token_estimate& estimate, std::uint64_t default_output,
    const std::vector<passthrough::target_price>& prices) {
    providers::usage used;
    used.known = true;
    used.input = static_cast<std::int64_t>(estimate.input);
    used.output = static_cast<std::int64_t>(estimate.output_cap.value_or(default_output));
    std::uint64_t most = 0;
    for (const auto& target : prices) {
        if (!target.price) return std::nullopt;
        auto usd = pricing::cost(used, target.price).usd;
        most = std::max(most, nano_of(usd));
    }
    return most;
}

gatekeeper::gatekeeper(const key_ring& keys, const team_book& teams, limiter& limits,
                       const config::admin_config& settings, budget_alerts* alerts)
    : keys_(keys), teams_(teams), limits_(limits), alerts_(alerts) {
    configure(settings);
}

void gatekeeper::configure(const config::admin_config& settings) {
    default_output_tokens_.store(settings.budget_default_output_tokens, std::memory_order_relaxed);
    if (alerts_) alerts_->configure(settings.budget_alerts);
}

std::variant<passthrough::caller, http::reply> gatekeeper::identify(const http::request& req,
                                                                    std::int64_t now_ms) const {
    auto secret = http::presented_key_of(req.base()).value;
    if (secret.empty())
        return http::reply::error(
            errc::unauthorized,
            "This gateway requires a virtual key: send `Authorization: Bearer <key>`.");
    auto key = keys_.by_secret(secret);
    if (!key) return http::reply::error(errc::unauthorized, "The API key is not valid.");
    if (key->expired(now_ms))
        return http::reply::error(errc::unauthorized, "The API key has expired.");
    return passthrough::caller{key->id, key->name, key, key->models, key->team};
}

namespace {

std::string money(std::uint64_t nano) {
    return "$" + config::usd_text(nano);
}

// The 403 for a key with a USD budget (its own or its team's, as `whose` says) and a request one
// of whose targets has no price.
http::reply not_priced(const virtual_key& key, std::string_view whose,
                       const passthrough::requested_models& asked,
                       const std::vector<passthrough::target_price>& prices) {
    const passthrough::target_price* unpriced = nullptr;
    for (const auto& t : prices)
        if (!t.price && !unpriced) unpriced = &t;
    auto model =
        unpriced->model.empty() && !asked.names.empty() ? asked.names.front() : unpriced->model;
    if (model.empty())
        return http::reply::error(
            errc::model_not_priced,
            "The API key `" + key.name + "` has a USD budget" + std::string(whose) +
                ", and the gateway cannot tell which model this request uses, so it cannot price "
                "it.");
    return http::reply::error(
        errc::model_not_priced,
        "The API key `" + key.name + "` has a USD budget" + std::string(whose) +
            ", and the gateway has no price for model `" + model + "` at upstream `" +
            unpriced->upstream + "`: add one under `pricing.overrides` (such as {model: \"" +
            model + "\", input: 1.00, output: 4.00}, USD per 1M tokens) or use a priced model.");
}

// The 429's message for refusal `r` of claim `c` (the key's counts as `decided` saw them).
std::pair<errc, std::string> refusal_message(const virtual_key& key, const claim& c,
                                             const admission& decided) {
    auto period = std::string(config::budget_period_name(key.budget_period));
    switch (decided.refused) {
        case refusal::requests:
            return {errc::rate_limited,
                    "Rate limit reached for requests: " + std::to_string(key.rpm) +
                        " per minute for key `" + key.name + "`."};
        case refusal::tokens:
            return {errc::token_rate_limited,
                    "Rate limit reached for tokens: " + std::to_string(key.tpm) +
                        " per minute for key `" + key.name + "`; this request needs about " +
                        std::to_string(c.estimate) + "."};
        case refusal::parallel:
            return {errc::rate_limited, "Too many requests at once: key `" + key.name +
                                            "` may have " + std::to_string(key.max_parallel) +
                                            " in flight."};
        case refusal::budget:
            return {errc::quota_exceeded, "Key `" + key.name + "` has used its budget of " +
                                              std::to_string(key.budget_tokens) + " tokens per " +
                                              period + "."};
        case refusal::usd_budget:
        case refusal::none:
            break;
    }
    const auto& seen = decided.seen;
    std::string message = "Key `" + key.name + "` has reached its budget of " +
                          money(key.budget_usd_nano) + " per " + period + ": " +
                          money(seen.usd_spent) + " spent";
    if (seen.usd_reserved)
        message += " and " + money(seen.usd_reserved) + " held by requests in flight";
    message += ", and this request may cost up to " + money(c.usd_estimate_nano) +
               ". The budget resets at " +
               config::format_time(period_end(key.budget_period, c.now_ms)) + ".";
    return {errc::quota_exceeded, message};
}

// The 429's message for a team whose USD budget claim `c` would pass.
std::string team_refusal_message(const virtual_key& key, const team& t, const claim& c,
                                 const admission& decided) {
    const auto& seen = decided.seen;
    std::string message = "Team `" + t.settings.name + "` (of key `" + key.name +
                          "`) has reached its budget of " + money(t.settings.budget_usd_nano) +
                          " per " + std::string(config::budget_period_name(c.budget_period)) +
                          ": " + money(seen.usd_spent) + " spent";
    if (seen.usd_reserved)
        message += " and " + money(seen.usd_reserved) + " held by requests in flight";
    return message + ", and this request may cost up to " + money(c.usd_estimate_nano) +
           ". The budget resets at " + config::format_time(period_end(c.budget_period, c.now_ms)) +
           ".";
}

// Whether every model the request asks for is allowed by `allows`; the 403 otherwise, naming
// `whose` list it is.
template <class Allows>
std::optional<http::reply> model_refusal(const std::string& whose,
                                         const passthrough::requested_models& asked,
                                         Allows allows) {
    if (asked.model_less || asked.tunnel) return std::nullopt;
    if (!asked.established || asked.names.empty())
        return http::reply::error(errc::model_not_allowed,
                                  whose +
                                      " may use only some models, and the gateway cannot tell "
                                      "which model this request uses.");
    for (const auto& model : asked.names)
        if (!allows(model))
            return http::reply::error(errc::model_not_allowed,
                                      whose + " may not use model `" + model + "`.");
    return std::nullopt;
}

bool every_model(const std::vector<std::string>& globs) {
    for (const auto& g : globs)
        if (g == "*") return true;
    return false;
}

}  // namespace

net::awaitable<std::variant<passthrough::ticket, http::reply>> gatekeeper::admit(
    passthrough::caller who, const http::request& req, const passthrough::requested_models& asked,
    const passthrough::price_lookup& prices_of) {
    auto key = std::static_pointer_cast<const virtual_key>(who.key);
    if (asked.tunnel &&
        (!key->models.empty() || key->tpm || key->budget_tokens || key->budget_usd_nano))
        co_return http::reply::error(
            errc::model_not_allowed,
            "The API key `" + key->name +
                "` has model or token limits or a budget, which the gateway cannot apply to a "
                "WebSocket tunnel's frames; send the requests over HTTP.");
    if (!key->models.empty())
        if (auto refused = model_refusal("The API key `" + key->name + "`", asked,
                                         [&](const auto& m) { return key->allows_model(m); }))
            co_return std::move(*refused);
    // The key's team bounds it as its own limits do; a team the configuration no longer declares
    // (a reload removed it) refuses its keys rather than leaving them unbounded.
    auto team = key->team.empty() ? nullptr : teams_.by_name(key->team);
    if (!key->team.empty() && !team)
        co_return http::reply::error(errc::model_not_allowed,
                                     "The API key `" + key->name + "` belongs to team `" +
                                         key->team + "`, which no longer exists.");
    if (team && !every_model(team->settings.models)) {
        if (asked.tunnel)
            co_return http::reply::error(
                errc::model_not_allowed,
                "The team `" + team->settings.name +
                    "` may use only some models, which the gateway cannot apply to a WebSocket "
                    "tunnel's frames; send the requests over HTTP.");
        if (auto refused = model_refusal(
                "The team `" + team->settings.name + "` of API key `" + key->name + "`", asked,
                [&](const auto& m) { return team->allows_model(m); }))
            co_return std::move(*refused);
    }
    bool team_budget = team && team->settings.budget_usd_nano && !asked.model_less;
    if (team_budget && asked.tunnel)
        co_return http::reply::error(
            errc::model_not_allowed,
            "The team `" + team->settings.name +
                "` has a budget, which the gateway cannot apply to a WebSocket tunnel's frames; "
                "send the requests over HTTP.");
    auto p = std::make_shared<pass>();
    passthrough::ticket admitted{std::move(who), p};
    if (!key->rpm && !key->tpm && !key->max_parallel && !key->budget_tokens &&
        !key->budget_usd_nano && !team_budget)
        co_return admitted;
    auto estimate = estimate_of(req.body());
    // A request that uses no model (a listing, a file) or counts tokens costs nothing.
    std::optional<std::uint64_t> usd;
    if ((key->budget_usd_nano || team_budget) && !asked.model_less) {
        auto prices = prices_of();
        usd = estimate_usd_nano(estimate, default_output_tokens_.load(std::memory_order_relaxed),
                                prices);
        if (!usd)
            co_return not_priced(*key,
                                 key->budget_usd_nano
                                     ? std::string()
                                     : " through its team `" + team->settings.name + "`",
                                 asked, prices);
    }
    // The team's account first: it holds only a USD reservation, which is handed back at once
    // when the key's own limits refuse the request.
    if (team_budget) {
        p->charged_team = team;
        auto& t = p->team;
        t.key_id = team_account(team->settings.name);
        t.slot_id = random_id("slot_", 12);
        t.budget_usd_nano = team->settings.budget_usd_nano;
        t.budget_period = team->settings.budget_period;
        t.usd_estimate_nano = *usd;
        t.now_ms = now_ms();
        auto decided = co_await limits_.admit(t);
        if (!decided.allowed) {
            observability::metrics()
                .limit_refusals.with({std::string(refusal_name(decided.refused))})
                .inc();
            auto refusal = http::reply::error(errc::quota_exceeded,
                                              team_refusal_message(*key, *team, t, decided));
            for (auto& [name, value] : limit_headers(decided, t)) refusal.header(name, value);
            co_return refusal;
        }
        p->team_limited = !decided.backend_failed;
        if (!key->rpm && !key->tpm && !key->max_parallel && !key->budget_tokens &&
            !key->budget_usd_nano)
            co_return admitted;
    }
    auto& c = p->counted;
    c.key_id = key->id;
    c.slot_id = random_id("slot_", 12);
    c.rpm = key->rpm;
    c.tpm = key->tpm;
    c.max_parallel = key->max_parallel;
    c.budget_tokens = key->budget_tokens;
    c.budget_usd_nano = key->budget_usd_nano;
    c.budget_period = key->budget_period;
    if (key->tpm || key->budget_tokens)
        c.estimate = estimate.input + estimate.output_cap.value_or(0);
    if (key->budget_usd_nano && usd) c.usd_estimate_nano = *usd;
    c.now_ms = now_ms();
    auto decided = co_await limits_.admit(c);
    if (decided.allowed) {
        p->limited = !decided.backend_failed;
        co_return admitted;
    }
    if (p->team_limited) {
        usage_spent nothing{0, 0, now_ms()};
        co_await limits_.settle(p->team, nothing);
    }
    observability::metrics()
        .limit_refusals.with({std::string(refusal_name(decided.refused))})
        .inc();
    auto [code, message] = refusal_message(*key, c, decided);
    auto refusal = http::reply::error(code, message);
    for (auto& [name, value] : limit_headers(decided, c)) refusal.header(name, value);
    co_return refusal;
}

net::awaitable<void> gatekeeper::settle(passthrough::ticket admitted,
                                        passthrough::request_usage used) {
    auto p = std::static_pointer_cast<pass>(admitted.claim);
    if (!p) co_return;
    // A cost settlement could not tell (an unpriced answer) keeps the reservation charged: never
    // $0.
    auto cost = [&](const claim& c) {
        return used.usd && *used.usd >= 0 ? nano_of(*used.usd) : c.usd_estimate_nano;
    };
    if (p->team_limited) {
        usage_spent team_spent{0, cost(p->team), now_ms()};
        auto team_change = co_await limits_.settle(p->team, team_spent);
        if (team_change && alerts_) alerts_->observe(p->charged_team->settings, *team_change);
    }
    if (!p->limited) co_return;
    const auto& c = p->counted;
    usage_spent spent;
    spent.tokens = used.tokens.value_or(c.estimate);
    spent.usd_nano = cost(c);
    spent.now_ms = now_ms();
    auto change = co_await limits_.settle(c, spent);
    if (change && alerts_)
        alerts_->observe(*std::static_pointer_cast<const virtual_key>(admitted.who.key), *change);
}

}  // namespace gateway::admin
