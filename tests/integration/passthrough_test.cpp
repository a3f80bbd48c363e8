// The /v1 passthrough contract, end to end over real sockets: gateway in-process, fake upstream.
#include "gateway/passthrough/client.hpp"
#include "gateway/passthrough/handler.hpp"

#include "gateway/sse/event_parser.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace integration_passthrough_test {

using namespace gateway::testing;
namespace json = boost::json;

namespace {

const std::string chat_body =
    R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]})";
const std::string stream_body =
    R"({"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[]})";

std::string body_of_raw_request(const std::string& raw) {
    return raw.substr(raw.find("\r\n\r\n") + 4);
}

std::string header_block_of_raw_request(const std::string& raw) {
    return raw.substr(0, raw.find("\r\n\r\n") + 2);
}

// An OpenAI listing less the price the gateway adds to each entry (docs/operations.md, "Prices
// in /v1/models"): the upstream's own list, for a gateway with one catch-all upstream.
std::string without_prices(const std::string& listing) {
    auto parsed = json::parse(listing);
    for (auto& m : parsed.at("data").as_array()) m.as_object().erase("contextgate_price");
    return json::serialize(parsed);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(passthrough)

BOOST_AUTO_TEST_CASE(request_body_and_headers_reach_the_upstream_unchanged) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    // Unknown fields, odd whitespace, unicode escapes and raw UTF-8, key order, a number format
    // that re-serialization would change.
    std::string body =
        "{ \"model\" :\"gpt-4o\",\n\t\"unknown_field\": {\"x\": [1, 2.50, 1e3]},"
        " \"text\": \"caf\\u00e9 \xE2\x9C\x93 \\ud83d\\ude00\",\"z\":null }  ";
    client c(gw.port());
    auto r = c.request(make_request(
        "POST", "/v1/chat/completions?api-version=2024-10-21&x=%20y", body,
        "Content-Type: application/json\r\nx-fake-mode: echo\r\nx-request-id: client-id-42\r\n"
        "anthropic-beta: tools-2024-04-04\r\nOpenAI-Beta: assistants=v2\r\nX-Custom-Thing: a\r\n"
        "x-custom-thing: b\r\nConnection: keep-alive, X-Hop\r\nX-Hop: secret\r\n"
        "Keep-Alive: timeout=5\r\nTE: trailers\r\nProxy-Authorization: Basic xyz\r\n"
        "Authorization: Bearer sk-client\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(body_of_raw_request(r.body) == body);  // byte for byte
    auto head = header_block_of_raw_request(r.body);
    BOOST_TEST(
        head.starts_with("POST /v1/chat/completions?api-version=2024-10-21&x=%20y HTTP/1.1\r\n"));
    for (auto kept : {"Content-Type: application/json\r\n", "x-request-id: client-id-42\r\n",
                      "anthropic-beta: tools-2024-04-04\r\n", "OpenAI-Beta: assistants=v2\r\n",
                      "X-Custom-Thing: a\r\n", "x-custom-thing: b\r\n",
                      "Authorization: Bearer sk-client\r\n", "x-fake-mode: echo\r\n"})
        BOOST_TEST(head.find(kept) != std::string::npos, "kept: " << kept);
    for (auto dropped : {"X-Hop", "Keep-Alive", "TE:", "Proxy-Authorization", "gateway.test"})
        BOOST_TEST(head.find(dropped) == std::string::npos, "dropped: " << dropped);
    BOOST_TEST(head.find("Host: 127.0.0.1:" + std::to_string(fake.port()) + "\r\n") !=
               std::string::npos);
    BOOST_TEST(head.find("Content-Length: " + std::to_string(body.size()) + "\r\n") !=
               std::string::npos);
    BOOST_TEST(r.header("x-fake-echo") == "1");
    BOOST_TEST(r.header("x-request-id") == "client-id-42");
}

BOOST_AUTO_TEST_CASE(five_megabyte_body_with_expect_continue_is_forwarded_exactly) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    std::string body = "{\"model\":\"gpt-4o\",\"blob\":\"";
    for (std::size_t i = 0; body.size() < 5 * 1024 * 1024; ++i)
        body += static_cast<char>('a' + i % 26);
    body += "\"}";
    client c(gw.port());
    std::string head =
        "POST /v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1\r\nx-fake-mode: echo\r\n"
        "Expect: 100-continue\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n";
    c.send(head);
    response interim;
    BOOST_TEST_REQUIRE(c.read_header(interim));
    BOOST_TEST(interim.status == 100u);
    c.send(body);
    auto r = c.read_response();
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.complete);
    BOOST_TEST(body_of_raw_request(r.body).size() == body.size());
    BOOST_TEST((body_of_raw_request(r.body) == body));
    BOOST_TEST(r.body.find("Expect") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(chunked_request_body_is_forwarded_with_its_bytes) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nx-fake-mode: echo\r\n"
        "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"mod\r\n9\r\nel\":\"m\"}\n\r\n0\r\n\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(body_of_raw_request(r.body) == "{\"model\":\"m\"}\n");
    BOOST_TEST(r.body.find("Content-Length: 14\r\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(json_response_comes_back_byte_identical_with_upstream_headers) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request(make_request("POST", "/v1/chat/completions", chat_body));
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.reason == "OK");
    BOOST_TEST(r.body == fake_upstream::chat_completion_json("gpt-4o-mini", false));
    BOOST_TEST(r.header("openai-processing-ms") == "1");
    BOOST_TEST(r.header("content-length") == std::to_string(r.body.size()));
    BOOST_TEST(r.header("x-request-id") == "req_fake");  // the upstream's id wins
    BOOST_TEST(r.count("x-request-id") == 1u);
    BOOST_TEST(json::parse(r.body).at("x_fake_unknown_field").at("kept").as_bool());
}

BOOST_AUTO_TEST_CASE(streamed_body_is_byte_identical) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request(make_request("POST", "/v1/chat/completions", stream_body));
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.header("content-type") == "text/event-stream; charset=utf-8");
    BOOST_TEST(r.header("cache-control") == "no-cache");
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
}

BOOST_AUTO_TEST_CASE(http_1_0_client_gets_a_close_delimited_stream) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request("POST /v1/chat/completions HTTP/1.0\r\nContent-Length: " +
                       std::to_string(stream_body.size()) + "\r\n\r\n" + stream_body);
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.header("transfer-encoding").empty());  // HTTP/1.0 has no chunked encoding
    BOOST_TEST(r.header("connection") == "close");
    BOOST_TEST(r.complete);  // ended by the close, as HTTP/1.0 bodies without a length are
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
}

BOOST_AUTO_TEST_CASE(streamed_tool_call_deltas_and_responses_events_are_intact) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto tools = c.request(make_request(
        "POST", "/v1/chat/completions",
        R"({"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"get_weather"}}]})"));
    BOOST_TEST(tools.body == join(fake_upstream::chat_stream_events("m", true, false)));
    auto responses = c.request(
        make_request("POST", "/v1/responses", R"({"model":"m","stream":true,"input":"x"})"));
    BOOST_TEST(responses.body == join(fake_upstream::responses_stream_events("m")));
}

BOOST_AUTO_TEST_CASE(sse_split_at_every_byte_boundary_arrives_intact) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    auto expected = join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true));
    auto events = fake_upstream::chat_stream_events("gpt-4o-mini", false, true);
    for (int size : {1, 2, 3, 5, 7, 13, 64, 1000}) {
        client c(gw.port());
        auto r = c.request(make_request("POST", "/v1/chat/completions", stream_body,
                                        "x-fake-chunk-size: " + std::to_string(size) + "\r\n"));
        BOOST_TEST(r.complete, "chunk size " << size);
        BOOST_TEST(r.body == expected, "chunk size " << size);
        gateway::sse::event_parser parser;
        std::vector<gateway::sse::event> parsed;
        parser.feed(r.body, parsed);
        BOOST_TEST(parsed.size() == events.size());
    }
}

BOOST_AUTO_TEST_CASE(first_event_arrives_before_the_upstream_stall_ends) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto events = fake_upstream::chat_stream_events("gpt-4o-mini", false, true);
    auto sent = clock::now();
    c.send(make_request("POST", "/v1/chat/completions", stream_body,
                        "x-fake-stall-after: 1\r\nx-fake-stall-ms: 2000\r\n"));
    response r;
    BOOST_TEST_REQUIRE(c.read_header(r));
    auto first = c.read_piece(r);
    auto first_at = clock::now() - sent;
    BOOST_TEST_REQUIRE(first.has_value());
    BOOST_TEST(*first == events[0]);  // exactly the first event, not buffered with others
    BOOST_TEST((first_at < 1500ms), "first event after " << first_at.count() / 1'000'000 << " ms");
    while (c.read_piece(r)) {
    }
    BOOST_TEST((clock::now() - sent >= 2000ms));
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body == join(events));
}

namespace {

// Closes the client and returns how long the gateway took to close its upstream connection.
clock::duration hang_up(client& c, fake_upstream& fake) {
    auto closed = clock::now();
    c.close();
    BOOST_TEST_REQUIRE(fake.wait_connections_open(0, 2s));
    return fake.last_close() - closed;
}

}  // namespace

BOOST_AUTO_TEST_CASE(client_disconnect_mid_stream_closes_the_upstream_at_once) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    c.send(make_request("POST", "/v1/chat/completions", stream_body, "x-fake-stall-after: 1\r\n"));
    response r;
    BOOST_TEST_REQUIRE(c.read_header(r));
    BOOST_TEST_REQUIRE(c.read_piece(r).has_value());
    BOOST_TEST_REQUIRE(fake.connections_open() == 1u);
    auto took = hang_up(c, fake);
    BOOST_TEST((took < 100ms), "upstream closed after " << took.count() / 1000 << " us");
}

BOOST_AUTO_TEST_CASE(client_disconnect_while_waiting_for_a_response_closes_the_upstream) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    c.send(make_request("POST", "/v1/chat/completions", chat_body, "x-fake-mode: stall\r\n"));
    BOOST_TEST_REQUIRE(fake.wait_requests(1, 2s));
    auto took = hang_up(c, fake);
    BOOST_TEST((took < 100ms), "upstream closed after " << took.count() / 1000 << " us");
}

// The client's connection is only read once the exchange has run for the watch delay: a client
// that leaves after that is noticed by the read, one that leaves before by the read's start.
BOOST_AUTO_TEST_CASE(client_disconnect_after_the_watch_started_closes_the_upstream) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    c.send(make_request("POST", "/v1/chat/completions", chat_body, "x-fake-mode: stall\r\n"));
    BOOST_TEST_REQUIRE(fake.wait_requests(1, 2s));
    // Nothing to await here: the watch starts when its delay has passed.
    std::this_thread::sleep_for(5 * gateway::passthrough::watch_list::delay);
    BOOST_TEST_REQUIRE(fake.connections_open() == 1u);
    auto took = hang_up(c, fake);
    BOOST_TEST((took < 100ms), "upstream closed after " << took.count() / 1000 << " us");
}

BOOST_AUTO_TEST_CASE(upstream_errors_pass_through_with_their_headers) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto limited = c.request(
        make_request("POST", "/v1/chat/completions", chat_body, "x-fake-status: 429\r\n"));
    BOOST_TEST(limited.status == 429u);
    BOOST_TEST(limited.reason == "Fake");
    BOOST_TEST(limited.header("retry-after") == "7");
    BOOST_TEST(limited.header("x-ratelimit-remaining-requests") == "0");
    BOOST_TEST(limited.header("x-ratelimit-reset-requests") == "7s");
    BOOST_TEST(json::parse(limited.body).at("error").at("code").as_string() == "fake_429");
    auto failed = c.request(
        make_request("POST", "/v1/chat/completions", chat_body, "x-fake-status: 500\r\n"));
    BOOST_TEST(failed.status == 500u);
    BOOST_TEST(json::parse(failed.body).at("error").at("code").as_string() == "fake_500");
}

BOOST_AUTO_TEST_CASE(models_head_and_query_strings) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto models = c.request(make_request("GET", "/v1/models"));
    BOOST_TEST(models.status == 200u);
    BOOST_TEST(without_prices(models.body) == fake_upstream::models_json());
    c.send(make_request("HEAD", "/v1/models"));
    auto head = c.read_response(true);
    BOOST_TEST(head.status == 200u);
    BOOST_TEST(head.header("content-length") ==
               std::to_string(fake_upstream::models_json().size()));
    BOOST_TEST(head.body.empty());
    // The connection is still usable after a HEAD.
    auto again = c.request(make_request("GET", "/v1/models?limit=1"));
    BOOST_TEST(again.status == 200u);
    BOOST_TEST(fake.requests().back().target == "/v1/models?limit=1");
}

BOOST_AUTO_TEST_CASE(base_path_of_the_upstream_is_prefixed) {
    fake_upstream fake;
    auto config = make_config({"http://127.0.0.1:" + std::to_string(fake.port()) + "/api/v1"});
    running_gateway gw(config);
    client c(gw.port());
    c.request(make_request("GET", "/v1/models", {}, "x-fake-mode: echo\r\n"));
    BOOST_TEST(fake.requests().back().target == "/api/v1/models");
}

BOOST_AUTO_TEST_CASE(upstream_down_is_a_502_envelope) {
    auto config = make_config({"http://127.0.0.1:" + std::to_string(unused_port()) + "/v1"});
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(make_request("POST", "/v1/chat/completions", chat_body));
    BOOST_TEST(r.status == 502u);
    auto error = json::parse(r.body).at("error");
    BOOST_TEST(error.at("code").as_string() == "upstream_unreachable");
    BOOST_TEST(std::string(error.at("message").as_string()).find("refused") != std::string::npos);
    BOOST_TEST(r.header("content-type") == "application/json");
    BOOST_TEST(r.header("x-request-id").size() == 32u);
}

BOOST_AUTO_TEST_CASE(upstream_reset_before_answering_is_a_502) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", chat_body, "x-fake-mode: reset\r\n"));
    BOOST_TEST(r.status == 502u);
    BOOST_TEST(json::parse(r.body).at("error").at("code").as_string() ==
               "upstream_connection_closed");
}

BOOST_AUTO_TEST_CASE(slow_first_byte_is_a_504) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.upstreams[0].first_byte_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    auto sent = clock::now();
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", chat_body, "x-fake-delay-ms: 3000\r\n"));
    BOOST_TEST(r.status == 504u);
    BOOST_TEST(json::parse(r.body).at("error").at("code").as_string() == "upstream_timeout");
    BOOST_TEST((clock::now() - sent < 2000ms));
}

// The client's read deadlines bound the reads: an answer slower than the header, body and
// keep-alive timeouts is waited for under the upstream's own timeouts. It used to be cut when the
// header timeout (30 s by default) passed after the request's last read: the connection closed
// with nothing sent.
BOOST_AUTO_TEST_CASE(an_answer_slower_than_the_client_read_timeouts_arrives) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.header_timeout = 300ms;
    config.server.body_timeout = 300ms;
    config.server.keep_alive_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    for (int i = 0; i < 2; ++i) {  // the first request on a connection, and a kept-alive one
        auto r = c.request(
            make_request("POST", "/v1/chat/completions", chat_body, "x-fake-delay-ms: 900\r\n"));
        BOOST_TEST_REQUIRE(r.status == 200u);
        BOOST_TEST(r.complete);
        BOOST_TEST(r.body == fake_upstream::chat_completion_json("gpt-4o-mini", false));
    }
}

// Likewise a write's deadline bounds the write: a stream whose upstream is silent for longer than
// write_timeout after an event (no heartbeats configured) goes on to its end.
BOOST_AUTO_TEST_CASE(a_stream_silent_for_longer_than_the_write_timeout_goes_on) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.write_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(make_request("POST", "/v1/chat/completions", stream_body,
                                    "x-fake-stall-after: 2\r\nx-fake-stall-ms: 900\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
}

BOOST_AUTO_TEST_CASE(connect_timeout_is_a_504) {
    // A listener that never accepts, with its backlog full: further SYNs go unanswered.
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor full(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    full.listen(0);
    std::vector<int> fillers;  // raw non-blocking connects: they must not wait for an accept
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(full.local_endpoint().port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 4; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        [[maybe_unused]] int rc =
            ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        fillers.push_back(fd);
    }
    struct closer {
        std::vector<int>& fds;
        ~closer() {
            for (int fd : fds) ::close(fd);
        }
    } close_fillers{fillers};
    auto config =
        make_config({"http://127.0.0.1:" + std::to_string(full.local_endpoint().port()) + "/v1"});
    config.upstreams[0].connect_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(make_request("GET", "/v1/models"));
    BOOST_TEST(r.status == 504u);
    BOOST_TEST(json::parse(r.body).at("error").at("code").as_string() ==
               "upstream_connect_timeout");
}

BOOST_AUTO_TEST_CASE(upstream_reset_mid_sse_ends_with_an_error_event) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto events = fake_upstream::chat_stream_events("gpt-4o-mini", false, true);
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", stream_body, "x-fake-reset-after: 3\r\n"));
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.complete);  // properly terminated: last chunk received
    std::string prefix = events[0] + events[1] + events[2];
    BOOST_TEST_REQUIRE(r.body.starts_with(prefix));
    gateway::sse::event_parser parser;
    std::vector<gateway::sse::event> parsed;
    parser.feed(r.body.substr(prefix.size()), parsed);
    BOOST_TEST_REQUIRE(parsed.size() == 1u);
    BOOST_TEST(parsed[0].type == "error");
    auto error = json::parse(parsed[0].data).at("error");
    BOOST_TEST(error.at("code").as_string() == "upstream_connection_closed");
    BOOST_TEST(error.at("type").as_string() == "upstream_error");
    // The client connection stays usable after a properly terminated stream.
    auto next = c.request(make_request("GET", "/v1/models"));
    BOOST_TEST(next.status == 200u);
}

BOOST_AUTO_TEST_CASE(upstream_stalling_mid_sse_ends_with_an_idle_timeout_event) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.upstreams[0].idle_timeout = 300ms;
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", stream_body, "x-fake-stall-after: 2\r\n"));
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body.find("event: error\ndata: {\"error\"") != std::string::npos);
    BOOST_TEST(r.body.find("upstream_idle_timeout") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(upstream_reset_mid_other_body_closes_the_client_connection) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", stream_body,
                     "x-fake-reset-after: 3\r\nx-fake-content-type: application/x-ndjson\r\n"));
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(!r.complete);  // the truncation is visible: no last chunk
    BOOST_TEST(r.body.find("event: error") == std::string::npos);
    BOOST_TEST(c.closed_by_peer());
}

BOOST_AUTO_TEST_CASE(auth_forward_and_replace) {
    fake_upstream fake;
    auto config = make_config({fake.base_url(), fake.base_url()});
    config.upstreams[0].models = {"forward-*"};
    config.upstreams[0].api_key = "sk-gateway-fallback";
    config.upstreams[1].models = {"replace-*"};
    config.upstreams[1].auth = gateway::config::auth_mode::replace;
    config.upstreams[1].api_key = "sk-gateway-secret";
    running_gateway gw(config);
    client c(gw.port());
    auto auth_seen = [&](std::string_view model, std::string_view header) {
        c.request(make_request("POST", "/v1/chat/completions",
                               "{\"model\":\"" + std::string(model) + "\"}", header));
        return fake.requests().back().header("authorization");
    };
    BOOST_TEST(auth_seen("forward-1", "Authorization: Bearer sk-client\r\n") == "Bearer sk-client");
    BOOST_TEST(auth_seen("forward-1", "") == "Bearer sk-gateway-fallback");
    BOOST_TEST(auth_seen("replace-1", "Authorization: Bearer sk-client\r\n") ==
               "Bearer sk-gateway-secret");
    auto last = fake.requests().back();
    std::size_t authorizations = 0;
    for (const auto& h : last.headers)
        authorizations += boost::beast::iequals(h.first, "authorization");
    BOOST_TEST(authorizations == 1u);
}

BOOST_AUTO_TEST_CASE(model_globs_route_to_upstreams) {
    fake_upstream first;
    fake_upstream second;
    auto config = make_config({first.base_url(), second.base_url()});
    config.upstreams[0].models = {"gpt-*"};
    config.upstreams[1].models = {"claude-*", "llama-?"};
    running_gateway gw(config);
    client c(gw.port());
    c.request(make_request("POST", "/v1/chat/completions", R"({"model":"claude-3-opus"})"));
    c.request(make_request("POST", "/v1/chat/completions", R"({"model":"llama-3"})"));
    c.request(make_request("POST", "/v1/chat/completions", R"({"model":"gpt-4o"})"));
    // No glob takes it, and no upstream takes every model: nothing is sent (docs/routing.md).
    auto unknown =
        c.request(make_request("POST", "/v1/chat/completions", R"({"model":"unknown"})"));
    BOOST_TEST(unknown.status == 404u);
    c.request(make_request("GET", "/v1/models"));  // asks both
    BOOST_TEST(first.requests().size() == 2u);
    BOOST_TEST(second.requests().size() == 3u);
}

BOOST_AUTO_TEST_CASE(upstream_connections_are_pooled_and_stale_ones_replaced) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.workers = 1;
    running_gateway gw(config);
    client c(gw.port());
    for (int i = 0; i < 5; ++i)
        BOOST_TEST(c.request(make_request("POST", "/v1/chat/completions", chat_body)).status ==
                   200u);
    BOOST_TEST(fake.connections_accepted() == 1u);
    // The upstream closes its side after this answer, while the connection is idle in the pool;
    // the next request must not fail: the pool asks the socket before it sends a POST on it, and
    // takes a new connection.
    BOOST_TEST(c.request(make_request("POST", "/v1/chat/completions", chat_body,
                                      "x-fake-close-after: 1\r\n"))
                   .status == 200u);
    BOOST_TEST_REQUIRE(fake.wait_connections_open(0, 2s));
    BOOST_TEST(c.request(make_request("POST", "/v1/chat/completions", chat_body)).status == 200u);
    BOOST_TEST(fake.connections_accepted() == 2u);
}

BOOST_AUTO_TEST_CASE(pipelined_requests_are_answered_in_order) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    c.send(make_request("GET", "/v1/models?n=1") +
           make_request("POST", "/v1/chat/completions", chat_body) +
           make_request("GET", "/healthz"));
    auto first = c.read_response();
    auto second = c.read_response();
    auto third = c.read_response();
    BOOST_TEST(without_prices(first.body) == fake_upstream::models_json());
    BOOST_TEST(second.body == fake_upstream::chat_completion_json("gpt-4o-mini", false));
    BOOST_TEST(third.body == R"({"status":"ok"})");
}

BOOST_AUTO_TEST_CASE(websocket_upgrade_is_tunnelled) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());
    c.send(
        "GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: "
        "websocket\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        "Authorization: Bearer sk-client\r\n\r\n");
    response r;
    BOOST_TEST_REQUIRE(c.read_header(r));
    BOOST_TEST(r.status == 101u);
    BOOST_TEST(r.header("upgrade") == "websocket");
    BOOST_TEST(r.header("sec-websocket-accept") == "fake-accept");
    auto seen = fake.requests().back();
    BOOST_TEST(seen.header("upgrade") == "websocket");
    BOOST_TEST(seen.header("sec-websocket-key") == "dGhlIHNhbXBsZSBub25jZQ==");
    // Bytes flow both ways untouched (the fake echoes them).
    std::string frame("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11);
    c.send(frame);
    auto echoed = c.read_exactly(frame.size());
    BOOST_TEST(echoed == frame);
}

BOOST_AUTO_TEST_CASE(websocket_refused_at_once_when_tunnelling_is_off) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.websocket_tunnel = false;
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(
        "GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: "
        "websocket\r\n\r\n");
    BOOST_TEST(r.status == 501u);
    BOOST_TEST(json::parse(r.body).at("error").at("code").as_string() == "websocket_not_supported");
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sse_heartbeat)

namespace {

std::string without_heartbeats(std::string body, std::size_t& count) {
    static const std::string comment = ": keep-alive\n\n";
    count = 0;
    for (auto at = body.find(comment); at != std::string::npos; at = body.find(comment, at)) {
        // Only ever between events: right after a blank line (or at the very start).
        BOOST_TEST((at == 0 || body.compare(at - 2, 2, "\n\n") == 0), "heartbeat at " << at);
        body.erase(at, comment.size());
        ++count;
    }
    return body;
}

// A streamed chat completion through a gateway with a 100 ms heartbeat; `fake_headers` shape
// the upstream's stream.
response stream_with_heartbeat(std::string_view fake_headers) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.sse_heartbeat = std::chrono::milliseconds(100);
    running_gateway gw(config);
    client c(gw.port());
    return c.request(make_request("POST", "/v1/chat/completions", stream_body, fake_headers));
}

}  // namespace

BOOST_AUTO_TEST_CASE(comments_are_sent_between_events_while_the_upstream_is_silent) {
    auto r = stream_with_heartbeat("x-fake-stall-after: 2\r\nx-fake-stall-ms: 650\r\n");
    BOOST_TEST(r.complete);
    std::size_t count = 0;
    BOOST_TEST(without_heartbeats(r.body, count) ==
               join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
    BOOST_TEST(count >= 3u);
    BOOST_TEST(count <= 7u);
}

BOOST_AUTO_TEST_CASE(no_comment_is_inserted_in_the_middle_of_an_event) {
    // The first write is 50 bytes, mid-event; then the upstream is silent for 500 ms.
    auto r = stream_with_heartbeat(
        "x-fake-chunk-size: 50\r\nx-fake-stall-after: 1\r\nx-fake-stall-ms: 500\r\n");
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
}

BOOST_AUTO_TEST_CASE(non_sse_bodies_get_no_comments) {
    auto r = stream_with_heartbeat(
        "x-fake-content-type: application/x-ndjson\r\nx-fake-stall-after: 2\r\nx-fake-stall-ms: "
        "400\r\n");
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, true)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(upstream_host_names)

// A host name is looked up once per worker for a storm of new connections (the resolver runs one
// getaddrinfo at a time: once per connection, a storm to api.openai.com would queue on it).
BOOST_AUTO_TEST_CASE(a_host_name_upstream_is_resolved_once_per_worker_for_a_storm) {
    fake_upstream fake;
    auto c = make_config({"http://localhost:" + std::to_string(fake.port()) + "/v1"});
    c.upstreams[0].name = "by-name";
    running_gateway gw(c);
    // 20 requests at once, each held 300 ms by the fake: 20 new upstream connections.
    constexpr int storm = 20;
    std::atomic<int> ok{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < storm; ++i)
        clients.emplace_back([&] {
            client cl(gw.port());
            auto r = cl.request(
                make_request("POST", "/v1/chat/completions", R"({"model":"m","messages":[]})",
                             "Content-Type: application/json\r\nx-fake-delay-ms: 300\r\n"));
            if (r.status == 200) ++ok;
        });
    for (auto& t : clients) t.join();
    BOOST_TEST(ok.load() == storm);
    BOOST_TEST(fake.connections_accepted() >= 2u);
    client scrape(gw.port());
    auto metrics = scrape.request(make_request("GET", "/metrics")).body;
    const std::string series = "contextgate_upstream_resolutions_total{upstream=\"by-name\"} ";
    auto at = metrics.find(series);
    BOOST_TEST_REQUIRE(at != std::string::npos);
    auto lookups = std::stod(metrics.substr(at + series.size()));
    BOOST_TEST(lookups >= 1);
    BOOST_TEST(lookups <= 2);  // one per worker (make_config: two)
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_passthrough_test
