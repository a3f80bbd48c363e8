#include "gateway/upstream/authorize.hpp"

#include "gateway/config/config.hpp"
#include "gateway/upstream/pool.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

namespace upstream_authorize_test {

using namespace gateway;

BOOST_AUTO_TEST_SUITE(upstream_authorize)

// Bedrock, Vertex AI and Azure with an Entra ID application are authorised by the gateway; an
// Azure upstream with an api_key, and every other, hear a key.
BOOST_AUTO_TEST_CASE(the_gateway_authorises_the_clouds_it_holds_credentials_for) {
    config::upstream_config up;
    up.provider = config::provider_kind::openai;
    BOOST_TEST(!upstream::authorized_by_gateway(up));
    up.host = config::hosting::azure;
    BOOST_TEST(!upstream::authorized_by_gateway(up));
    up.azure.client_id = "app";
    BOOST_TEST(upstream::authorized_by_gateway(up));

    config::upstream_config vertex;
    vertex.host = config::hosting::vertex;
    BOOST_TEST(upstream::authorized_by_gateway(vertex));

    config::upstream_config bedrock;
    bedrock.provider = config::provider_kind::bedrock;
    BOOST_TEST(upstream::authorized_by_gateway(bedrock));
}

// The token is read from its own field below the request line; a head without one has none
// (a client's Authorization in a body or another field's value is not it).
BOOST_AUTO_TEST_CASE(the_token_a_head_carries_is_found) {
    BOOST_TEST(upstream::bearer_token_in("POST /v1/x HTTP/1.1\r\nHost: h\r\n"
                                         "Authorization: Bearer ya29.token\r\n"
                                         "Content-Length: 2\r\n\r\n") == "ya29.token");
    BOOST_TEST(upstream::bearer_token_in("POST /v1/x HTTP/1.1\r\nHost: h\r\n\r\n").empty());
    BOOST_TEST(upstream::bearer_token_in("POST /v1/x HTTP/1.1\r\n"
                                         "X-Note: Authorization: Bearer not-it\r\n\r\n")
                   .empty());
}

// An upstream whose pool holds no credentials of the gateway's is not authorised: the error
// names it, and no field is written.
BOOST_AUTO_TEST_CASE(a_pool_without_credentials_says_so) {
    config::upstream_config up;
    up.name = "plain";
    up.endpoint.host = "127.0.0.1";
    upstream::pool pool(up, nullptr);
    boost::asio::io_context io;
    auto done = boost::asio::co_spawn(io, upstream::authorize(pool, "/model/x/converse", "{}"),
                                      boost::asio::use_future);
    io.run();
    auto got = done.get();
    BOOST_TEST(got.fields.empty());
    BOOST_TEST(got.error == "upstream `plain` holds no credentials of the gateway's");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_authorize_test
