#include "gateway/upstream/tls.hpp"

#include <boost/test/unit_test.hpp>

#include <openssl/ssl.h>

namespace upstream_tls_test {

namespace config = gateway::config;
using gateway::upstream::make_client_context;

BOOST_AUTO_TEST_SUITE(upstream_tls)

BOOST_AUTO_TEST_CASE(a_client_context_verifies_its_peer_with_tls_1_2_or_later) {
    config::upstream_config up;
    up.name = "secure";
    up.ca_file = CONTEXTGATE_TEST_DATA "/tls/ca.crt";
    auto made = make_client_context(up);
    BOOST_TEST_REQUIRE(made.error.empty(), made.error);
    auto* native = (*made.value)->native_handle();
    BOOST_TEST((SSL_CTX_get_verify_mode(native) & SSL_VERIFY_PEER) != 0);
    BOOST_TEST((SSL_CTX_get_options(native) & SSL_OP_NO_TLSv1_1) != 0);
    BOOST_TEST((SSL_CTX_get_options(native) & SSL_OP_NO_TLSv1) != 0);
}

BOOST_AUTO_TEST_CASE(a_ca_file_that_cannot_be_read_is_named_in_the_error) {
    config::upstream_config up;
    up.name = "secure";
    up.ca_file = "/nonexistent/ca.pem";
    auto made = make_client_context(up);
    BOOST_TEST(!made);
    BOOST_TEST(
        made.error.find("upstream `secure`: cannot load ca_file `/nonexistent/ca.pem`") == 0u,
        made.error);
}

BOOST_AUTO_TEST_CASE(tls_insecure_turns_verification_off) {
    config::upstream_config up;
    up.tls_insecure = true;
    auto made = make_client_context(up);
    BOOST_TEST_REQUIRE(made.error.empty());
    BOOST_TEST(SSL_CTX_get_verify_mode((*made.value)->native_handle()) == SSL_VERIFY_NONE);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_tls_test
