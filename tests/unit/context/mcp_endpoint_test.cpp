#include "gateway/context/mcp_endpoint.hpp"

#include <boost/test/unit_test.hpp>

using gateway::context::mcp_endpoint;

BOOST_AUTO_TEST_SUITE(mcp_endpoint_hosts)

BOOST_AUTO_TEST_CASE(loopback_names_are_always_allowed_with_any_port) {
    const std::vector<std::string> none;
    for (const auto* host :
         {"localhost", "localhost:8080", "127.0.0.1:1", "[::1]:8080", "[::1]", "LOCALHOST:80"})
        BOOST_TEST(mcp_endpoint::allowed_host(host, none), host);
    for (const auto* host : {"evil.example.com", "evil.example.com:8080", "127.0.0.2", "",
                             "localhost.evil.com", "[::2]:80", "[::1"})
        BOOST_TEST(!mcp_endpoint::allowed_host(host, none), host);
}

BOOST_AUTO_TEST_CASE(configured_names_and_the_wildcard) {
    const std::vector<std::string> names{"gateway.example.com", "10.0.0.5"};
    BOOST_TEST(mcp_endpoint::allowed_host("gateway.example.com:443", names));
    BOOST_TEST(mcp_endpoint::allowed_host("Gateway.Example.COM", names));
    BOOST_TEST(mcp_endpoint::allowed_host("10.0.0.5:8080", names));
    BOOST_TEST(!mcp_endpoint::allowed_host("example.com", names));
    BOOST_TEST(mcp_endpoint::allowed_host("anything.at.all:1", {"*"}));
}

BOOST_AUTO_TEST_CASE(origins_are_judged_by_their_host) {
    const std::vector<std::string> names{"gateway.example.com"};
    BOOST_TEST(mcp_endpoint::allowed_origin("http://localhost:3000", names));
    BOOST_TEST(mcp_endpoint::allowed_origin("https://gateway.example.com", names));
    BOOST_TEST(mcp_endpoint::allowed_origin("https://gateway.example.com/path", names));
    BOOST_TEST(!mcp_endpoint::allowed_origin("http://evil.example.com", names));
    BOOST_TEST(!mcp_endpoint::allowed_origin("null", names));
    BOOST_TEST(!mcp_endpoint::allowed_origin("gateway.example.com", names));
}

BOOST_AUTO_TEST_SUITE_END()
