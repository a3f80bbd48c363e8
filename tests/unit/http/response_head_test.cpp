#include "gateway/http/response.hpp"

#include <boost/test/unit_test.hpp>

namespace http_response_head_test {

using gateway::http::response_head;

BOOST_AUTO_TEST_SUITE(response_heads)

BOOST_AUTO_TEST_CASE(a_head_has_its_status_fields_request_id_framing_and_connection) {
    response_head h(200);
    h.field("Content-Type", "application/json");
    BOOST_TEST(h.finish("abc", "Content-Length: 2", "") ==
               "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-request-id: abc\r\n"
               "Content-Length: 2\r\n\r\n");
    response_head closing(409);
    BOOST_TEST(closing.finish("id", "Content-Length: 0", "close") ==
               "HTTP/1.1 409 Conflict\r\nx-request-id: id\r\nContent-Length: 0\r\n"
               "Connection: close\r\n\r\n");
}

BOOST_AUTO_TEST_CASE(an_upstreams_reason_and_request_id_are_kept) {
    response_head h(299, "Custom Reason");
    h.field("X-Request-Id", "upstream-id");
    BOOST_TEST(h.finish("ours", "Transfer-Encoding: chunked", "") ==
               "HTTP/1.1 299 Custom Reason\r\nX-Request-Id: upstream-id\r\n"
               "Transfer-Encoding: chunked\r\n\r\n");
    response_head upgrade(101);
    BOOST_TEST(upgrade.finish("x", "Upgrade: websocket", "Upgrade")
                   .ends_with("Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_response_head_test
