#include "gateway/upstream/connection.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace upstream_connection_test {

using namespace gateway::upstream;
using gateway::config::upstream_endpoint;

BOOST_AUTO_TEST_SUITE(upstream_connection_suite)

// The Host field an upstream hears: its host, bracketed when it is an IPv6 address, and its port
// unless it is the scheme's own; appended after what the head already holds.
BOOST_AUTO_TEST_CASE(the_host_field_names_the_port_only_when_it_is_not_the_schemes) {
    auto endpoint = [](bool tls, std::string host, std::uint16_t port) {
        upstream_endpoint e;
        e.tls = tls;
        e.host = std::move(host);
        e.port = port;
        return e;
    };
    BOOST_TEST(host_header(endpoint(true, "api.openai.com", 443)) == "api.openai.com");
    BOOST_TEST(host_header(endpoint(false, "localhost", 80)) == "localhost");
    BOOST_TEST(host_header(endpoint(false, "127.0.0.1", 8080)) == "127.0.0.1:8080");
    BOOST_TEST(host_header(endpoint(true, "127.0.0.1", 80)) == "127.0.0.1:80");
    BOOST_TEST(host_header(endpoint(false, "::1", 443)) == "[::1]:443");
    BOOST_TEST(host_header(endpoint(true, "2001:db8::1", 443)) == "[2001:db8::1]");
    BOOST_TEST(host_header(endpoint(false, "h", 65535)) == "h:65535");
    std::string head = "Host: ";
    append_host_header(head, endpoint(false, "example.com", 9000));
    BOOST_TEST(head == "Host: example.com:9000");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_connection_test
