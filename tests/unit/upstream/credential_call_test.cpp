#include "gateway/upstream/credential_call.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace upstream_credential_call_test {

using namespace gateway;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(upstream_credential_call)

// A credential service is an upstream of its own: its URL's address and base path, every step
// bounded by the one timeout.
BOOST_AUTO_TEST_CASE(a_service_is_an_upstream_bounded_by_its_timeout) {
    auto service = upstream::credential_service("sts", "http://127.0.0.1:8080/base", 1500ms);
    BOOST_TEST_REQUIRE(bool(service), service.error);
    const auto& up = *service.value;
    BOOST_TEST(up.name == "sts");
    BOOST_TEST(!up.endpoint.tls);
    BOOST_TEST(up.endpoint.host == "127.0.0.1");
    BOOST_TEST(up.endpoint.port == 8080);
    BOOST_TEST(up.endpoint.base_path == "/base");
    BOOST_TEST(up.connect_timeout.count() == 1500);
    BOOST_TEST(up.first_byte_timeout.count() == 1500);
    BOOST_TEST(up.idle_timeout.count() == 1500);
}

// A URL that is none is refused, and the error names it.
BOOST_AUTO_TEST_CASE(a_broken_url_is_refused_by_name) {
    auto service = upstream::credential_service("sts", "ftp://sts.example", 1s);
    BOOST_TEST(!service);
    BOOST_TEST(service.error.starts_with("`ftp://sts.example`: "), service.error);
}

// The head: the target below the base path, Host, the caller's fields, the length, and a
// connection that closes after the one call.
BOOST_AUTO_TEST_CASE(the_request_head_names_the_target_below_the_base_path) {
    auto service = upstream::credential_service("entra", "http://127.0.0.1:8080/t/oauth2", 1s);
    BOOST_TEST_REQUIRE(bool(service), service.error);
    auto head = upstream::credential_request_head("POST", *service.value, "/token",
                                                  "Accept: application/json\r\n", 42);
    BOOST_TEST(head ==
               "POST /t/oauth2/token HTTP/1.1\r\n"
               "Host: 127.0.0.1:8080\r\n"
               "User-Agent: contextgate\r\n"
               "Accept: application/json\r\n"
               "Content-Length: 42\r\n"
               "Connection: close\r\n\r\n");
}

// What an error message quotes of an answer: one line of at most 200 bytes.
BOOST_AUTO_TEST_CASE(an_answer_is_quoted_on_one_short_line) {
    BOOST_TEST(upstream::first_bytes("<html>\r\n\tbusy\n</html>\n") == "<html>   busy </html>");
    auto quoted = upstream::first_bytes(std::string(500, 'x'));
    BOOST_TEST(quoted == std::string(200, 'x'));
    BOOST_TEST(upstream::first_bytes("") == "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_credential_call_test
