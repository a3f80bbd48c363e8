#include "gateway/mcp/client.hpp"

#include "gateway/json_fields.hpp"
#include "gateway/observability/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace gateway::mcp {

namespace json = boost::json;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr int max_pages = 100;

}  // namespace

client::client(net::any_io_executor executor, std::string label, std::unique_ptr<transport> t)
    : executor_(std::move(executor)), label_(std::move(label)), transport_(std::move(t)) {}

client::~client() {
    on_closed = nullptr;
    close();
}

void client::close(const std::string& why) {
    if (transport_) transport_->close();
    open_ = false;
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& [id, w] : waiting) {
        if (w->done) continue;
        w->done = outcome{outcome::kind::failed, {}, why, 0};
        w->timer.cancel();
    }
}

net::awaitable<std::string> client::connect(config::duration timeout) {
    transport_events events;
    events.message = [this](json::object m) { received(std::move(m)); };
    events.request_failed = [this](const json::value& id, std::string why, bool session_gone) {
        if (!id.is_int64()) return;
        finish(id.as_int64(),
               {session_gone ? outcome::kind::session_gone : outcome::kind::failed, {}, why, 0});
    };
    events.closed = [this](std::string why) {
        close(why);
        if (on_closed) on_closed(std::move(why));
    };
    auto opened = co_await transport_->open(std::move(events));
    if (!opened.empty()) co_return opened;
    open_ = true;
    json::object params{
        {"protocolVersion", protocol_versions[0]},
        {"capabilities", json::object{}},
        {"clientInfo", {{"name", "contextgate"}, {"title", "contextgate"}, {"version", "0.1"}}}};
    std::string method = "initialize";  // a named local: GCC 12 and literals in co_await
    auto reply = co_await request(std::move(method), std::move(params), timeout);
    if (!reply.ok()) {
        auto why =
            reply.what == outcome::kind::timeout
                ? "it did not answer `initialize` within " + std::to_string(timeout.count()) + " ms"
                : "initialize failed: " + reply.message;
        close(why);
        co_return why;
    }
    const auto* result = reply.result.if_object();
    auto version = result ? string_of(*result, "protocolVersion") : std::string();
    if (std::find(std::begin(protocol_versions), std::end(protocol_versions), version) ==
        std::end(protocol_versions)) {
        auto why = "the server speaks MCP version `" + version + "`, which contextgate does not";
        close(why);
        co_return why;
    }
    protocol_version_ = version;
    if (const auto* info = result->if_contains("serverInfo"); info && info->is_object())
        server_info_ = info->as_object();
    notify("notifications/initialized");
    transport_->initialized(protocol_version_);
    co_return std::string();
}

net::awaitable<outcome> client::request(std::string method, json::object params,
                                        config::duration timeout) {
    if (!open_) co_return outcome{outcome::kind::failed, {}, "not connected", 0};
    auto id = next_id_++;
    auto w = std::make_shared<waiter>(executor_);
    waiting_[id] = w;
    json::object message{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.empty()) message["params"] = std::move(params);
    transport_->send(std::move(message));
    w->timer.expires_after(timeout);
    if (!w->done) co_await w->timer.async_wait(use_ec);
    if (w->done) co_return std::move(*w->done);
    // No answer in time: the server is told to stop working on it.
    waiting_.erase(id);
    notify("notifications/cancelled", {{"requestId", id},
                                       {"reason", "contextgate: no answer within " +
                                                      std::to_string(timeout.count()) + " ms"}});
    co_return outcome{outcome::kind::timeout,
                      {},
                      "no answer within " + std::to_string(timeout.count()) + " ms",
                      0};
}

void client::notify(std::string method, json::object params) {
    if (!open_) return;
    json::object message{{"jsonrpc", "2.0"}, {"method", std::move(method)}};
    if (!params.empty()) message["params"] = std::move(params);
    transport_->send(std::move(message));
}

net::awaitable<client::listing> client::list_tools(config::duration timeout) {
    listing out;
    std::string cursor;
    for (int page = 0; page < max_pages; ++page) {
        json::object params;
        if (!cursor.empty()) params["cursor"] = cursor;
        std::string method = "tools/list";
        auto reply = co_await request(std::move(method), std::move(params), timeout);
        if (!reply.ok()) {
            out.error = "tools/list failed: " + reply.message;
            co_return out;
        }
        const auto* result = reply.result.if_object();
        const auto* tools = result ? result->if_contains("tools") : nullptr;
        if (!tools || !tools->is_array()) {
            out.error = "tools/list answered without a `tools` list";
            co_return out;
        }
        for (const auto& t : tools->as_array()) out.tools.push_back(t);
        cursor = string_of(*result, "nextCursor");
        if (cursor.empty()) co_return out;
    }
    out.error = "tools/list went on for more than " + std::to_string(max_pages) + " pages";
    co_return out;
}

void client::finish(std::int64_t id, outcome o) {
    auto it = waiting_.find(id);
    if (it == waiting_.end()) return;  // timed out already, or not ours
    auto w = it->second;
    waiting_.erase(it);
    w->done = std::move(o);
    w->timer.cancel();
}

void client::answer(const json::value& id, json::object result) {
    transport_->send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void client::refuse(const json::value& id, std::int64_t code, std::string message) {
    transport_->send(
        {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void client::received(json::object message) {
    const auto* method = message.if_contains("method");
    const auto* id = message.if_contains("id");
    if (method && method->is_string()) {
        std::string_view name = method->as_string();
        if (id) {  // the server asks something of us
            if (name == "ping")
                answer(*id, {});
            else
                refuse(*id, -32601, "contextgate does not offer `" + std::string(name) + "`");
            return;
        }
        if (name == "notifications/tools/list_changed") {
            if (on_tools_changed) on_tools_changed();
        } else if (name == "notifications/message") {
            observability::log_debug("mcp " + label_ + ": " + json::serialize(message));
        }
        return;
    }
    if (!id || !id->is_int64()) return;  // an answer to nothing we asked
    outcome o;
    if (const auto* error = message.if_contains("error"); error && error->is_object()) {
        o.what = outcome::kind::rpc_error;
        o.message = string_of(error->as_object(), "message");
        if (const auto* code = error->as_object().if_contains("code"); code && code->is_int64())
            o.code = code->as_int64();
        if (o.message.empty()) o.message = "error " + std::to_string(o.code);
    } else if (const auto* result = message.if_contains("result")) {
        o.what = outcome::kind::ok;
        o.result = *result;
    } else {
        o.what = outcome::kind::failed;
        o.message = "an answer with neither result nor error";
    }
    finish(id->as_int64(), std::move(o));
}

}  // namespace gateway::mcp
