// HTTPS upstreams: certificate verification against a CA file, SNI/host name checks, and a clear
// 502 when verification fails.
#include "gateway/upstream/tls.hpp"

#include "tests/integration/harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace integration_tls_test {

using namespace gateway::testing;
namespace json = boost::json;

namespace {

fake_options tls_fake() {
    fake_options o;
    o.cert_file = CONTEXTGATE_TEST_DATA "/tls/server.crt";
    o.key_file = CONTEXTGATE_TEST_DATA "/tls/server.key";
    return o;
}

response ask(const gateway::config::gateway_config& config) {
    running_gateway gw(config);
    client c(gw.port());
    auto r = c.request(
        make_request("POST", "/v1/chat/completions", R"({"model":"gpt-4o-mini","stream":true})"));
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tls_upstream)

BOOST_AUTO_TEST_CASE(trusted_by_the_configured_ca) {
    fake_upstream fake(tls_fake());
    BOOST_TEST(fake.base_url().starts_with("https://"));
    auto config = make_config(fake);
    config.upstreams[0].ca_file = CONTEXTGATE_TEST_DATA "/tls/ca.crt";
    auto r = ask(config);
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.complete);
    BOOST_TEST(r.body == join(fake_upstream::chat_stream_events("gpt-4o-mini", false, false)));
}

BOOST_AUTO_TEST_CASE(also_by_host_name_with_sni) {
    fake_upstream fake(tls_fake());
    auto config = make_config({"https://localhost:" + std::to_string(fake.port()) + "/v1"});
    config.upstreams[0].ca_file = CONTEXTGATE_TEST_DATA "/tls/ca.crt";
    BOOST_TEST(ask(config).status == 200u);
}

BOOST_AUTO_TEST_CASE(untrusted_certificate_is_a_clear_502) {
    fake_upstream fake(tls_fake());
    for (std::string ca : {std::string(CONTEXTGATE_TEST_DATA "/tls/other-ca.crt"), std::string()}) {
        auto config = make_config(fake);
        config.upstreams[0].ca_file = ca;  // an unrelated CA, then the system store
        auto r = ask(config);
        BOOST_TEST(r.status == 502u);
        auto error = json::parse(r.body).at("error");
        BOOST_TEST(error.at("code").as_string() == "upstream_tls_error");
        std::string message(error.at("message").as_string());
        BOOST_TEST(message.find("certificate verification failed") != std::string::npos, message);
    }
    BOOST_TEST(fake.requests().empty());
}

BOOST_AUTO_TEST_CASE(tls_insecure_skips_verification) {
    fake_upstream fake(tls_fake());
    auto config = make_config(fake);
    config.upstreams[0].tls_insecure = true;
    BOOST_TEST(ask(config).status == 200u);
}

BOOST_AUTO_TEST_CASE(plain_http_to_a_tls_port_is_a_502) {
    fake_upstream fake(tls_fake());
    auto config = make_config({"http://127.0.0.1:" + std::to_string(fake.port()) + "/v1"});
    auto r = ask(config);
    BOOST_TEST(r.status == 502u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_tls_test
