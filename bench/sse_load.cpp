// sse_load: opens N concurrent streamed chat completions against host:port and reports the time
// to first body byte and the arrival time of every event, measured from each request's send.
// Events are found by their blank-line terminator, so the same numbers come out whether the body
// arrives chunked through a proxy or straight from the upstream.
//
//   sse_load PORT STREAMS [DELAY_MS]   -> one line: ttfb_p50_us ttfb_p99_us event_p50_us
//   event_p99_us ok
//   sse_load PORT STREAMS DELAY_MS MODEL -> the same for that model, then token_p50_us
//   token_p99_us: the arrival of the first chunk with non-empty `content` (time to first token)
//   sse_load PORT STREAMS DELAY_MS MODEL API -> the same in another client API: `chat` (the
//   default), `messages` (Anthropic's /v1/messages: text in text_delta, ends at message_stop) or
//   `responses` (/v1/responses: text in output_text.delta, ends at response.completed) or
//   `gemini` (/v1beta/models/MODEL:streamGenerateContent?alt=sse: ends at its finishReason)
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

struct result {
    bool ok = false;
    long ttfb_us = 0;
    long token_us = 0;           // the first chunk with text
    std::vector<long> event_us;  // arrival of each event's terminator, since the send
};

// What a client API's stream looks like to this tool.
struct api_shape {
    std::string path;
    std::string body_tail;       // after the model
    std::string_view token_key;  // text follows it (non-empty: the first token)
    std::string_view done;       // the stream's last event holds it
};

api_shape shape_of(std::string_view api) {
    if (api == "messages")
        return {"/v1/messages",
                R"(,"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
                "\"text_delta\",\"text\":\"", "message_stop"};
    if (api == "gemini")  // the model goes in the path (see main)
        return {"/v1beta/models/{model}:streamGenerateContent?alt=sse",
                R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})", "\"text\":\"",
                "finishReason"};
    if (api == "responses")
        return {"/v1/responses", R"(,"stream":true,"input":"hi"})",
                "\"response.output_text.delta\"", "response.completed"};
    return {"/v1/chat/completions",
            R"(,"stream":true,"messages":[{"role":"user","content":"hi"}]})", "\"content\":\"",
            "data: [DONE]\n\n"};
}

net::awaitable<void> one_stream(tcp::endpoint at, std::string request, const api_shape& api,
                                result& out) {
    auto executor = co_await net::this_coro::executor;
    tcp::socket socket(executor);
    auto [connect_ec] = co_await socket.async_connect(at, use_ec);
    if (connect_ec) co_return;
    socket.set_option(tcp::no_delay(true));
    auto sent = clock_type::now();
    auto [write_ec, written] = co_await net::async_write(socket, net::buffer(request), use_ec);
    if (write_ec) co_return;
    std::string seen;  // only the tail is kept: enough to spot terminators across reads
    bool in_body = false;
    char buffer[16384];
    for (;;) {
        auto [ec, n] = co_await socket.async_read_some(net::buffer(buffer), use_ec);
        if (ec) break;
        auto now =
            std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - sent).count();
        std::size_t from = seen.size();
        seen.append(buffer, n);
        if (!in_body) {
            auto end = seen.find("\r\n\r\n");
            if (end == std::string::npos) continue;
            in_body = true;
            seen.erase(0, end + 4);
            from = 0;
            if (seen.empty()) continue;
        }
        if (out.ttfb_us == 0) out.ttfb_us = now;
        if (out.token_us == 0) {
            auto key = api.token_key;
            for (auto at = seen.find(key); at != std::string::npos; at = seen.find(key, at + 1))
                if (at + key.size() < seen.size() && seen[at + key.size()] != '"') {
                    out.token_us = now;
                    break;
                }
        }
        // A terminator may straddle two reads: start one byte before the new bytes.
        for (auto at = seen.find("\n\n", from ? from - 1 : 0); at != std::string::npos;
             at = seen.find("\n\n", at + 2))
            out.event_us.push_back(now);
        if (seen.find(api.done) != std::string::npos) {
            out.ok = true;
            co_return;
        }
        if (seen.size() > 256) seen.erase(0, seen.size() - 256);
    }
}

long percentile(std::vector<long> v, double p) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: sse_load PORT STREAMS [DELAY_MS]\n");
        return 2;
    }
    auto port = static_cast<unsigned short>(std::stoi(argv[1]));
    int streams = std::stoi(argv[2]);
    std::string delay = argc > 3 ? argv[3] : "50";
    std::string model = argc > 4 ? argv[4] : "gpt-4o-mini";
    auto api = shape_of(argc > 5 ? argv[5] : "chat");
    std::string body = R"({"model":")" + model + "\"" + api.body_tail;
    if (auto at = api.path.find("{model}"); at != std::string::npos) {
        api.path.replace(at, 7, model);
        body = api.body_tail;
    }
    std::string request =
        "POST " + api.path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nanthropic-version: 2023-06-01\r\n"
        "Content-Type: application/json\r\nx-fake-delay-ms: " +
        delay + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    net::io_context io(1);
    tcp::endpoint at(net::ip::make_address("127.0.0.1"), port);
    std::vector<result> results(streams);
    for (int i = 0; i < streams; ++i)
        net::co_spawn(io, one_stream(at, request, api, results[i]), net::detached);
    io.run();
    std::vector<long> ttfb, events, tokens;
    int ok = 0;
    for (const auto& r : results) {
        if (!r.ok) continue;
        ++ok;
        ttfb.push_back(r.ttfb_us);
        tokens.push_back(r.token_us);
        events.insert(events.end(), r.event_us.begin(), r.event_us.end());
    }
    std::printf("%ld %ld %ld %ld %d", percentile(ttfb, 0.5), percentile(ttfb, 0.99),
                percentile(events, 0.5), percentile(events, 0.99), ok);
    if (argc > 4) std::printf(" %ld %ld", percentile(tokens, 0.5), percentile(tokens, 0.99));
    std::printf("\n");
    return ok == streams ? 0 : 1;
}
