#include "gateway/admin/gatekeeper.hpp"

#include "gateway/clock.hpp"
#include "gateway/http/credentials.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/json/parse.hpp>

namespace gateway::admin {

namespace json = boost::json;

std::uint64_t estimate_tokens(std::string_view body) {
    std::uint64_t estimate = (body.size() + 3) / 4;
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
        if (auto cap = integer_of(o.if_contains(name), 1, max_cap))
            return estimate + static_cast<std::uint64_t>(*cap);
    // Gemini's generationConfig.maxOutputTokens.
    if (const auto* g = o.if_contains("generationConfig"); g && g->is_object())
        if (auto cap = integer_of(g->get_object().if_contains("maxOutputTokens"), 1, max_cap))
            return estimate + static_cast<std::uint64_t>(*cap);
    return estimate;
}

gatekeeper::gatekeeper(const key_ring& keys, limiter& limits) : keys_(keys), limits_(limits) {}

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
    return passthrough::caller{key->id, key->name, key, key->models};
}

net::awaitable<std::variant<passthrough::ticket, http::reply>> gatekeeper::admit(
    passthrough::caller who, const http::request& req, const passthrough::requested_models& asked) {
    auto key = std::static_pointer_cast<const virtual_key>(who.key);
    if (asked.tunnel && (!key->models.empty() || key->tpm || key->budget_tokens))
        co_return http::reply::error(
            errc::model_not_allowed,
            "The API key `" + key->name +
                "` has model or token limits, which the gateway cannot apply to a WebSocket "
                "tunnel's frames; send the requests over HTTP.");
    if (!key->models.empty() && !asked.model_less && !asked.tunnel) {
        if (!asked.established || asked.names.empty())
            co_return http::reply::error(
                errc::model_not_allowed,
                "The API key `" + key->name +
                    "` may use only some models, and the gateway cannot tell which model this "
                    "request uses.");
        for (const auto& model : asked.names)
            if (!key->allows_model(model))
                co_return http::reply::error(
                    errc::model_not_allowed,
                    "The API key `" + key->name + "` may not use model `" + model + "`.");
    }
    auto p = std::make_shared<pass>();
    passthrough::ticket admitted{std::move(who), p};
    if (!key->rpm && !key->tpm && !key->max_parallel && !key->budget_tokens) co_return admitted;
    auto& c = p->counted;
    c.key_id = key->id;
    c.slot_id = random_id("slot_", 12);
    c.rpm = key->rpm;
    c.tpm = key->tpm;
    c.max_parallel = key->max_parallel;
    c.budget_tokens = key->budget_tokens;
    c.budget_period = key->budget_period;
    c.estimate = key->tpm || key->budget_tokens ? estimate_tokens(req.body()) : 0;
    c.now_ms = now_ms();
    auto decided = co_await limits_.admit(c);
    if (decided.allowed) {
        p->limited = !decided.backend_failed;
        co_return admitted;
    }
    observability::metrics().limit_refusals.with({decided.refused}).inc();
    std::string message;
    auto code = errc::rate_limited;
    if (decided.refused == "requests")
        message = "Rate limit reached for requests: " + std::to_string(key->rpm) +
                  " per minute for key `" + key->name + "`.";
    else if (decided.refused == "tokens") {
        code = errc::token_rate_limited;
        message = "Rate limit reached for tokens: " + std::to_string(key->tpm) +
                  " per minute for key `" + key->name + "`; this request needs about " +
                  std::to_string(c.estimate) + ".";
    } else if (decided.refused == "parallel")
        message = "Too many requests at once: key `" + key->name + "` may have " +
                  std::to_string(key->max_parallel) + " in flight.";
    else {
        code = errc::quota_exceeded;
        message = "Key `" + key->name + "` has used its budget of " +
                  std::to_string(key->budget_tokens) + " tokens per " + key->budget_period + ".";
    }
    auto refusal = http::reply::error(code, message);
    for (auto& [name, value] : limit_headers(decided, c)) refusal.header(name, value);
    co_return refusal;
}

net::awaitable<void> gatekeeper::settle(passthrough::ticket admitted,
                                        std::optional<std::uint64_t> used_tokens) {
    auto p = std::static_pointer_cast<pass>(admitted.claim);
    if (!p || !p->limited) co_return;
    auto actual = used_tokens.value_or(p->counted.estimate);
    co_await limits_.settle(p->counted, actual);
}

}  // namespace gateway::admin
