#include "gateway/guardrails/webhook.hpp"

#include "gateway/guardrails/engine.hpp"
#include "gateway/observability/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace gateway::guardrails {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
// A verdict is a few spans; a longer answer is no webhook's.
constexpr std::size_t answer_limit = 1 << 20;

// One POST and its answer's body, all within `timeout`; the reason it failed otherwise.
net::awaitable<std::pair<std::string, std::string>> post(net::any_io_executor executor,
                                                         const config::guardrail_webhook& hook,
                                                         std::string body) {
    const auto& at = hook.endpoint;
    if (at.tls) co_return std::pair{std::string(), std::string("https:// is not supported")};
    auto deadline = std::chrono::steady_clock::now() + hook.timeout;
    tcp::resolver resolver(executor);
    auto [resolve_ec, found] =
        co_await resolver.async_resolve(at.host, std::to_string(at.port), use_ec);
    if (resolve_ec) co_return std::pair{std::string(), "cannot resolve: " + resolve_ec.message()};
    beast::tcp_stream stream(executor);
    stream.expires_at(deadline);
    auto [connect_ec, ignored] = co_await stream.async_connect(found, use_ec);
    if (connect_ec) co_return std::pair{std::string(), "cannot connect: " + connect_ec.message()};
    bhttp::request<bhttp::string_body> req(bhttp::verb::post,
                                           at.base_path.empty() ? "/" : at.base_path, 11);
    req.set(bhttp::field::host, at.host);
    req.set(bhttp::field::content_type, "application/json");
    req.set(bhttp::field::connection, "close");
    req.body() = std::move(body);
    req.prepare_payload();
    auto [write_ec, sent] = co_await bhttp::async_write(stream, req, use_ec);
    if (write_ec) co_return std::pair{std::string(), "cannot send: " + write_ec.message()};
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(answer_limit);
    auto [read_ec, got] = co_await bhttp::async_read(stream, buffer, parser, use_ec);
    beast::error_code closed;
    stream.socket().close(closed);
    if (read_ec == beast::error::timeout || write_ec == beast::error::timeout)
        co_return std::pair{std::string(), std::string("no answer in time")};
    if (read_ec) co_return std::pair{std::string(), "no answer: " + read_ec.message()};
    auto status = parser.get().result_int();
    if (status != 200) co_return std::pair{std::string(), "it answered " + std::to_string(status)};
    co_return std::pair{std::move(parser.get().body()), std::string()};
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

net::awaitable<webhook_answer> webhooks::ask(net::any_io_executor executor,
                                             const config::guardrail_config& g,
                                             config::guardrail_stage stage, std::string_view text,
                                             std::string_view model, std::string_view key) {
    const auto& hook = *g.webhook;
    webhook_answer out;
    std::string failure;
    if (!may_call(g.name)) {
        failure = "its circuit breaker is open";
    } else {
        auto body = json::serialize(json::object{
            {"stage", stage_name(stage)}, {"text", text}, {"model", model}, {"key", key}});
        auto [answer, failed] = co_await post(executor, hook, std::move(body));
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
