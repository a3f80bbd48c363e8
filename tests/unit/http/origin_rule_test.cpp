// Host and Origin for every route (DNS rebinding, cross-site pages), and the JSON body rule of the
// gateway's own APIs: judged on request heads alone.
#include "gateway/http/origin_rule.hpp"

#include <boost/test/unit_test.hpp>

namespace http_origin_rule_test {

using gateway::http::origin_rule;
namespace bhttp = boost::beast::http;

namespace {

bhttp::request_header<> head(std::string_view host, std::string_view origin = {}) {
    bhttp::request_header<> h;
    h.method(bhttp::verb::post);
    h.target("/context/chats");
    h.set(bhttp::field::host, host);
    if (!origin.empty()) h.set(bhttp::field::origin, origin);
    return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(origin_rules)

BOOST_AUTO_TEST_CASE(loopback_names_and_addresses_are_always_allowed_with_any_port) {
    origin_rule rule({}, "127.0.0.1");
    for (const auto* host : {"localhost", "localhost:8080", "127.0.0.1:1", "[::1]:8080", "[::1]",
                             "LOCALHOST:80", "app.localhost:3000", "127.0.0.2",
                             // An address cannot be rebound: only a name the attacker owns can.
                             "10.0.0.5:8080", "[2001:db8::1]:443"})
        BOOST_TEST(rule.allowed_host(host), host);
    for (const auto* host : {"evil.example.com", "evil.example.com:8080", "", "localhost.evil.com",
                             "[::1", "[::1]x", "gateway.test", "127.0.0.1.nip.io"})
        BOOST_TEST(!rule.allowed_host(host), host);
}

BOOST_AUTO_TEST_CASE(configured_names_the_listen_name_and_the_wildcard) {
    origin_rule rule({"gateway.example.com:443", "Other.Example"}, "gw.internal");
    BOOST_TEST(rule.allowed_host("gateway.example.com"));
    BOOST_TEST(rule.allowed_host("Gateway.Example.COM:8443"));
    BOOST_TEST(rule.allowed_host("other.example"));
    BOOST_TEST(rule.allowed_host("gw.internal:8080"));
    BOOST_TEST(!rule.allowed_host("example.com"));
    BOOST_TEST(origin_rule({"*"}, "0.0.0.0").allowed_host("anything.at.all:1"));
    BOOST_TEST(!origin_rule({}, "0.0.0.0").allowed_host("anything.at.all:1"));
}

BOOST_AUTO_TEST_CASE(an_origin_is_the_same_site_a_loopback_page_or_a_listed_name) {
    origin_rule rule({"gateway.example.com"}, "127.0.0.1");
    BOOST_TEST(rule.allowed_origin("http://localhost:3000", "127.0.0.1:8080"));
    BOOST_TEST(rule.allowed_origin("http://127.0.0.1:5173", "127.0.0.1:8080"));
    BOOST_TEST(rule.allowed_origin("https://gateway.example.com", "10.0.0.1"));
    BOOST_TEST(rule.allowed_origin("https://gateway.example.com/path", "10.0.0.1"));
    // Same origin: the console served by the gateway at its own address.
    BOOST_TEST(rule.allowed_origin("http://10.0.0.5:8080", "10.0.0.5:8080"));
    BOOST_TEST(rule.allowed_origin("http://10.0.0.5", "10.0.0.5:80"));
    BOOST_TEST(!rule.allowed_origin("http://10.0.0.5:9000", "10.0.0.5:8080"));
    // A page elsewhere posting to the gateway's own address is cross-site.
    BOOST_TEST(!rule.allowed_origin("http://evil.example.com", "127.0.0.1:8080"));
    BOOST_TEST(!rule.allowed_origin("http://1.2.3.4", "127.0.0.1:8080"));
    BOOST_TEST(!rule.allowed_origin("null", "127.0.0.1:8080"));
    BOOST_TEST(!rule.allowed_origin("gateway.example.com", "127.0.0.1:8080"));
}

BOOST_AUTO_TEST_CASE(a_head_is_judged_on_host_and_origin_together) {
    origin_rule rule({}, "127.0.0.1");
    BOOST_TEST(rule.allows(head("127.0.0.1:8080")));
    BOOST_TEST(rule.allows(head("127.0.0.1:8080", "http://127.0.0.1:8080")));
    BOOST_TEST(!rule.allows(head("rebound.evil.example:8080")));  // DNS rebinding
    BOOST_TEST(!rule.allows(head("rebound.evil.example:8080", "http://rebound.evil.example:8080")));
    BOOST_TEST(!rule.allows(head("127.0.0.1:8080", "https://evil.example.com")));  // cross-site
    auto two = head("127.0.0.1:8080", "http://localhost");
    two.insert(bhttp::field::origin, "http://evil.example.com");
    BOOST_TEST(!rule.allows(two));
    // Fields named in any case are those fields; no Host at all is HTTP/1.0's.
    bhttp::request_header<> cased;
    cased.insert("hOsT", "127.0.0.1:8080");
    BOOST_TEST(rule.allows(cased));
    cased.insert("ORIGIN", "https://evil.example.com");
    BOOST_TEST(!rule.allows(cased));
    bhttp::request_header<> rebound;
    rebound.insert("HOST", "rebound.evil.example:8080");
    BOOST_TEST(!rule.allows(rebound));
    BOOST_TEST(rule.allows(bhttp::request_header<>{}));
}

BOOST_AUTO_TEST_CASE(the_gateways_own_apis_take_json_bodies_only) {
    auto guard = gateway::http::json_body_guard("/context");
    auto with = [](std::string_view method, std::string_view type, std::string_view length) {
        bhttp::request_header<> h;
        h.method_string(method);
        h.target("/context/chats");
        if (!type.empty()) h.set(bhttp::field::content_type, type);
        if (!length.empty()) h.set(bhttp::field::content_length, length);
        return h;
    };
    BOOST_TEST(guard.allow(with("POST", "application/json", "2"), nullptr));
    BOOST_TEST(guard.allow(with("PATCH", "Application/JSON; charset=utf-8", "2"), nullptr));
    BOOST_TEST(guard.allow(with("POST", "application/merge-patch+json", "2"), nullptr));
    BOOST_TEST(guard.allow(with("POST", "", "0"), nullptr));  // no body: nothing to read
    BOOST_TEST(guard.allow(with("POST", "", ""), nullptr));   // no body either
    BOOST_TEST(guard.allow(with("GET", "text/plain", "5"), nullptr));
    // What a page may send cross-site without asking first.
    BOOST_TEST(!guard.allow(with("POST", "text/plain", "2"), nullptr));
    BOOST_TEST(!guard.allow(with("POST", "application/x-www-form-urlencoded", "2"), nullptr));
    BOOST_TEST(!guard.allow(with("PUT", "multipart/form-data; boundary=x", "2"), nullptr));
    BOOST_TEST(!guard.allow(with("DELETE", "", "2"), nullptr));
    BOOST_TEST(!guard.allow(with("POST", "application/jsonx", "2"), nullptr));
    BOOST_TEST((guard.refusal == gateway::errc::unsupported_media_type));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace http_origin_rule_test
