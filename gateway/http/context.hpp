#pragma once

#include "gateway/config/config.hpp"
#include "gateway/io/deadline.hpp"
#include "gateway/observability/trace.hpp"
#include "gateway/principal.hpp"
#include "gateway/request_cost.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gateway::http {

namespace net = boost::asio;
namespace beast = boost::beast;

using request = beast::http::request<beast::http::string_body>;

// Everything a handler needs for one request. The handler writes the whole response itself
// (a streamed response is written piece by piece) and clears `keep_alive` when the connection
// must close afterwards. Lives on the session's coroutine frame; never shared across threads.
struct request_context {
    // The client connection, read and written directly (a beast::tcp_stream would add a layer
    // of composed operation to each read and write for timeouts `deadline` already gives).
    net::ip::tcp::socket& stream;
    io::deadline& deadline;      // arm() before every client read or write
    beast::flat_buffer& buffer;  // client bytes read past this request (pipelining)
    request& req;
    std::string request_id;  // the client's x-request-id, or a generated one
    const config::server_config& server;
    const bool& draining;  // the worker is shutting down: finish, then close
    bool keep_alive = true;
    bool response_started = false;         // set once the status line went out
    unsigned status = 0;                   // for the access log
    std::size_t bytes_sent = 0;            // body bytes, for the access log
    std::string upstream;                  // upstream name, for the access log
    int attempts = 0;                      // a routed request's attempts, for the access log
    std::string_view cache;                // the response cache: hit | miss | skip ("": unused)
    std::vector<std::string> path_params;  // the route's `{…}` segments, in order
    // Who is asking, as the router's identification found it before the guards (nullopt:
    // nobody, or a path whose face does not ask).
    std::optional<auth::principal> principal;
    // For the access log and metrics: when the status line went out, the model asked for, the
    // virtual key that authenticated the request and the tokens the answer reported (-1: none).
    std::chrono::steady_clock::time_point first_byte{};
    std::string model;
    std::string key_id;
    std::int64_t input_tokens = -1;
    std::int64_t output_tokens = -1;
    // What the answer cost, once settlement priced it (a model request answered 2xx): for the
    // access log, and the ledger and budgets to take. nullopt: nothing was priced.
    std::optional<request_cost> cost;
    // The router's pattern that took it ("/context/chats/{id}", "/v1"), or the handler's more
    // precise one ("/v1/chat/completions"): a static string, for the SERVER span's name.
    std::string_view route;
    // The request's SERVER span (not recording unless traced): the parent of what it causes.
    observability::span trace;

    // Called as the status line is written.
    void started() {
        response_started = true;
        first_byte = std::chrono::steady_clock::now();
    }
};

using handler = std::function<net::awaitable<void>(request_context&)>;

}  // namespace gateway::http
