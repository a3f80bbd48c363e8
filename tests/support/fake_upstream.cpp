#include "tests/support/fake_upstream.hpp"

#include "tests/support/fake_azure.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/support/fake_vertex.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace gateway::testing {

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace net::experimental::awaitable_operators;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

std::string received_request::header(std::string_view name) const {
    for (const auto& [n, v] : headers)
        if (boost::beast::iequals(n, name)) return v;
    return {};
}

namespace {

// A whole HTTP response for one scripted reply.
std::string scripted_answer(const scripted_reply& reply, const std::string& model) {
    std::string body;
    std::string extra;
    if (reply.status != 200) {
        body = json::serialize(json::object{{"error",
                                             {{"message", reply.content},
                                              {"type", "fake_error"},
                                              {"param", nullptr},
                                              {"code", "fake_" + std::to_string(reply.status)}}}});
        if (!reply.retry_after.empty()) extra = "retry-after: " + reply.retry_after + "\r\n";
    } else {
        json::object message{{"role", "assistant"}, {"content", reply.content}};
        if (!reply.calls.empty()) {
            if (reply.content.empty()) message["content"] = nullptr;
            json::array calls;
            for (std::size_t i = 0; i < reply.calls.size(); ++i)
                calls.push_back(
                    {{"id", "call_scripted_" + std::to_string(i)},
                     {"type", "function"},
                     {"function",
                      {{"name", reply.calls[i].name}, {"arguments", reply.calls[i].arguments}}}});
            message["tool_calls"] = std::move(calls);
        }
        body = json::serialize(json::object{
            {"id", "chatcmpl-scripted"},
            {"object", "chat.completion"},
            {"created", 1'700'000'000},
            {"model", model},
            {"choices",
             json::array{json::object{
                 {"index", 0},
                 {"message", std::move(message)},
                 {"finish_reason", reply.calls.empty() ? reply.finish_reason : "tool_calls"}}}},
            {"usage", reply.usage.empty() ? json::value(json::object{{"prompt_tokens", 1},
                                                                     {"completion_tokens", 1},
                                                                     {"total_tokens", 2}})
                                          : json::parse(reply.usage)}});
    }
    return "HTTP/1.1 " + std::to_string(reply.status) +
           (reply.status == 200 ? " OK" : " Scripted") + "\r\nContent-Type: application/json\r\n" +
           extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One scripted reply as OpenAI streams it: the role, the text in two pieces, each call's id and
// name in its first fragment and its arguments in two more, the finish reason, [DONE].
std::vector<std::string> scripted_events(const scripted_reply& reply, const std::string& model) {
    auto frame = [&](json::object delta, json::value finish) {
        json::object chunk{{"id", "chatcmpl-scripted"},
                           {"object", "chat.completion.chunk"},
                           {"created", 1'700'000'000},
                           {"model", model},
                           {"choices", json::array{json::object{{"index", 0},
                                                                {"delta", std::move(delta)},
                                                                {"finish_reason", finish}}}}};
        return "data: " + json::serialize(chunk) + "\n\n";
    };
    std::vector<std::string> events;
    events.push_back(frame({{"role", "assistant"}, {"content", ""}}, nullptr));
    if (!reply.stream_error.empty()) {
        json::object error{{"error", {{"message", reply.stream_error}, {"type", "server_error"}}}};
        events.push_back("data: " + json::serialize(error) + "\n\n");
        return events;
    }
    auto half = reply.content.size() / 2;
    for (auto piece : {reply.content.substr(0, half), reply.content.substr(half)})
        if (!piece.empty()) events.push_back(frame({{"content", piece}}, nullptr));
    for (std::size_t i = 0; i < reply.calls.size(); ++i) {
        const auto& c = reply.calls[i];
        events.push_back(frame(
            {{"tool_calls",
              json::array{json::object{{"index", i},
                                       {"id", "call_scripted_" + std::to_string(i)},
                                       {"type", "function"},
                                       {"function", {{"name", c.name}, {"arguments", ""}}}}}}},
            nullptr));
        auto cut = c.arguments.size() / 2;
        for (auto piece : {c.arguments.substr(0, cut), c.arguments.substr(cut)})
            events.push_back(frame(
                {{"tool_calls",
                  json::array{json::object{{"index", i}, {"function", {{"arguments", piece}}}}}}},
                nullptr));
    }
    events.push_back(frame(json::object{},
                           json::string(reply.calls.empty() ? reply.finish_reason : "tool_calls")));
    if (!reply.usage.empty()) {
        json::object chunk{{"id", "chatcmpl-scripted"}, {"object", "chat.completion.chunk"},
                           {"created", 1'700'000'000},  {"model", model},
                           {"choices", json::array{}},  {"usage", json::parse(reply.usage)}};
        events.push_back("data: " + json::serialize(chunk) + "\n\n");
    }
    events.push_back("data: [DONE]\n\n");
    return events;
}

}  // namespace

struct fake_upstream::impl {
    fake_options options;
    net::io_context io;
    tcp::acceptor acceptor{io};
    std::optional<net::ssl::context> tls;
    std::vector<std::thread> threads;
    std::uint16_t port = 0;  // kept: the acceptor is closed by stop()

    mutable std::mutex mutex;
    mutable std::condition_variable changed;
    std::vector<received_request> requests;
    std::size_t accepted = 0;
    std::size_t open = 0;
    std::chrono::steady_clock::time_point closed_at{};
    bool stopped = false;
    bool scripted = false;
    std::deque<scripted_reply> script;
    std::vector<scripted_reply> looped;  // the whole script, when it starts again once used up
    std::vector<std::string> scripted_bodies;
    std::vector<scripted_reply> turns;  // turn mode when not empty
    std::vector<turn_timing> timings;
    bool lists_fail = false;
    std::size_t lists_asked = 0;

    // A model list in `provider`'s shape ("openai", "anthropic", "gemini"), or its 503.
    std::pair<int, std::string> model_list(std::string_view provider, const std::string& target);

    // The next scripted reply for this request, or nullopt when not in scripted mode. In turn
    // mode, `timing` is set to the index of this answer's entry in `timings`.
    std::optional<scripted_reply> next_scripted(const std::string& body, const json::object* object,
                                                std::optional<std::size_t>& timing) {
        std::lock_guard lock(mutex);
        if (!turns.empty()) return by_turn(object, timing);
        if (!scripted) return std::nullopt;
        scripted_bodies.push_back(body);
        changed.notify_all();
        if (script.empty() && !looped.empty()) script.assign(looped.begin(), looped.end());
        if (script.empty()) return scripted_reply{"fake: script exhausted", "stop", 500, "", 0};
        auto next = std::move(script.front());
        script.pop_front();
        if (!next.expect.empty() && body.find(next.expect) == std::string::npos)
            return scripted_reply{"fake: the request does not hold `" + next.expect + "`", "stop",
                                  400, "", 0};
        return next;
    }

    std::optional<scripted_reply> by_turn(const json::object* object,
                                          std::optional<std::size_t>& timing) {
        turn_timing t;
        t.arrived = std::chrono::steady_clock::now();
        const json::array* messages = nullptr;
        if (object)
            if (auto* m = object->if_contains("messages")) messages = m->if_array();
        if (messages)
            for (const auto& m : *messages) {
                const auto* message = m.if_object();
                if (!message || !message->contains("role")) continue;
                const auto& role = message->at("role");
                if (role == "assistant") ++t.turn;
                const auto* content = message->if_contains("content");
                if (role == "user" && t.conversation.empty() && content && content->is_string())
                    t.conversation = std::string(content->as_string().subview(0, 64));
            }
        timing = timings.size();
        auto reply = turns[std::min(t.turn, turns.size() - 1)];
        timings.push_back(std::move(t));
        return reply;
    }
    void answered(std::optional<std::size_t> timing) {
        if (!timing) return;
        std::lock_guard lock(mutex);
        if (*timing < timings.size()) timings[*timing].answered = std::chrono::steady_clock::now();
    }

    void record(received_request r) {
        std::lock_guard lock(mutex);
        if (!options.keep_requests) return;
        requests.push_back(std::move(r));
        changed.notify_all();
    }
    void opened() {
        std::lock_guard lock(mutex);
        ++accepted;
        ++open;
        changed.notify_all();
    }
    void closed() {
        std::lock_guard lock(mutex);
        --open;
        closed_at = std::chrono::steady_clock::now();
        changed.notify_all();
    }

    net::awaitable<void> accept_loop();
    net::awaitable<void> connection(tcp::socket s);
    template <class Stream>
    net::awaitable<void> serve(Stream& stream, tcp::socket& lowest);
    // Writes `events` as a chunked SSE response, steered by the x-fake-* headers of `r`.
    // False when the connection is done (closed, reset, or x-fake-close-after).
    template <class Stream>
    net::awaitable<bool> write_events(Stream& stream, tcp::socket& lowest,
                                      const received_request& r, std::vector<std::string> events,
                                      std::string content_type);
    // The provider APIs the fake speaks besides OpenAI's.
    enum class provider_api { anthropic, gemini, converse, invoke, vertex };
    // Answers an Anthropic, Gemini or Bedrock Converse request (see fake_providers.hpp); false
    // when the connection is done.
    template <class Stream>
    net::awaitable<bool> serve_provider(Stream& stream, tcp::socket& lowest,
                                        const received_request& r, provider_api api);
    int serial = 0;
};

namespace {

constexpr std::int64_t created = 1'700'000'000;

std::string sse_frame(const json::value& v, std::string_view event = {}) {
    std::string out;
    if (!event.empty()) out += "event: " + std::string(event) + "\n";
    return out + "data: " + json::serialize(v) + "\n\n";
}

json::object chunk(std::string_view model, json::value delta, json::value finish) {
    return {{"id", "chatcmpl-fake"},
            {"object", "chat.completion.chunk"},
            {"created", created},
            {"model", model},
            {"system_fingerprint", "fp_fake"},
            {"choices", json::array{json::object{{"index", 0},
                                                 {"delta", std::move(delta)},
                                                 {"logprobs", nullptr},
                                                 {"finish_reason", std::move(finish)}}}}};
}

// Reads one request, recording its exact bytes. `pending` carries bytes read past it.
template <class Stream>
net::awaitable<std::optional<received_request>> read_request(Stream& stream, std::string& pending) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(1 << 20);
    parser.body_limit(256 << 20);
    received_request r;
    char buffer[16384];
    while (!parser.is_done()) {
        if (!pending.empty()) {
            boost::system::error_code ec;
            std::size_t used = parser.put(net::buffer(pending), ec);
            r.raw.append(pending, 0, used);
            pending.erase(0, used);
            if (ec && ec != http::error::need_more) co_return std::nullopt;
            if (used > 0) continue;
        }
        auto [ec, n] = co_await stream.async_read_some(net::buffer(buffer), use_ec);
        if (ec) co_return std::nullopt;
        pending.append(buffer, n);
    }
    auto& m = parser.get();
    r.method = std::string(m.method_string());
    r.target = std::string(m.target());
    r.body = m.body();
    for (const auto& f : m)
        r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    co_return r;
}

template <class Stream>
net::awaitable<bool> write_all(Stream& stream, std::string_view data) {
    auto [ec, n] = co_await net::async_write(stream, net::buffer(data.data(), data.size()), use_ec);
    co_return !ec;
}

net::awaitable<void> sleep_ms(long ms) {
    net::steady_timer timer(co_await net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await timer.async_wait(use_ec);
}

// Waits until the peer closes (or `ms` passes, when ms >= 0); returns true when it closed.
template <class Stream>
net::awaitable<bool> wait_for_close(Stream& stream, long ms) {
    auto reader = [&stream]() -> net::awaitable<void> {
        char sink[4096];
        for (;;) {
            auto [ec, n] = co_await stream.async_read_some(net::buffer(sink), use_ec);
            if (ec) co_return;
        }
    };
    if (ms < 0) {
        co_await reader();
        co_return true;
    }
    auto result = co_await (reader() || sleep_ms(ms));
    co_return result.index() == 0;
}

void reset(tcp::socket& socket) {
    boost::system::error_code ignored;
    socket.set_option(net::socket_base::linger(true, 0), ignored);
    socket.close(ignored);
}

long number(const received_request& r, std::string_view header, long fallback) {
    auto text = r.header(header);
    return text.empty() ? fallback : std::stol(text);
}

}  // namespace

std::string fake_upstream::chat_completion_json(std::string_view model, bool tool_call) {
    json::object message{
        {"role", "assistant"}, {"refusal", nullptr}, {"annotations", json::array{}}};
    if (tool_call) {
        message["content"] = nullptr;
        message["tool_calls"] = json::array{json::object{
            {"id", "call_fake1"},
            {"type", "function"},
            {"function", {{"name", "get_weather"}, {"arguments", "{\"location\": \"Paris\"}"}}}}};
    } else {
        message["content"] = "Hello from the fake upstream! \u2713 \u00fcn\u00efc\u00f6d\u00e9";
    }
    json::object body{
        {"id", "chatcmpl-fake"},
        {"object", "chat.completion"},
        {"created", created},
        {"model", model},
        {"system_fingerprint", "fp_fake"},
        {"choices",
         json::array{json::object{{"index", 0},
                                  {"message", std::move(message)},
                                  {"logprobs", nullptr},
                                  {"finish_reason", tool_call ? "tool_calls" : "stop"}}}},
        {"usage", {{"prompt_tokens", 9}, {"completion_tokens", 12}, {"total_tokens", 21}}},
        {"x_fake_unknown_field", {{"kept", true}}}};
    return json::serialize(body);
}

std::vector<std::string> fake_upstream::chat_stream_events(std::string_view model, bool tool_call,
                                                           bool include_usage) {
    std::vector<std::string> events;
    if (tool_call) {
        events.push_back(sse_frame(chunk(
            model,
            {{"role", "assistant"},
             {"content", nullptr},
             {"tool_calls", json::array{json::object{
                                {"index", 0},
                                {"id", "call_fake1"},
                                {"type", "function"},
                                {"function", {{"name", "get_weather"}, {"arguments", ""}}}}}}},
            nullptr)));
        for (std::string_view part : {"{\"lo", "cation\"", ": \"Par", "is\"}"})
            events.push_back(sse_frame(chunk(
                model,
                {{"tool_calls",
                  json::array{json::object{{"index", 0}, {"function", {{"arguments", part}}}}}}},
                nullptr)));
        events.push_back(sse_frame(chunk(model, json::object{}, "tool_calls")));
    } else {
        events.push_back(sse_frame(
            chunk(model, {{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr)));
        for (std::string_view part : {"Hello", " from", " the", " fake", " upstream",
                                      "! \u2713 \u00fcn\u00efc\u00f6d\u00e9"})
            events.push_back(sse_frame(chunk(model, {{"content", part}}, nullptr)));
        events.push_back(sse_frame(chunk(model, json::object{}, "stop")));
    }
    if (include_usage) {
        auto usage = chunk(model, json::object{}, nullptr);
        usage["choices"] = json::array{};
        usage["usage"] = {{"prompt_tokens", 9}, {"completion_tokens", 12}, {"total_tokens", 21}};
        events.push_back(sse_frame(usage));
    }
    events.push_back("data: [DONE]\n\n");
    return events;
}

namespace {

json::object response_object(std::string_view model, bool completed) {
    json::array output;
    if (completed)
        output.push_back(
            {{"type", "message"},
             {"id", "msg_fake"},
             {"status", "completed"},
             {"role", "assistant"},
             {"content", json::array{json::object{{"type", "output_text"},
                                                  {"text", "Hello from the fake upstream!"},
                                                  {"annotations", json::array{}}}}}});
    json::object r{{"id", "resp_fake"},
                   {"object", "response"},
                   {"created_at", created},
                   {"status", completed ? "completed" : "in_progress"},
                   {"error", nullptr},
                   {"incomplete_details", nullptr},
                   {"instructions", nullptr},
                   {"model", model},
                   {"output", std::move(output)},
                   {"parallel_tool_calls", true},
                   {"tool_choice", "auto"},
                   {"tools", json::array{}},
                   {"usage", nullptr}};
    if (completed) r["usage"] = {{"input_tokens", 5}, {"output_tokens", 6}, {"total_tokens", 11}};
    return r;
}

}  // namespace

std::string fake_upstream::responses_json(std::string_view model) {
    return json::serialize(response_object(model, true));
}

std::vector<std::string> fake_upstream::responses_stream_events(std::string_view model) {
    std::vector<std::string> events;
    int sequence = 0;
    auto add = [&](std::string_view type, json::object data) {
        data["type"] = type;
        data["sequence_number"] = sequence++;
        events.push_back(sse_frame(data, type));
    };
    add("response.created", {{"response", response_object(model, false)}});
    add("response.output_item.added", {{"output_index", 0},
                                       {"item",
                                        {{"type", "message"},
                                         {"id", "msg_fake"},
                                         {"status", "in_progress"},
                                         {"role", "assistant"},
                                         {"content", json::array{}}}}});
    add("response.content_part.added",
        {{"item_id", "msg_fake"},
         {"output_index", 0},
         {"content_index", 0},
         {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", json::array{}}}}});
    for (std::string_view part : {"Hello", " from", " the fake upstream!"})
        add("response.output_text.delta",
            {{"item_id", "msg_fake"}, {"output_index", 0}, {"content_index", 0}, {"delta", part}});
    add("response.output_text.done", {{"item_id", "msg_fake"},
                                      {"output_index", 0},
                                      {"content_index", 0},
                                      {"text", "Hello from the fake upstream!"}});
    auto done = response_object(model, true);
    add("response.content_part.done",
        {{"item_id", "msg_fake"},
         {"output_index", 0},
         {"content_index", 0},
         {"part", done["output"].as_array()[0].as_object()["content"].as_array()[0]}});
    add("response.output_item.done", {{"output_index", 0}, {"item", done["output"].as_array()[0]}});
    add("response.completed", {{"response", done}});
    return events;
}

std::string fake_upstream::models_json() {
    json::array data;
    for (std::string_view id : {"gpt-4o-mini", "gpt-4o", "fake-model"})
        data.push_back(
            {{"id", id}, {"object", "model"}, {"created", created}, {"owned_by", "fake"}});
    return json::serialize(json::object{{"object", "list"}, {"data", std::move(data)}});
}

std::vector<std::string> fake_upstream::anthropic_model_ids() {
    return {"claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"};
}

std::vector<std::string> fake_upstream::gemini_model_ids() {
    return {"gemini-2.5-pro", "gemini-2.5-flash", "text-embedding-004"};
}

namespace {

// The query parameter `name` of `target` (no decoding: the fake's values need none).
std::string query_parameter(const std::string& target, std::string_view name) {
    auto q = target.find('?');
    if (q == std::string::npos) return {};
    std::string_view query = std::string_view(target).substr(q + 1);
    while (!query.empty()) {
        auto pair = query.substr(0, query.find('&'));
        if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=')
            return std::string(pair.substr(name.size() + 1));
        if (pair.size() == query.size()) break;
        query.remove_prefix(pair.size() + 1);
    }
    return {};
}

}  // namespace

std::pair<int, std::string> fake_upstream::impl::model_list(std::string_view provider,
                                                            const std::string& target) {
    {
        std::lock_guard lock(mutex);
        ++lists_asked;
        changed.notify_all();
        if (lists_fail)
            return {503, R"({"error":{"message":"fake: lists fail","type":"server_error"}})"};
    }
    if (provider == "openai") return {200, models_json()};
    // Pages of at most 2, from the model after `after_id` (Anthropic) or at `pageToken`.
    auto ids = provider == "anthropic" ? anthropic_model_ids() : gemini_model_ids();
    std::size_t from = 0;
    if (provider == "anthropic") {
        auto after = query_parameter(target, "after_id");
        if (!after.empty())
            from =
                static_cast<std::size_t>(std::find(ids.begin(), ids.end(), after) - ids.begin()) +
                1;
    } else if (auto token = query_parameter(target, "pageToken"); !token.empty()) {
        from = std::stoul(token.substr(5));  // "page-N"
    }
    from = std::min(from, ids.size());
    auto to = std::min(ids.size(), from + 2);
    json::array data;
    for (auto i = from; i < to; ++i) {
        if (provider == "anthropic")
            data.push_back({{"type", "model"},
                            {"id", ids[i]},
                            {"display_name", "Fake " + ids[i]},
                            {"created_at", "2025-09-29T00:00:00Z"}});
        else
            data.push_back({{"name", "models/" + ids[i]},
                            {"displayName", "Fake " + ids[i]},
                            {"supportedGenerationMethods", {"generateContent"}}});
    }
    json::object page;
    if (provider == "anthropic") {
        page = {{"data", std::move(data)},
                {"has_more", to < ids.size()},
                {"first_id", from < to ? json::value(ids[from]) : json::value(nullptr)},
                {"last_id", from < to ? json::value(ids[to - 1]) : json::value(nullptr)}};
    } else {
        page = {{"models", std::move(data)}};
        if (to < ids.size()) page["nextPageToken"] = "page-" + std::to_string(to);
    }
    return {200, json::serialize(page)};
}

template <class Stream>
net::awaitable<void> fake_upstream::impl::serve(Stream& stream, tcp::socket& lowest) {
    std::string pending;
    for (;;) {
        auto request = co_await read_request(stream, pending);
        if (!request) co_return;
        received_request r = *request;
        record(*request);
        std::string mode = r.header("x-fake-mode");
        long delay = number(r, "x-fake-delay-ms", 0);

        if (mode == "stall") {
            co_await wait_for_close(stream, -1);
            co_return;
        }
        if (mode == "reset") {
            reset(lowest);
            co_return;
        }
        if (mode == "close") co_return;
        if (delay > 0) co_await sleep_ms(delay);

        if (boost::beast::iequals(r.header("upgrade"), "websocket")) {
            std::string head =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Accept: fake-accept\r\n\r\n";
            {
                bool ok = co_await write_all(stream, head);
                if (!ok) co_return;
            }
            if (!pending.empty()) {
                bool ok = co_await write_all(stream, pending);
                if (!ok) co_return;
            }
            char buffer[4096];
            for (;;) {
                auto [ec, n] = co_await stream.async_read_some(net::buffer(buffer), use_ec);
                if (ec) co_return;
                {
                    bool ok = co_await write_all(stream, std::string_view(buffer, n));
                    if (!ok) co_return;
                }
            }
        }

        // Azure OpenAI (/openai/…): its credential, api-version and deployment are checked, then
        // it is answered as the OpenAI call it stands for (fake_azure.hpp), echoed as it came.
        bool azure = r.target.rfind("/openai/", 0) == 0;
        if (azure) {
            auto read = fake_azure::read(r, options.azure_tokens);
            if (!read.refusal && r.header("x-fake-status") == "429")
                read.refusal = fake_azure::throttled();
            if (read.refusal) {
                const auto& a = *read.refusal;
                std::string answer =
                    "HTTP/1.1 " + std::to_string(a.status) +
                    " Azure\r\nContent-Type: application/json\r\n" + a.extra_headers +
                    "Content-Length: " + std::to_string(a.body.size()) + "\r\n\r\n" + a.body;
                bool ok = co_await write_all(stream, answer);
                if (!ok) co_return;
                continue;
            }
            r.target = read.call.openai_target;
        }
        std::string path = r.target.substr(0, r.target.find('?'));
        bool anthropic = path == "/v1/messages" && r.method == "POST";
        bool gemini = path.rfind("/v1beta/models/", 0) == 0 && r.method == "POST" &&
                      (path.find(":generateContent") != std::string::npos ||
                       path.find(":streamGenerateContent") != std::string::npos);
        // Bedrock: /model/{id}/converse and /model/{id}/converse-stream.
        bool converse = path.rfind("/model/", 0) == 0 && r.method == "POST" &&
                        (path.ends_with("/converse") || path.ends_with("/converse-stream"));
        // Bedrock's InvokeModel: /model/{id}/invoke and /invoke-with-response-stream.
        bool invoke = path.rfind("/model/", 0) == 0 && r.method == "POST" &&
                      (path.ends_with("/invoke") || path.ends_with("/invoke-with-response-stream"));
        // Vertex AI: /v1/projects/{p}/locations/{l}/publishers/{publisher}/models/{m}:{method},
        // and the same below /v1beta1.
        bool vertex =
            (path.rfind("/v1/projects/", 0) == 0 || path.rfind("/v1beta1/projects/", 0) == 0) &&
            r.method == "POST";
        if ((anthropic || gemini || converse || invoke || vertex) && mode != "echo") {
            auto api = gemini     ? provider_api::gemini
                       : converse ? provider_api::converse
                       : invoke   ? provider_api::invoke
                       : vertex   ? provider_api::vertex
                                  : provider_api::anthropic;
            bool go_on = co_await serve_provider(stream, lowest, r, api);
            if (!go_on) co_return;
            continue;
        }

        if (auto status = r.header("x-fake-status"); !status.empty()) {
            std::string extra;
            if (status == "429")
                extra =
                    "retry-after: 7\r\nx-ratelimit-remaining-requests: 0\r\n"
                    "x-ratelimit-reset-requests: 7s\r\n";
            std::string body = json::serialize(json::object{{"error",
                                                             {{"message", "fake error " + status},
                                                              {"type", "fake_error"},
                                                              {"param", nullptr},
                                                              {"code", "fake_" + status}}}});
            std::string head = "HTTP/1.1 " + status +
                               " Fake\r\nContent-Type: application/json\r\n" + extra +
                               "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
            {
                bool ok = co_await write_all(stream, head + body);
                if (!ok) co_return;
            }
            continue;
        }

        if (mode == "echo") {
            std::string head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                "x-fake-echo: 1\r\nContent-Length: " +
                std::to_string(r.raw.size()) + "\r\n\r\n";
            {
                bool ok = co_await write_all(stream, head);
                if (!ok) co_return;
            }
            {
                bool ok = co_await write_all(stream, r.raw);
                if (!ok) co_return;
            }
            continue;
        }

        json::value body;
        boost::system::error_code parse_ec;
        if (!r.body.empty()) body = json::parse(r.body, parse_ec);
        const json::object* object = body.if_object();
        auto model = object && object->contains("model") && (*object).at("model").is_string()
                         ? std::string((*object).at("model").as_string())
                         : std::string("fake-model");
        bool stream_requested =
            object && object->contains("stream") && (*object).at("stream") == json::value(true);
        // Tool calls until a tool's result comes back, then text (see canned_turn).
        bool tools =
            object && object->contains("tools") && !fake_providers::holds_tool_result(body);
        bool usage = false;
        if (object && object->contains("stream_options"))
            if (auto* so = (*object).at("stream_options").if_object())
                usage =
                    so->contains("include_usage") && so->at("include_usage") == json::value(true);

        if ((path == "/v1/models" || path == "/v1beta/models") &&
            (r.method == "GET" || r.method == "HEAD")) {
            auto [status, models] =
                model_list(path == "/v1beta/models"                 ? "gemini"
                           : !r.header("anthropic-version").empty() ? "anthropic"
                                                                    : "openai",
                           r.target);
            std::string head = "HTTP/1.1 " + std::to_string(status) +
                               " Fake\r\nContent-Type: application/json\r\nContent-Length: " +
                               std::to_string(models.size()) + "\r\n\r\n";
            if (r.method == "HEAD") models.clear();
            {
                bool ok = co_await write_all(stream, head + models);
                if (!ok) co_return;
            }
            continue;
        }
        bool chat = path == "/v1/chat/completions";
        bool responses = path == "/v1/responses";
        if (!chat && !responses) {
            std::string body404 =
                R"({"error":{"message":"fake: unknown path","type":"invalid_request_error","param":null,"code":"unknown_url"}})";
            std::string head =
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body404.size()) + "\r\n\r\n";
            {
                bool ok = co_await write_all(stream, head + body404);
                if (!ok) co_return;
            }
            continue;
        }
        bool steered = false;
        for (auto& [name, value] : r.headers)
            steered =
                steered || boost::beast::iequals(std::string_view(name).substr(0, 7), "x-fake-");
        std::optional<std::size_t> timing;
        if (azure && chat && r.body.find(fake_azure::filtered_answer) != std::string::npos) {
            // The filter cut the answer: what came before it, finish_reason content_filter.
            scripted_reply cut;
            cut.content = "The answer was";
            cut.finish_reason = "content_filter";
            if (stream_requested) {
                bool go_on = co_await write_events(stream, lowest, r, scripted_events(cut, model),
                                                   "text/event-stream; charset=utf-8");
                if (!go_on) co_return;
            } else {
                bool ok = co_await write_all(stream, scripted_answer(cut, model));
                if (!ok) co_return;
            }
            continue;
        }
        if (chat && !steered)
            if (auto scripted = next_scripted(r.body, object, timing)) {
                if (scripted->reset_before_head) {
                    reset(lowest);
                    co_return;
                }
                if (scripted->delay_ms > 0) {
                    bool closed = co_await wait_for_close(stream, scripted->delay_ms);
                    if (closed) co_return;
                }
                if (stream_requested && scripted->status == 200 && !scripted->whole) {
                    auto cut = r;
                    if (scripted->cut_after >= 0)
                        cut.headers.emplace_back("x-fake-reset-after",
                                                 std::to_string(scripted->cut_after));
                    bool go_on = co_await write_events(stream, lowest, cut,
                                                       scripted_events(*scripted, model),
                                                       "text/event-stream; charset=utf-8");
                    answered(timing);
                    if (!go_on) co_return;
                    continue;
                }
                auto answer = scripted_answer(*scripted, model);
                bool ok = co_await write_all(stream, answer);
                answered(timing);
                if (!ok) co_return;
                continue;
            }
        if (!stream_requested) {
            auto answer = chat ? chat_completion_json(model, tools) : responses_json(model);
            if (auto u = r.header("x-fake-usage"); !u.empty())
                answer = fake_providers::with_usage(answer, u);
            std::string head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                "openai-processing-ms: 1\r\nx-request-id: req_fake\r\n"
                "Content-Length: " +
                std::to_string(answer.size()) + "\r\n\r\n";
            bool ok = co_await write_all(stream, head + answer);
            if (!ok || !r.header("x-fake-close-after").empty()) co_return;
            continue;
        }

        auto events =
            chat ? chat_stream_events(model, tools, usage) : responses_stream_events(model);
        std::string content_type = r.header("x-fake-content-type");
        if (content_type.empty()) content_type = "text/event-stream; charset=utf-8";
        bool go_on = co_await write_events(stream, lowest, r, std::move(events), content_type);
        if (!go_on) co_return;
    }
}

template <class Stream>
net::awaitable<bool> fake_upstream::impl::write_events(Stream& stream, tcp::socket& lowest,
                                                       const received_request& r,
                                                       std::vector<std::string> events,
                                                       std::string content_type) {
    long delay = number(r, "x-fake-delay-ms", 0);
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: " + content_type +
                       "\r\nCache-Control: no-cache\r\nx-request-id: req_fake\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    {
        bool ok = co_await write_all(stream, head);
        if (!ok) co_return false;
    }
    long chunk_size = number(r, "x-fake-chunk-size", 0);
    long stall_after = number(r, "x-fake-stall-after", -1);
    long stall_ms = number(r, "x-fake-stall-ms", -1);
    long reset_after = number(r, "x-fake-reset-after", -1);
    // The writes: one per event, or the whole transcript cut into chunk_size pieces.
    std::vector<std::string> writes;
    if (chunk_size > 0) {
        std::string all;
        for (const auto& e : events) all += e;
        for (std::size_t i = 0; i < all.size(); i += chunk_size)
            writes.push_back(all.substr(i, chunk_size));
    } else {
        writes = events;
    }
    for (std::size_t i = 0; i < writes.size(); ++i) {
        if (static_cast<long>(i) == reset_after) {
            reset(lowest);
            co_return false;
        }
        if (static_cast<long>(i) == stall_after) {
            bool closed = co_await wait_for_close(stream, stall_ms);
            if (closed) co_return false;
        }
        if (i > 0 && delay > 0) co_await sleep_ms(delay);
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", writes[i].size());
        std::string framed = std::string(size) + writes[i] + "\r\n";
        bool ok = co_await write_all(stream, framed);
        if (!ok) co_return false;
    }
    {
        bool ok = co_await write_all(stream, std::string_view("0\r\n\r\n"));
        if (!ok) co_return false;
    }
    // Closes the kept-alive connection behind the client's back, as upstreams do when idle.
    co_return r.header("x-fake-close-after").empty();
}

template <class Stream>
net::awaitable<bool> fake_upstream::impl::serve_provider(Stream& stream, tcp::socket& lowest,
                                                         const received_request& r,
                                                         provider_api api) {
    namespace fp = fake_providers;
    bool gemini = api == provider_api::gemini;
    bool converse = api == provider_api::converse;
    bool invoke = api == provider_api::invoke;
    // Vertex AI serves Gemini and Claude, each as the fake serves it directly but for the path,
    // the access token and rawPredict's body rules.
    std::optional<fake_vertex::call> vertex;
    if (api == provider_api::vertex) {
        vertex = fake_vertex::read_path(r.target);
        gemini = vertex && vertex->publisher == "google";
    }
    std::string path = r.target.substr(0, r.target.find('?'));
    boost::system::error_code ec;
    auto body = json::parse(r.body, ec);
    int n = 0;
    {
        std::lock_guard lock(mutex);
        n = ++serial;
    }
    fp::answer a;
    std::string model;
    bool stream_requested = false;
    if (vertex) {
        model = vertex->model;
        stream_requested = vertex->stream;
    } else if (gemini) {
        auto name = path.substr(15);
        model = name.substr(0, name.find(':'));
        stream_requested = path.find(":streamGenerateContent") != std::string::npos;
    } else if (converse) {
        // The id as sent, percent-encoded once (Converse's answer does not name it).
        model = path.substr(7, path.rfind('/') - 7);
        stream_requested = path.ends_with("/converse-stream");
    } else if (invoke) {
        model = path.substr(7, path.rfind('/') - 7);
        stream_requested = path.ends_with("/invoke-with-response-stream");
    } else if (const auto* o = body.if_object()) {
        if (const auto* m = o->if_contains("model"); m && m->is_string()) model = m->as_string();
        stream_requested = o->contains("stream") && o->at("stream") == json::value(true);
    }
    // Each API's error answer for a status and a message.
    auto error = [&](unsigned status, const std::string& message) {
        if (gemini || vertex) return fp::gemini_error(status, message);
        if (converse || invoke)
            return fp::converse_error(status,
                                      status == 429   ? "ThrottlingException"
                                      : status == 400 ? "ValidationException"
                                                      : "InternalServerException",
                                      message);
        return fp::anthropic_error(status, status == 429 ? "rate_limit_error" : "api_error",
                                   message);
    };
    std::optional<fp::answer> refusal;
    if (api == provider_api::vertex && !vertex)
        refusal = fp::gemini_error(404, "The requested URL " + path + " was not found.");
    else if (vertex)
        refusal =
            fake_vertex::refusal(r, ec ? json::value() : body, *vertex, options.vertex_tokens);
    if (converse) refusal = fp::converse_credential_refusal(r);
    // InvokeModel takes the model's own body: here Claude's, Messages with Bedrock's version.
    if (invoke) refusal = fp::invoke_refusal(r, body, model);
    if (!refusal && ec)
        refusal = gemini     ? fp::gemini_error(400, "Invalid JSON payload received.")
                  : converse ? fp::converse_error(400, "ValidationException",
                                                  "Malformed input request, please reformat "
                                                  "your input and try again.")
                             : fp::anthropic_error(400, "invalid_request_error", "invalid JSON");
    if (!refusal && !ec && !invoke && api != provider_api::vertex)
        refusal = gemini     ? fp::gemini_refusal(r, body)
                  : converse ? fp::converse_refusal(r, body)
                             : fp::anthropic_refusal(r, body);
    bool steered = false;
    for (auto& [name, value] : r.headers)
        steered = steered || boost::beast::iequals(std::string_view(name).substr(0, 7), "x-fake-");
    if (auto status = r.header("x-fake-status"); !status.empty()) {
        unsigned code = static_cast<unsigned>(std::stoul(status));
        a = error(code, "fake error " + status);
    } else if (refusal) {
        a = *refusal;
    } else if (vertex && vertex->method == "countTokens") {
        a.body =
            json::serialize(json::object{{"totalTokens", 12}, {"totalBillableCharacters", 48}});
    } else {
        fp::turn t;
        std::optional<std::size_t> untimed;  // turn mode's timings are Chat Completions' only
        auto scripted = steered ? std::nullopt : next_scripted(r.body, body.if_object(), untimed);
        if (scripted && scripted->delay_ms > 0) {
            bool closed = co_await wait_for_close(stream, scripted->delay_ms);
            if (closed) co_return false;
        }
        if (scripted && scripted->status != 200) {
            a = error(scripted->status, scripted->content);
            // The script's retry-after instead of the provider's usual one (429's is 7 s):
            // one header, as a provider sends it.
            if (!scripted->retry_after.empty()) {
                auto& h = a.extra_headers;
                if (auto at = h.find("retry-after: "); at != std::string::npos)
                    h.erase(at, h.find("\r\n", at) + 2 - at);
                h += "retry-after: " + scripted->retry_after + "\r\n";
            }
        } else {
            t = scripted ? fp::turn{scripted->content, scripted->calls, scripted->usage}
                         : fp::canned_turn(body, gemini);
            // Claude on Bedrock thinks when asked to, and signs its thinking (a scripted turn
            // says only what its script says).
            if (invoke && !scripted && fp::thinking_enabled(body))
                t.thinking = "Thinking it over: turn " + std::to_string(n) + ".";
            bool events = stream_requested && !(scripted && scripted->whole);
            a = gemini     ? fp::gemini_answer(t, model, events, n)
                : converse ? fp::converse_answer(t, events, n)
                : invoke   ? fp::invoke_answer(t, model, events, n)
                           : fp::anthropic_answer(t, model, events, n);
            if (scripted && !scripted->stream_error.empty() && events && (converse || invoke)) {
                // Bedrock's throttling in a stream: its first events, then an exception message.
                a.events.resize(std::min<std::size_t>(a.events.size(), 2));
                a.events.push_back(
                    fp::converse_stream_exception("throttlingException", scripted->stream_error));
            } else if (scripted && !scripted->stream_error.empty() && events && !gemini) {
                // Anthropic's overload in a stream: its preamble, then an error event.
                a.events.resize(std::min<std::size_t>(a.events.size(), 2));
                a.events.push_back(
                    "event: error\ndata: " +
                    json::serialize(json::object{
                        {"type", "error"},
                        {"error",
                         {{"type", "overloaded_error"}, {"message", scripted->stream_error}}}}) +
                    "\n\n");
            }
        }
    }
    if (!a.events.empty()) {
        bool go_on = co_await write_events(stream, lowest, r, std::move(a.events), a.content_type);
        co_return go_on;
    }
    if (auto u = r.header("x-fake-usage"); !u.empty() && a.status == 200)
        a.body = fp::with_usage(a.body, u);
    std::string head = "HTTP/1.1 " + std::to_string(a.status) +
                       (a.status == 200 ? " OK" : " Error") +
                       "\r\nContent-Type: " + a.content_type + "\r\n" + a.extra_headers +
                       "request-id: req_fake_" + std::to_string(n) + "\r\n" +
                       "Content-Length: " + std::to_string(a.body.size()) + "\r\n\r\n";
    bool ok = co_await write_all(stream, head + a.body);
    co_return ok&& r.header("x-fake-close-after").empty();
}

net::awaitable<void> fake_upstream::impl::connection(tcp::socket s) {
    opened();
    if (tls) {
        net::ssl::stream<tcp::socket> secure(std::move(s), *tls);
        auto [ec] = co_await secure.async_handshake(net::ssl::stream_base::server, use_ec);
        if (!ec) co_await serve(secure, secure.next_layer());
        boost::system::error_code ignored;
        secure.next_layer().close(ignored);
    } else {
        co_await serve(s, s);
        boost::system::error_code ignored;
        s.close(ignored);
    }
    // Counted closed only once the socket is: a test that waits for it may then rely on the
    // gateway's side seeing the end.
    closed();
}

net::awaitable<void> fake_upstream::impl::accept_loop() {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(use_ec);
        if (ec) co_return;
        socket.set_option(tcp::no_delay(true));
        net::co_spawn(acceptor.get_executor(), connection(std::move(socket)), net::detached);
    }
}

fake_upstream::fake_upstream(fake_options options) : impl_(std::make_unique<impl>()) {
    impl_->options = std::move(options);
    auto& o = impl_->options;
    if (!o.cert_file.empty()) {
        impl_->tls.emplace(net::ssl::context::tls_server);
        impl_->tls->use_certificate_chain_file(o.cert_file);
        impl_->tls->use_private_key_file(o.key_file, net::ssl::context::pem);
    }
    tcp::endpoint at(net::ip::make_address(o.host), o.port);
    impl_->acceptor.open(at.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(at);
    impl_->acceptor.listen();
    impl_->port = impl_->acceptor.local_endpoint().port();
    net::co_spawn(impl_->io, impl_->accept_loop(), net::detached);
    for (unsigned i = 0; i < std::max(1u, o.threads); ++i)
        impl_->threads.emplace_back([this] { impl_->io.run(); });
}

fake_upstream::~fake_upstream() {
    stop();
}

void fake_upstream::stop() {
    if (impl_->threads.empty()) return;
    impl_->io.stop();
    for (auto& t : impl_->threads) t.join();
    impl_->threads.clear();
    // A stopped upstream refuses connections, as a process that exited does: with its acceptor
    // open the kernel would still accept them, and a request would wait for its first byte.
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
}

std::uint16_t fake_upstream::port() const {
    return impl_->port;
}

std::string fake_upstream::base_url() const {
    return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port()) +
           "/v1";
}

void fake_upstream::script(std::vector<scripted_reply> replies) {
    std::lock_guard lock(impl_->mutex);
    impl_->scripted = true;
    for (auto& r : replies) impl_->script.push_back(std::move(r));
}

void fake_upstream::fail_model_lists(bool on) {
    std::lock_guard lock(impl_->mutex);
    impl_->lists_fail = on;
}

std::size_t fake_upstream::model_lists_asked() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->lists_asked;
}

void fake_upstream::loop_script() {
    std::lock_guard lock(impl_->mutex);
    impl_->looped.assign(impl_->script.begin(), impl_->script.end());
}

void fake_upstream::script_by_turn(std::vector<scripted_reply> replies) {
    std::lock_guard lock(impl_->mutex);
    impl_->turns = std::move(replies);
}

std::vector<turn_timing> fake_upstream::take_turn_timings() {
    std::lock_guard lock(impl_->mutex);
    return std::exchange(impl_->timings, {});
}

std::size_t fake_upstream::script_left() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->script.size();
}

std::vector<std::string> fake_upstream::scripted_requests() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->scripted_bodies;
}

std::vector<received_request> fake_upstream::requests() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->requests;
}

std::size_t fake_upstream::connections_accepted() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->accepted;
}

std::size_t fake_upstream::connections_open() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->open;
}

std::chrono::steady_clock::time_point fake_upstream::last_close() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->closed_at;
}

bool fake_upstream::wait_connections_open(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->changed.wait_for(lock, timeout, [&] { return impl_->open == n; });
}

bool fake_upstream::wait_requests(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->changed.wait_for(lock, timeout, [&] { return impl_->requests.size() >= n; });
}

}  // namespace gateway::testing
