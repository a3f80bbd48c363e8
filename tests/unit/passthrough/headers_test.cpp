#include "gateway/passthrough/headers.hpp"

#include "gateway/upstream/authorize.hpp"

#include <boost/test/unit_test.hpp>

namespace passthrough_headers_test {

namespace http = boost::beast::http;
using gateway::passthrough::for_each_end_to_end;
using gateway::passthrough::is_hop_by_hop;

BOOST_AUTO_TEST_SUITE(header_filtering)

BOOST_AUTO_TEST_CASE(hop_by_hop_names) {
    for (auto name : {"Connection", "keep-alive", "TE", "Trailer", "Transfer-Encoding", "Upgrade",
                      "Proxy-Authorization", "proxy-connection"})
        BOOST_TEST(is_hop_by_hop(name), name);
    for (auto name :
         {"Authorization", "Content-Type", "x-request-id", "anthropic-beta", "openai-organization",
          "retry-after", "x-ratelimit-remaining-tokens", "Trailers"})
        BOOST_TEST(!is_hop_by_hop(name), name);
}

// upstream_request_head compares only fields Beast does not know with the names it drops
// (x-request-id, the trace context, the API key fields, x-amz-*): were Beast ever to know one,
// it would pass unread, so this fails first.
BOOST_AUTO_TEST_CASE(beast_knows_none_of_the_names_the_upstream_head_drops_by_name) {
    for (auto name :
         {"x-request-id", "traceparent", "tracestate", "x-api-key", "api-key", "x-goog-api-key",
          "x-goog-user-project", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
        BOOST_TEST((http::string_to_field(name) == http::field::unknown), name);
}

BOOST_AUTO_TEST_CASE(end_to_end_fields_are_copied_in_order_with_their_spelling) {
    http::fields from;
    from.insert("Connection", "keep-alive, X-Drop-Me");
    from.insert("Keep-Alive", "timeout=5");
    from.insert("Host", "client.example");
    from.insert("Content-Length", "12");
    from.insert("Transfer-Encoding", "chunked");
    from.insert("X-Drop-Me", "named by Connection");
    from.insert("anthropic-beta", "tools-2024");
    from.insert("X-Custom-Thing", "1");
    from.insert("x-custom-thing", "2");
    from.insert("Retry-After", "7");
    from.insert("OpenAI-Organization", "org-1");
    // Every hop-by-hop kind, known to Beast by name or not.
    from.insert("TE", "trailers");
    from.insert("Trailer", "x-checksum");
    from.insert("Upgrade", "websocket");
    from.insert("Proxy-Authorization", "Basic eA==");
    from.insert("proxy-x-custom", "1");
    std::vector<std::string> got;
    for_each_end_to_end(from, [&](http::field, std::string_view name, std::string_view value) {
        got.push_back(std::string(name) + ": " + std::string(value));
    });
    std::vector<std::string> expected{"anthropic-beta: tools-2024", "X-Custom-Thing: 1",
                                      "x-custom-thing: 2", "Retry-After: 7",
                                      "OpenAI-Organization: org-1"};
    BOOST_TEST(got == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

// Whose key a target hears, and where a client's key may go (issue 51: a refusal of the client's
// own key is about the client; a forwarded key never reaches another provider).
BOOST_AUTO_TEST_SUITE(upstream_keys)

namespace config = gateway::config;
using gateway::passthrough::forwarded_credential;
using gateway::passthrough::forwarded_provider;
using gateway::passthrough::translated_key;
using gateway::upstream::credential;

namespace {

config::upstream_config upstream_of(config::provider_kind provider, std::string key,
                                    config::auth_mode auth = config::auth_mode::forward) {
    config::upstream_config up;
    up.provider = provider;
    up.api_key = std::move(key);
    up.auth = auth;
    return up;
}

gateway::http::request request_with(std::string_view field, std::string_view value,
                                    std::string_view target = "/v1/chat/completions") {
    gateway::http::request req{http::verb::post, target, 11};
    if (!field.empty()) req.set(field, value);
    return req;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_forwarded_request_is_heard_with_the_clients_key_or_the_gateways) {
    auto openai_own = upstream_of(config::provider_kind::openai, "sk-gateway");
    auto openai_none = upstream_of(config::provider_kind::openai, "");
    auto bearer = request_with("Authorization", "Bearer sk-client");
    auto anonymous = request_with("", "");
    BOOST_TEST((forwarded_credential(bearer, openai_own, false) == credential::client));
    BOOST_TEST((forwarded_credential(anonymous, openai_own, false) == credential::gateway));
    BOOST_TEST((forwarded_credential(anonymous, openai_none, false) == credential::none));
    // Basic or a custom field the gateway does not replace: still the client's.
    BOOST_TEST((forwarded_credential(request_with("Authorization", "Basic dTpw"), openai_none,
                                     false) == credential::client));
    // A virtual key or auth: replace: the gateway's key, or none when it has none.
    BOOST_TEST((forwarded_credential(bearer, openai_own, true) == credential::gateway));
    auto replaced = upstream_of(config::provider_kind::openai, "", config::auth_mode::replace);
    BOOST_TEST((forwarded_credential(bearer, replaced, false) == credential::none));
    // Gemini's ?key= is the client's too.
    auto gemini = upstream_of(config::provider_kind::gemini, "g-gateway");
    auto with_query = request_with("", "", "/v1beta/models/g:generateContent?key=g-client");
    BOOST_TEST((forwarded_credential(with_query, gemini, false) == credential::client));
}

// An upstream whose credentials the gateway holds (Bedrock's keys, Vertex AI's and Entra ID's
// tokens) hears the gateway's, whatever the client sent; an Azure upstream with an api_key only
// is like any other.
BOOST_AUTO_TEST_CASE(an_upstream_the_gateway_authorises_hears_the_gateways_credential) {
    auto vertex = upstream_of(config::provider_kind::gemini, "");
    vertex.host = config::hosting::vertex;
    auto entra = upstream_of(config::provider_kind::openai, "");
    entra.host = config::hosting::azure;
    entra.azure = {"tenant", "app", "secret", ""};
    auto azure_key = upstream_of(config::provider_kind::openai, "k");
    azure_key.host = config::hosting::azure;
    auto bedrock = upstream_of(config::provider_kind::bedrock, "");
    for (const auto* up : {&vertex, &entra, &bedrock}) {
        BOOST_TEST(gateway::upstream::authorized_by_gateway(*up));
        for (auto [field, value] :
             {std::pair{"Authorization", "Bearer sk-client"},
              std::pair{"x-goog-api-key", "client-key"}, std::pair{"api-key", "client-key"}})
            BOOST_TEST((forwarded_credential(request_with(field, value), *up, false) ==
                        credential::gateway));
    }
    BOOST_TEST(!gateway::upstream::authorized_by_gateway(azure_key));
}

BOOST_AUTO_TEST_CASE(a_translated_request_carries_the_clients_key_only_where_it_may_go) {
    auto claude = upstream_of(config::provider_kind::anthropic, "sk-ant-gateway");
    auto bearer = request_with("Authorization", "Bearer sk-client");
    auto mine = translated_key(bearer, false, claude, true);
    BOOST_TEST(mine.value == "sk-client");
    BOOST_TEST((mine.whose == credential::client));
    auto ours = translated_key(bearer, false, claude, false);
    BOOST_TEST(ours.value == "sk-ant-gateway");
    BOOST_TEST((ours.whose == credential::gateway));
    auto keyless = upstream_of(config::provider_kind::anthropic, "");
    auto none = translated_key(bearer, false, keyless, false);
    BOOST_TEST(none.value.empty());
    BOOST_TEST((none.whose == credential::none));
    BOOST_TEST(translated_key(bearer, true, claude, true).value == "sk-ant-gateway");
}

BOOST_AUTO_TEST_CASE(a_key_is_presented_for_the_routes_one_provider_or_the_clients_own) {
    std::vector<config::upstream_config> ups{upstream_of(config::provider_kind::openai, ""),
                                             upstream_of(config::provider_kind::anthropic, ""),
                                             upstream_of(config::provider_kind::anthropic, "")};
    config::route_config claude_only;
    claude_only.targets = {{"a", "", 1, 1}, {"b", "", 1, 2}};
    BOOST_TEST((forwarded_provider(claude_only, ups, config::provider_kind::openai) ==
                config::provider_kind::anthropic));
    config::route_config mixed = claude_only;
    mixed.on_context_window = {{"o", "", 1, 0}};
    BOOST_TEST((forwarded_provider(mixed, ups, config::provider_kind::openai) ==
                config::provider_kind::openai));
    BOOST_TEST((forwarded_provider(mixed, ups, config::provider_kind::gemini) ==
                config::provider_kind::gemini));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_headers_test
