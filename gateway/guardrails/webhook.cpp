#include "gateway/guardrails/webhook.hpp"

#include "gateway/guardrails/engine.hpp"
#include "gateway/observability/log.hpp"

#include "gateway/upstream/credential_call.hpp"
#include "gateway/upstream/exchange.hpp"
#include "gateway/upstream/pool.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <memory>
#include <optional>

namespace gateway::guardrails {

namespace json = boost::json;

namespace {

// A verdict is a few spans; a longer answer is no webhook's.
constexpr std::size_t answer_limit = 1 << 20;

// The webhook as an upstream the connection code reaches: each step within its timeout (the call
// as a whole is bounded by post()'s deadline), no connection kept.
config::upstream_config webhook_upstream(const config::guardrail_config& g) {
    const auto& hook = *g.webhook;
    config::upstream_config up;
    up.name = "webhook of guardrail " + g.name;
    up.base_url = hook.url;
    up.endpoint = hook.endpoint;
    up.connect_timeout = hook.timeout;
    up.first_byte_timeout = hook.timeout;
    up.idle_timeout = hook.timeout;
    up.max_idle_connections = 0;
    return up;
}

// One POST and its answer's body, all within the webhook's timeout; the reason it failed
// otherwise. The deadline closes the connection in use; its handler may run after the call has
// ended (both were ready at once), so it shares what it reads with the call.
net::awaitable<std::pair<std::string, std::string>> post(const config::guardrail_config& g,
                                                         std::shared_ptr<net::ssl::context> tls,
                                                         std::string body) {
    using result = std::pair<std::string, std::string>;
    if (g.webhook->endpoint.tls && !tls) co_return result{{}, "no TLS context for its https URL"};
    auto up = webhook_upstream(g);
    upstream::pool pool(up, std::move(tls));
    struct watch {
        upstream::connection* in_use = nullptr;
        bool over = false;
        bool late = false;
    };
    auto w = std::make_shared<watch>();
    auto executor = co_await net::this_coro::executor;
    auto until = std::chrono::steady_clock::now() + g.webhook->timeout;
    net::steady_timer deadline(executor, until);
    deadline.async_wait([w](boost::system::error_code ec) {
        if (ec || w->over) return;
        w->late = true;
        if (w->in_use) w->in_use->close();
    });
    upstream::exchange_hooks hooks;
    hooks.in_use = [w](upstream::connection* c) { w->in_use = c; };
    hooks.abandoned = [w] { return w->late; };
    auto head = upstream::credential_request_head(
        "POST", up, "", "Content-Type: application/json\r\n", body.size());
    std::optional<upstream::response_parser> parser;
    auto started =
        co_await upstream::start_exchange(pool, executor, head, body, parser, false, true, hooks);
    std::string answer;
    upstream::failure failed = started.failed;
    if (started.conn)
        failed = co_await upstream::read_body(*started.conn, *parser, answer, answer_limit,
                                              up.idle_timeout, until);
    w->over = true;
    w->in_use = nullptr;
    deadline.cancel();
    if (w->late) co_return result{{}, "no answer in time"};
    if (!started.conn)
        co_return result{{}, failed.detail.empty() ? std::string("no answer") : failed.detail};
    if (failed) co_return result{{}, "no answer: " + failed.detail};
    auto status = parser->get().result_int();
    if (status != 200) co_return result{{}, "it answered " + std::to_string(status)};
    co_return result{std::move(answer), {}};
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
        auto made = upstream::make_client_context(webhook_upstream(g));
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
