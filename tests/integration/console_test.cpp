// The web console as the gateway serves it: the embedded files, their caching and security
// headers, conditional and compressed answers, and the switch that turns it off.
#include "gateway/console/assets.hpp"

#include "gateway/observability/metrics.hpp"
#include "tests/integration/harness.hpp"

#include <boost/asio/write.hpp>

#include <boost/test/unit_test.hpp>

#include <sys/socket.h>

namespace integration_console_test {

using namespace gateway::testing;

BOOST_AUTO_TEST_SUITE(console)

BOOST_AUTO_TEST_CASE(index_and_hashed_assets_with_their_caching_and_policy) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    client c(gw.port());

    auto redirect = c.request(make_request("GET", "/console"));
    BOOST_TEST(redirect.status == 308u);
    BOOST_TEST(redirect.header("location") == "/console/");

    auto index = c.request(make_request("GET", "/console/"));
    BOOST_TEST(index.status == 200u);
    BOOST_TEST(index.header("content-type") == "text/html; charset=utf-8");
    BOOST_TEST(index.header("cache-control") == "no-cache");
    BOOST_TEST(index.header("content-security-policy").starts_with("default-src 'self';"));
    BOOST_TEST(index.header("content-security-policy").find("unsafe") == std::string::npos);
    BOOST_TEST(index.header("x-content-type-options") == "nosniff");
    BOOST_TEST(index.header("x-frame-options") == "DENY");
    BOOST_TEST(index.body.find("<div id=\"app\">") != std::string::npos);

    // Every asset index.html names is served, immutable, under its content hash.
    int assets = 0;
    for (const auto& file : gateway::console::embedded_assets()) {
        if (!file.immutable) continue;
        ++assets;
        BOOST_TEST(index.body.find("/console/" + std::string(file.name)) != std::string::npos);
        auto r = c.request(make_request("GET", "/console/" + std::string(file.name)));
        BOOST_TEST(r.status == 200u);
        BOOST_TEST(r.header("cache-control") == "public, max-age=31536000, immutable");
        BOOST_TEST(r.body == file.body);
    }
    BOOST_TEST(assets >= 2);  // the script and the stylesheet

    // Revalidation: the ETag gives a 304 without a body.
    auto etag = index.header("etag");
    BOOST_TEST(!etag.empty());
    c.send(make_request("GET", "/console/", {}, "If-None-Match: W/" + etag + "\r\n"));
    auto same = c.read_response(true);
    BOOST_TEST(same.status == 304u);
    BOOST_TEST(same.header("content-length").empty());
    BOOST_TEST(same.header("etag") == etag);
    auto other = c.request(make_request("GET", "/console/", {}, "If-None-Match: \"old\"\r\n"));
    BOOST_TEST(other.status == 200u);

    // gzip only to clients that take it.
    auto zipped = c.request(make_request("GET", "/console/", {}, "Accept-Encoding: br, gzip\r\n"));
    BOOST_TEST(zipped.header("content-encoding") == "gzip");
    BOOST_TEST(zipped.header("vary") == "Accept-Encoding");
    BOOST_TEST(zipped.body.substr(0, 2) == std::string("\x1f\x8b"));
    auto refused =
        c.request(make_request("GET", "/console/", {}, "Accept-Encoding: gzip;q=0, *\r\n"));
    BOOST_TEST(refused.header("content-encoding").empty());
    BOOST_TEST(refused.body == index.body);

    // HEAD: the headers alone.
    c.send(make_request("HEAD", "/console/"));
    auto head = c.read_response(true);
    BOOST_TEST(head.status == 200u);
    BOOST_TEST(head.header("content-length") == std::to_string(index.body.size()));

    BOOST_TEST(c.request(make_request("GET", "/console/assets/nothing.js")).status == 404u);
    BOOST_TEST(c.request(make_request("POST", "/console/", "{}")).status == 405u);
    // A dot segment is refused with the request head, before any route.
    client other_client(gw.port());
    BOOST_TEST(other_client.request(make_request("GET", "/console/../etc/passwd")).status == 400u);
    BOOST_TEST(fake.requests().empty());
}

// The Request log page's feed (/admin/log): a follower that stops reading is dropped once its
// queue of lines passes its bound, and the stream ends with an event that says why.
BOOST_AUTO_TEST_CASE(a_request_log_follower_that_stops_reading_is_dropped_with_a_last_event) {
    namespace net = boost::asio;
    fake_upstream fake;
    auto config = make_config(fake);
    config.admin.api_key = "admin-key-0123456789abcdef";
    running_gateway gw(config);
    auto& dropped = gateway::observability::metrics().log_followers_dropped.with();
    auto dropped_before = dropped.value();

    // The follower: a small receive buffer, every read bounded, and nothing read after the head.
    net::io_context io;
    net::ip::tcp::socket follower(io);
    follower.open(net::ip::tcp::v4());
    follower.set_option(net::socket_base::receive_buffer_size(4096));
    timeval tv{5, 0};
    ::setsockopt(follower.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    follower.connect({net::ip::address_v4::loopback(), gw.port()});
    net::write(follower,
               net::buffer(make_request("GET", "/admin/log", {},
                                        "Authorization: Bearer " + config.admin.api_key + "\r\n")));
    std::string received;
    auto read_some = [&] {
        char chunk[4096];
        boost::system::error_code ec;
        auto n = follower.read_some(net::buffer(chunk), ec);
        received.append(chunk, n);
        return !ec && n > 0;
    };
    while (received.find("\r\n\r\n") == std::string::npos && read_some()) {
    }
    BOOST_TEST_REQUIRE(received.starts_with("HTTP/1.1 200"), received);

    // Requests with long paths make long lines, until the gateway lets the follower go.
    client c(gw.port());
    auto path = "/nothing/" + std::string(16 * 1024, 'x');
    for (int i = 0; i < 4000 && dropped.value() == dropped_before; ++i)
        BOOST_TEST_REQUIRE(c.request(make_request("GET", path)).status == 404u);
    BOOST_TEST_REQUIRE(dropped.value() - dropped_before == 1.0);

    // Read now, the stream holds what was written before the drop, then ends with why.
    while (read_some()) {
    }
    auto last = received.rfind("event: ");
    BOOST_TEST_REQUIRE(last != std::string::npos);
    BOOST_TEST(
        received.substr(last).starts_with("event: dropped\ndata: {\"reason\":\"slow_reader\""),
        received.substr(last, 200));
    BOOST_TEST(received.ends_with("0\r\n\r\n"));  // the last chunk: the stream ended
}

BOOST_AUTO_TEST_CASE(switched_off_it_is_not_served) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.server.console = false;
    running_gateway gw(config);
    client c(gw.port());
    BOOST_TEST(c.request(make_request("GET", "/console/")).status == 404u);
    BOOST_TEST(c.request(make_request("GET", "/console")).status == 404u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_console_test
