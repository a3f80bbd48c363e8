#include "gateway/upstream/entra_credentials.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_entra_credentials_test {

using gateway::upstream::entra::authority_of;

BOOST_AUTO_TEST_SUITE(upstream_entra_credentials)

// The upstream's authority_host first, then AZURE_AUTHORITY_HOST, then the public cloud's.
BOOST_AUTO_TEST_CASE(the_authority_is_the_configured_one_then_the_environment_s) {
    BOOST_TEST(authority_of("https://login.example", "https://env.example") ==
               "https://login.example");
    BOOST_TEST(authority_of("", "https://env.example") == "https://env.example");
    BOOST_TEST(authority_of("", "") == "https://login.microsoftonline.com");
}

// A bare host gets https:// (a local fake keeps its http://), and trailing slashes go, so that
// the tenant's path is joined with one slash.
BOOST_AUTO_TEST_CASE(an_authority_is_an_origin_without_a_trailing_slash) {
    BOOST_TEST(authority_of("login.microsoftonline.us", "") == "https://login.microsoftonline.us");
    BOOST_TEST(authority_of("https://login.chinacloudapi.cn//", "") ==
               "https://login.chinacloudapi.cn");
    BOOST_TEST(authority_of("", "http://127.0.0.1:8080/") == "http://127.0.0.1:8080");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_entra_credentials_test
