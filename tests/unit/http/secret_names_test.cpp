#include "gateway/http/secret_names.hpp"

#include <boost/test/unit_test.hpp>

using gateway::http::names_a_secret;

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
