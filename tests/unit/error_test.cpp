#include "gateway/error.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace error_test {

namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(error_vocabulary)

BOOST_AUTO_TEST_CASE(gateway_errors_map_to_status_and_openai_envelope) {
    struct row {
        gateway::errc code;
        unsigned status;
        const char* openai_code;
    };
    for (auto r :
         {row{gateway::errc::bad_request, 400, "bad_request"},
          row{gateway::errc::header_too_large, 400, "request_header_too_large"},
          row{gateway::errc::body_too_large, 413, "request_too_large"},
          row{gateway::errc::unsupported_transfer_coding, 501, "unsupported_transfer_coding"},
          row{gateway::errc::message_too_large, 413, "message_too_large"},
          row{gateway::errc::too_many_streams, 429, "too_many_streams"},
          row{gateway::errc::not_found, 404, "not_found"},
          row{gateway::errc::unauthorized, 401, "invalid_api_key"},
          row{gateway::errc::upstream_unreachable, 502, "upstream_unreachable"},
          row{gateway::errc::upstream_tls, 502, "upstream_tls_error"},
          row{gateway::errc::upstream_first_byte_timeout, 504, "upstream_timeout"},
          row{gateway::errc::upstream_connect_timeout, 504, "upstream_connect_timeout"}}) {
        auto response = gateway::to_error_response(r.code);
        BOOST_TEST(response.status == r.status);
        auto body = json::parse(response.body).as_object();
        const auto& error = body.at("error").as_object();
        BOOST_TEST(error.at("code").as_string() == r.openai_code);
        BOOST_TEST(error.at("param").is_null());
        BOOST_TEST(!error.at("message").as_string().empty());
        BOOST_TEST(error.at("type").is_string());
    }
}

BOOST_AUTO_TEST_CASE(message_override_and_foreign_codes) {
    auto response = gateway::to_error_response(gateway::errc::upstream_tls, "bad \"cert\"");
    BOOST_TEST(json::parse(response.body).at("error").at("message").as_string() == "bad \"cert\"");
    auto foreign = gateway::to_error_response(make_error_code(boost::system::errc::io_error));
    BOOST_TEST(foreign.status == 500u);
    BOOST_TEST(json::parse(foreign.body).at("error").at("code").as_string() == "internal_error");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace error_test
