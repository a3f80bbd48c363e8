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
    // Asked before a request other than GET, HEAD and OPTIONS (which go again freely) goes again
    // on a new connection because a reused one reset before any answer (the upstream may have
    // taken it): true lets it go (the owner counts it as an attempt). Null: it does not go again.
    std::function<bool()> resend;
};

// Appends to `head` the target `up` is sent below its base path for `target`, a path of its
// dialect with its query, asking for `model` (the name it hears; empty for a call that names
// none): `target` itself, or on Azure OpenAI the deployment's or the v1 API's path
// (providers/azure.hpp), on Vertex AI the model's path below the project and location
// (providers/vertex.hpp). Every request head to an upstream is written with it; appended rather
// than returned, so that a plain upstream's target is not copied on every request.
void append_wire_target(std::string& head, const config::upstream_config& up,
                        std::string_view model, std::string_view target);

// The head of a JSON POST the gateway makes itself (the model client's requests, a translated
// chat request): the wire target of `target` and `model` (append_wire_target) below the upstream's
// base path, Accept for an event stream or JSON, then `fields` ("Name: value\r\n" each: the key,
// fields passed along), x-request-id and Content-Length.
std::string json_post_head(const config::upstream_config& up, std::string_view target,
                           std::string_view model, bool stream, std::string_view fields,
                           std::string_view request_id, std::size_t length);

// Sends `head` and `body` on a pooled connection, or a new one, and reads the response header
// into `parser` (emplaced anew for each attempt; the body of a HEAD answer is skipped). A
// pooled connection that resets before any answer may have been closed while idle, or may have
// delivered the request: it goes once more on a new connection when hooks.resend allows (a
// request other than GET, HEAD, OPTIONS is sent only on a pooled connection whose socket was
// asked first, so that this is rare). `fresh_only` never takes a
// pooled connection (upgrades). A 401 to a request that carried its pool's access token drops
// that token (token_source::invalidate). The one way the passthrough and the model client talk
// to an upstream.
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

// How long the next read may wait: `idle`, but never past `until` (a route's deadline while
// nothing is committed; at least a millisecond, so that a read ends rather than waits forever).
config::duration within(config::duration idle,
                        std::optional<std::chrono::steady_clock::time_point> until);
// The failure for a read that `until` cut short, in place of an idle timeout.
failure past_deadline(const failure& f, std::optional<std::chrono::steady_clock::time_point> until);

// Reads into `body` what of a response body `conn` holds already, without waiting: true when
// nothing more is to come (the whole body, or `failed` says why not: more than `limit` bytes is
// upstream_bad_response); false when the rest is to be read (read_body). A small answer comes
// with its head, and is read whole here without a coroutine frame.
bool read_buffered_body(connection& conn, response_parser& parser, std::string& body,
                        std::size_t limit, failure& failed);

// Reads the rest of a response body into `body`: at most `limit` bytes (more is
// upstream_bad_response), with `idle` allowed between two reads, and nothing past `until`.
net::awaitable<failure> read_body(connection& conn, response_parser& parser, std::string& body,
                                  std::size_t limit, config::duration idle,
                                  std::optional<std::chrono::steady_clock::time_point> until = {});

}  // namespace gateway::upstream
