#include "gateway/secret_names.hpp"

#include <boost/test/unit_test.hpp>

namespace secret_names_test {

using gateway::names_a_secret;

BOOST_AUTO_TEST_SUITE(secret_names)

BOOST_AUTO_TEST_CASE(credential_words_in_any_spelling_name_secrets) {
    for (auto name : {"key",
                      "KEY",
                      "api_key",
                      "api-key",
                      "apikey",
                      "x-api-key",
                      "x-goog-api-key",
                      "subscription-key",
                      "Ocp-Apim-Subscription-Key",
                      "access_token",
                      "access-token",
                      "private_token",
                      "token",
                      "id_token",
                      "client_secret",
                      "password",
                      "passwd",
                      "auth",
                      "Authorization",
                      "x-custom-auth",
                      "jwt",
                      "session",
                      "sessionid",
                      "X-Amz-Signature",
                      "X-Amz-Credential",
                      "cookie",
                      "sig",
                      "Sig",
                      "code",
                      "pass",
                      "pwd",
                      "sid",
                      "otp"})
        BOOST_TEST(names_a_secret(name), name);
}

BOOST_AUTO_TEST_CASE(ordinary_names_are_not_secrets) {
    for (auto name : {"alt", "model", "api-version", "limit", "after", "anthropic-beta",
                      "anthropic-version", "openai-beta", "x-goog-api-client", "user-agent",
                      "content-type", "q", "codec", "signal", "", "stream"})
        BOOST_TEST(!names_a_secret(name), name);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(percent_decoding)

// One decoder for every query name the gateway reads (the key, the cache key, the log's
// redaction): each valid %XX decoded, anything else kept, as a lenient server would read it.
BOOST_AUTO_TEST_CASE(valid_escapes_are_decoded_and_the_rest_kept) {
    using gateway::percent_decoded;
    BOOST_TEST(percent_decoded("%6Bey") == "key");
    BOOST_TEST(percent_decoded("api%2Dkey") == "api-key");
    BOOST_TEST(percent_decoded("%6Bey%zz") == "key%zz");
    BOOST_TEST(percent_decoded("50%") == "50%");
    BOOST_TEST(percent_decoded("%4") == "%4");
    BOOST_TEST(percent_decoded("a+b") == "a+b");
    BOOST_TEST(percent_decoded("") == "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace secret_names_test
