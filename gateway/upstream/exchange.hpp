#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/connection.hpp"
#include "gateway/upstream/pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gateway::upstream {

// A request sent and its response header read: the connection to read the body from, or why
// there is none.
struct started_exchange {
    std::unique_ptr<connection> conn;
    failure failed;
};

// What an exchange needs from its owner besides the request.
struct exchange_hooks {
    // Told the connection in use (null once none is), so the owner can close it to cancel.
    std::function<void(connection*)> in_use;
    // Asked after each step: true abandons the exchange (the owner cancelled it).
    std::function<bool()> abandoned;
    // Request sent -> response head within this (a route's); 0: the upstream's own.
    config::duration first_byte_timeout{0};
};

// The head of a JSON POST the gateway makes itself (the model client's requests, a translated
// chat request): `target` below the upstream's base path, Accept for an event stream or JSON,
// then `fields` ("Name: value\r\n" each: the key, fields passed along), x-request-id and
// Content-Length.
std::string json_post_head(const config::upstream_config& up, std::string_view target, bool stream,
                           std::string_view fields, std::string_view request_id,
                           std::size_t length);

// Sends `head` and `body` on a pooled connection, or a new one, and reads the response header
// into `parser` (emplaced anew for each attempt; the body of a HEAD answer is skipped). A
// pooled connection that the upstream closed while it was idle fails before the upstream saw
// anything: the request then goes once more on a new connection. `fresh_only` never takes a
// pooled connection (upgrades). The one way the passthrough and the model client talk to an
// upstream.
net::awaitable<started_exchange> start_exchange(pool& pool, net::any_io_executor executor,
                                                std::string_view head, std::string_view body,
                                                std::optional<response_parser>& parser,
                                                bool head_request, bool fresh_only,
                                                const exchange_hooks& hooks);

// One piece of a response body, into `buffer`: what was already buffered, or one read with
// `idle` allowed. The bytes read (possibly some with a failure) and the failure, if any.
struct piece {
    std::size_t size = 0;
    failure failed;
};
net::awaitable<piece> read_piece(connection& conn, response_parser& parser,
                                 net::mutable_buffer buffer, config::duration idle);

// Reads the rest of a response body into `body`: at most `limit` bytes (more is
// upstream_bad_response), with `idle` allowed between two reads.
net::awaitable<failure> read_body(connection& conn, response_parser& parser, std::string& body,
                                  std::size_t limit, config::duration idle);

}  // namespace gateway::upstream
