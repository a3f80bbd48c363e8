#include "gateway/guardrails/webhook.hpp"

#include "gateway/guardrails/engine.hpp"
#include "gateway/observability/log.hpp"

#include "gateway/upstream/service_call.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <memory>
#include <optional>

namespace gateway::guardrails {

namespace json = boost::json;

namespace {

// A verdict is a few spans; a longer answer is no webhook's.
constexpr std::size_t answer_limit = 1 << 20;

// The webhook as a service the gateway's client calls: each step, and the call as a whole,
// within its timeout (its URL was read with the configuration).
config::upstream_config webhook_service(const config::guardrail_config& g) {
    return upstream::service_upstream("webhook of guardrail " + g.name, g.webhook->url,
                                      g.webhook->endpoint, g.webhook->timeout);
}

// One POST and its answer's body, all within the webhook's timeout; the reason it failed
// otherwise.
net::awaitable<std::pair<std::string, std::string>> post(const config::guardrail_config& g,
                                                         std::shared_ptr<net::ssl::context> tls,
                                                         std::string body) {
    using result = std::pair<std::string, std::string>;
    const auto& hook = *g.webhook;
    if (hook.endpoint.tls && !tls) co_return result{{}, "no TLS context for its https URL"};
    auto service = webhook_service(g);
    auto head = upstream::service_request_head("POST", service, "",
                                               "Content-Type: application/json\r\n", body.size());
    auto answered = co_await upstream::call_service(
        service, head, body,
        {{}, std::move(tls), std::chrono::steady_clock::now() + hook.timeout, answer_limit});
    if (!answered) co_return result{{}, answered.error};
    if (answered.value->status != 200)
        co_return result{{}, "it answered " + std::to_string(answered.value->status)};
    co_return result{std::move(answered.value->body), {}};
}

}  // namespace

webhook_answer read_webhook_answer(std::string_view body, std::size_t text_size) {
    webhook_answer out;
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) {
        out.reason = "its answer is not a JSON object";
        return out;
    }
    const auto& o = v.as_object();
    const auto* action = o.if_contains("action");
    std::string_view what =
        action && action->is_string() ? std::string_view(action->as_string()) : std::string_view();
    if (what == "allow") {
        out.what = webhook_answer::action::allow;
    } else if (what == "block") {
        out.what = webhook_answer::action::block;
    } else if (what == "mask") {
        out.what = webhook_answer::action::mask;
    } else {
        out.reason = "its answer's action is not allow, block or mask";
        return out;
    }
    if (const auto* reason = o.if_contains("reason"); reason && reason->is_string())
        out.reason = reason->as_string();
    if (const auto* spans = o.if_contains("spans"); spans && spans->is_array()) {
        std::size_t last = 0;
        for (const auto& s : spans->as_array()) {
            const auto* pair = s.if_array();
            if (!pair || pair->size() != 2 || !(*pair)[0].is_int64() || !(*pair)[1].is_int64() ||
                (*pair)[0].as_int64() < static_cast<std::int64_t>(last) ||
                (*pair)[1].as_int64() < (*pair)[0].as_int64() ||
                (*pair)[1].as_int64() > static_cast<std::int64_t>(text_size)) {
                out = {};
                out.reason =
                    "its answer's spans are not [begin, end] pairs in order within the "
                    "text";
                return out;
            }
            auto b = static_cast<std::size_t>((*pair)[0].as_int64());
            auto e = static_cast<std::size_t>((*pair)[1].as_int64());
            out.spans.emplace_back(b, e);
            last = e;
        }
    }
    out.answered = true;
    return out;
}

net::awaitable<webhook_answer> webhooks::ask(const config::guardrail_config& g,
                                             config::guardrail_stage stage, std::string_view text,
                                             std::string_view model, std::string_view key) {
    const auto& hook = *g.webhook;
    webhook_answer out;
    std::string failure;
    if (!may_call(g.name)) {
        failure = "its circuit breaker is open";
    } else {
        auto body = json::serialize(json::object{{"stage", config::guardrail_stage_name(stage)},
                                                 {"text", text},
                                                 {"model", model},
                                                 {"key", key}});
        auto [answer, failed] = co_await post(g, tls_of(g.name), std::move(body));
        failure = std::move(failed);
        if (failure.empty()) {
            out = read_webhook_answer(answer, text.size());
            if (!out.answered) failure = out.reason;
        }
        note(g.name, !failure.empty());
    }
    if (failure.empty()) co_return out;
    out = {};
    out.what = hook.fail_open ? webhook_answer::action::allow : webhook_answer::action::block;
    out.reason = "the webhook of guardrail `" + g.name + "` failed (" + failure + "); fail " +
                 (hook.fail_open ? "open" : "closed");
    observability::log_warn(out.reason);
    co_return out;
}

webhooks::webhooks(const std::vector<config::guardrail_config>& guardrails) {
    for (const auto& g : guardrails) {
        if (!g.webhook || !g.webhook->endpoint.tls) continue;
        auto made = upstream::make_client_context(webhook_service(g));
        if (made)
            tls_.emplace(g.name, *made.value);
        else
            observability::log_warn("guardrail `" + g.name + "`: " + made.error +
                                    "; its webhook's calls will fail");
    }
}

std::shared_ptr<net::ssl::context> webhooks::tls_of(std::string_view name) const {
    auto found = tls_.find(name);
    return found == tls_.end() ? nullptr : found->second;
}

bool webhooks::open(const config::guardrail_config& g) const {
    std::lock_guard lock(mutex_);
    auto it = breakers_.find(g.name);
    return it != breakers_.end() && it->second.failures >= breaker_failures &&
           std::chrono::steady_clock::now() < it->second.open_until;
}

bool webhooks::may_call(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto& b = breakers_[name];
    if (b.failures < breaker_failures) return true;
    auto now = std::chrono::steady_clock::now();
    if (now < b.open_until) return false;
    // Half open: this call is the trial; the others wait for its outcome as if still open.
    b.open_until = now + breaker_open_for;
    return true;
}

void webhooks::note(const std::string& name, bool failed) {
    std::lock_guard lock(mutex_);
    auto& b = breakers_[name];
    if (!failed) {
        b = {};
        return;
    }
    if (++b.failures == breaker_failures)
        b.open_until = std::chrono::steady_clock::now() + breaker_open_for;
}

}  // namespace gateway::guardrails
