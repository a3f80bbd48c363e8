#include "gateway/passthrough/headers.hpp"

#include <boost/test/unit_test.hpp>

namespace http = boost::beast::http;
using gateway::passthrough::for_each_end_to_end;
using gateway::passthrough::is_hop_by_hop;

BOOST_AUTO_TEST_SUITE(header_filtering)

BOOST_AUTO_TEST_CASE(hop_by_hop_names) {
    for (auto name : {"Connection", "keep-alive", "TE", "Trailer", "Transfer-Encoding", "Upgrade",
                      "Proxy-Authorization", "proxy-connection"})
        BOOST_TEST(is_hop_by_hop(name), name);
    for (auto name :
         {"Authorization", "Content-Type", "x-request-id", "anthropic-beta", "openai-organization",
          "retry-after", "x-ratelimit-remaining-tokens", "Trailers"})
        BOOST_TEST(!is_hop_by_hop(name), name);
}

BOOST_AUTO_TEST_CASE(end_to_end_fields_are_copied_in_order_with_their_spelling) {
    http::fields from;
    from.insert("Connection", "keep-alive, X-Drop-Me");
    from.insert("Keep-Alive", "timeout=5");
    from.insert("Host", "client.example");
    from.insert("Content-Length", "12");
    from.insert("Transfer-Encoding", "chunked");
    from.insert("X-Drop-Me", "named by Connection");
    from.insert("anthropic-beta", "tools-2024");
    from.insert("X-Custom-Thing", "1");
    from.insert("x-custom-thing", "2");
    from.insert("Retry-After", "7");
    from.insert("OpenAI-Organization", "org-1");
    std::vector<std::string> got;
    for_each_end_to_end(from, [&](http::field, std::string_view name, std::string_view value) {
        got.push_back(std::string(name) + ": " + std::string(value));
    });
    std::vector<std::string> expected{"anthropic-beta: tools-2024", "X-Custom-Thing: 1",
                                      "x-custom-thing: 2", "Retry-After: 7",
                                      "OpenAI-Organization: org-1"};
    BOOST_TEST(got == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
