#include "gateway/detection/detectors.hpp"

#include "gateway/detection/rules.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace detection_detectors_test {

using namespace gateway;
using namespace gateway::detection;

namespace {

// Tokens are made here, from a fixed seed, rather than written out: no credential-shaped
// literal sits in the repository for a secret scanner to flag.
std::string random_text(std::size_t n, std::string_view alphabet, std::uint64_t seed = 7) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        out += alphabet[(seed >> 33) % alphabet.size()];
    }
    return out;
}
constexpr std::string_view alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::string_view upper32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view hex = "0123456789abcdef";
constexpr std::string_view base64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const detectors& all() {
    static const auto built = detectors::make({"secrets", "pii"}, {});
    return *built.value;
}

std::vector<std::string> rules_in(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& h : all().scan(text)) out.emplace_back(h.rule);
    return out;
}

// `secret` embedded in a sentence is found as exactly one hit of `rule` covering it.
void expect_found(const std::string& secret, std::string_view rule) {
    auto text = "config: " + secret + " (do not share)";
    auto hits = all().scan(text);
    BOOST_TEST_REQUIRE(hits.size() == 1u, "no single hit in: " << text);
    BOOST_TEST(hits[0].rule == rule);
    BOOST_TEST(text.substr(hits[0].begin, hits[0].end - hits[0].begin) == secret);
}

void expect_clean(std::string_view text) {
    auto found = rules_in(text);
    BOOST_TEST(found.empty(), "unexpected hit " << (found.empty() ? "" : found[0])
                                                << " in: " << text.substr(0, 200));
}

std::string read(const std::string& relative) {
    std::ifstream in(std::string(CONTEXTGATE_SOURCE_DIR) + "/" + relative, std::ios::binary);
    BOOST_TEST_REQUIRE(static_cast<bool>(in), "cannot read " << relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(guardrail_detectors)

BOOST_AUTO_TEST_CASE(cloud_and_code_host_tokens_are_found) {
    expect_found("AKIA" + random_text(16, upper32), "aws_access_key_id");
    expect_found("ASIA" + random_text(16, upper32, 3), "aws_access_key_id");
    expect_found("ghp_" + random_text(36, alnum), "github_token");
    expect_found("gho_" + random_text(36, alnum, 2), "github_token");
    expect_found("ghs_" + random_text(36, alnum, 4), "github_token");
    expect_found("github_pat_" + random_text(22, alnum) + "_" + random_text(59, alnum, 5),
                 "github_token");
    expect_found("glpat-" + random_text(20, alnum), "gitlab_token");
    expect_found("AIza" + random_text(35, alnum), "google_api_key");
    expect_found("GOCSPX-" + random_text(28, alnum), "google_oauth_client_secret");
    expect_found("npm_" + random_text(36, alnum), "npm_token");
    expect_found("pypi-AgEIcHlwaS5vcmc" + random_text(120, alnum), "pypi_token");
}

BOOST_AUTO_TEST_CASE(model_payment_and_messaging_keys_are_found) {
    expect_found("sk-ant-api03-" + random_text(93, alnum) + "AA", "anthropic_key");
    expect_found("sk-proj-" + random_text(156, alnum), "openai_key");
    expect_found("sk-" + random_text(48, alnum), "openai_key");
    expect_found("sk_live_" + random_text(24, alnum), "stripe_key");
    expect_found("rk_live_" + random_text(24, alnum), "stripe_key");
    expect_found("xoxb-1234567890-1234567890123-" + random_text(24, alnum), "slack_token");
    expect_found("https://hooks.slack.com/services/T0" + random_text(8, upper32) + "/B0" +
                     random_text(8, upper32) + "/" + random_text(24, alnum),
                 "slack_webhook");
    expect_found("SK" + random_text(32, hex), "twilio_api_key");
    expect_found("SG." + random_text(22, alnum) + "." + random_text(43, alnum), "sendgrid_key");
}

BOOST_AUTO_TEST_CASE(assignments_mask_only_the_value) {
    auto value = random_text(40, base64);
    auto text = "export AWS_SECRET_ACCESS_KEY=" + value + "\n";
    auto hits = all().scan(text);
    BOOST_TEST_REQUIRE(hits.size() == 1u);
    BOOST_TEST(hits[0].rule == "aws_secret_access_key");
    BOOST_TEST(text.substr(hits[0].begin, hits[0].end - hits[0].begin) == value);

    auto token = random_text(32, hex);
    auto twilio = "TWILIO_AUTH_TOKEN=\"" + token + "\"";
    hits = all().scan(twilio);
    BOOST_TEST_REQUIRE(hits.size() == 1u);
    BOOST_TEST(hits[0].rule == "twilio_auth_token");
    BOOST_TEST(twilio.substr(hits[0].begin, hits[0].end - hits[0].begin) == token);
}

BOOST_AUTO_TEST_CASE(generic_assignments_need_entropy) {
    auto random = random_text(32, alnum);
    for (std::string name :
         {"password", "DB_PASSWORD", "client_secret", "api_key", "apiKey", "auth_token"}) {
        auto text = name + " = \"" + random + "\"";
        auto hits = all().scan(text);
        BOOST_TEST_REQUIRE(hits.size() == 1u, text);
        BOOST_TEST(hits[0].rule == "assigned_secret");
        BOOST_TEST(text.substr(hits[0].begin, hits[0].end - hits[0].begin) == random);
    }
    expect_clean("password = \"changeme\"");
    expect_clean("password: \"your-password-here\"");
    expect_clean("api_key: ${OPENAI_API_KEY}");
    expect_clean("token = password123password123");
    expect_clean("secret_name = \"database-credentials-production\"");
    expect_clean("max_tokens: 4096");
    expect_clean("const token = request.headers.authorization;");
}

BOOST_AUTO_TEST_CASE(private_key_blocks_are_found_whole) {
    std::string body;
    for (int line = 0; line < 25; ++line) body += random_text(64, base64, line) + "\n";
    for (std::string kind : {"RSA ", "EC ", "OPENSSH ", "", "PGP "}) {
        auto type = kind + "PRIVATE KEY" + (kind == "PGP " ? " BLOCK" : "");
        auto block = "-----BEGIN " + type + "-----\n" + body + "-----END " + type + "-----";
        auto text = "here it is:\n" + block + "\nthanks";
        auto hits = all().scan(text);
        BOOST_TEST_REQUIRE(hits.size() == 1u, type);
        BOOST_TEST(hits[0].rule == "private_key");
        BOOST_TEST(text.substr(hits[0].begin, hits[0].end - hits[0].begin) == block);
    }
    // No END within the bound: the body is masked up to the bound, never past the key.
    auto cut = "-----BEGIN RSA PRIVATE KEY-----\n" + body.substr(0, 300);
    auto hits = all().scan(cut + "\n\nWhat does it mean?");
    BOOST_TEST_REQUIRE(hits.size() == 1u);
    BOOST_TEST(hits[0].end <= cut.size() + 2);
    BOOST_TEST(all().max_match_bytes() == 4096u);
    expect_clean("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n");
    expect_clean("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----");
}

BOOST_AUTO_TEST_CASE(jwts_are_found) {
    auto jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." +
               random_text(43, alnum);
    expect_found(jwt, "jwt");
    expect_clean("eyJ.eyJ.x and eyJhbGciOi alone");
}

BOOST_AUTO_TEST_CASE(near_misses_of_secrets_are_not_found) {
    expect_clean("ghp_tooShort123");
    expect_clean("AKIA" + random_text(10, upper32));                       // too short
    expect_clean("XAKIA" + random_text(16, upper32) + "Z");                // inside a longer word
    expect_clean("sk-learn-classifier-options-for-the-big-model-family");  // no digits
    expect_clean("sk_test_" + random_text(24, alnum));                     // a test key is not live
    expect_clean("AIza" + random_text(20, alnum));                         // too short
    expect_clean("npm_" + random_text(36, alnum) + "x");                   // too long for npm
    expect_clean("xoxb-not-a-token");
    expect_clean("https://hooks.slack.com/services/");
    expect_clean("pypi-sdist-upload");
}

BOOST_AUTO_TEST_CASE(email_addresses) {
    expect_found("jane.doe+news@example.co.uk", "email");
    expect_found("ops@contextgate.dev", "email");
    expect_clean("git@github.com:owner/repo.git");
    expect_clean("icon@2x.png and logo@3x.webp");
    expect_clean("@types/node@20.1.0 and @scope/pkg");
    expect_clean("user@localhost");
}

BOOST_AUTO_TEST_CASE(phone_numbers) {
    expect_found("+1 415 555 0132", "phone");
    expect_found("+14155550132", "phone");
    expect_found("+44 20 7946 0958", "phone");
    expect_found("+49 (30) 123456789", "phone");
    expect_found("(415) 555-0132", "phone");
    expect_found("415-555-0132", "phone");
    expect_found("06 12 34 56 78", "phone");
    expect_found("020 7946 0958", "phone");
    expect_clean("version 1.24.3, released 2024-11-28 at 12:30:45");
    expect_clean("2024-11-28T10:15:30.123Z and 1732752000 and 1732752000123");
    expect_clean("10.0.0.1 and 192.168.100.200 and 255.255.255.0");
    expect_clean("v2.3.4-rc.1, 0.0.1, 20241128, 3.14159265358979");
    expect_clean("\"0123456789abcdef\" and 0123456789");
    expect_clean("@@ -12,7 +12,8 @@ and x += 100000;");
}

BOOST_AUTO_TEST_CASE(payment_cards_are_luhn_checked) {
    expect_found("4111 1111 1111 1111", "payment_card");
    expect_found("4111-1111-1111-1111", "payment_card");
    expect_found("5555555555554444", "payment_card");
    expect_found("3782 822463 10005", "payment_card");
    expect_clean("4111 1111 1111 1112");      // Luhn fails
    expect_clean("1234-5678-9012-3456");      // no network begins with 1
    expect_clean("4111 1111-1111 1111");      // mixed separators
    expect_clean("41111 11111 11111 1");      // not grouped as a card
    expect_clean("id 41111111111111119999");  // inside a longer number
}

BOOST_AUTO_TEST_CASE(ibans_are_mod97_checked) {
    expect_found("GB82 WEST 1234 5698 7654 32", "iban");
    expect_found("GB82WEST12345698765432", "iban");
    expect_found("DE89 3704 0044 0532 0130 00", "iban");
    expect_clean("GB82 WEST 1234 5698 7654 33");
    expect_clean("AB12 CDEF GHIJ KLMN");
}

// Ordinary code, prose and configuration — this repository's own files — and the identifiers
// that look random but are not secrets: none gives a hit.
BOOST_AUTO_TEST_CASE(false_positive_corpus_is_clean) {
    for (const char* file :
         {"gateway/config/sections.cpp", "gateway/upstream/sigv4.cpp", "gateway/tools/digest.cpp",
          "gateway/observability/metrics.cpp", "web/src/api.js", "web/src/chat.jsx",
          "docs/routing.md", "docs/architecture.md", "config/gateway.yaml", "CMakeLists.txt",
          "workflows/refactor_component.yaml", "README.md"})
        expect_clean(read(file));

    std::string ids;
    for (int i = 0; i < 50; ++i) {
        auto uuid = random_text(32, hex, i);
        ids += random_text(40, hex, 100 + i) + " " + random_text(7, hex, 200 + i) + " " +
               uuid.substr(0, 8) + "-" + uuid.substr(8, 4) + "-" + uuid.substr(12, 4) + "-" +
               uuid.substr(16, 4) + "-" + uuid.substr(20) +
               " sha256:" + random_text(64, hex, 300 + i) + "\n";
    }
    expect_clean(ids);
    expect_clean("data:image/png;base64," + random_text(6000, base64, 11) + "==");
    expect_clean("{\"image\": \"" + random_text(3000, base64, 12) + "\"}");
    expect_clean("versions 1.2.3 10.20.30 1.0.0-alpha+001 2.0.0-rc.1+build.123 v12.4.0");
    expect_clean(
        "dates 2026-11-28 28/11/2026 11/28/2026 28.11.2026 2026-11-28 00:49:21 UTC "
        "Sat, 28 Nov 2026 00:49:21 GMT 1764290961 1764290961000");
}

BOOST_AUTO_TEST_CASE(hits_are_ordered_and_masked) {
    auto key = "ghp_" + random_text(36, alnum);
    auto text = "mail ops@contextgate.dev, key " + key + ", card 4111 1111 1111 1111.";
    auto hits = all().scan(text);
    BOOST_TEST_REQUIRE(hits.size() == 3u);
    BOOST_TEST(hits[0].rule == "email");
    BOOST_TEST(hits[1].rule == "github_token");
    BOOST_TEST(hits[2].rule == "payment_card");
    BOOST_TEST(mask(text, hits) ==
               "mail [REDACTED:email], key [REDACTED:github_token], card "
               "[REDACTED:payment_card].");
    BOOST_TEST(mask(text, {}) == text);
    BOOST_TEST(all().scan("").empty());
}

BOOST_AUTO_TEST_CASE(the_specific_rule_wins_a_tie) {
    // Also a 40-character value assigned to a `secret` name: the AWS rule names it.
    auto text = "aws_secret_access_key = " + random_text(40, base64, 9);
    auto found = rules_in(text);
    BOOST_TEST_REQUIRE(found.size() == 1u);
    BOOST_TEST(found[0] == "aws_secret_access_key");
    found = rules_in("sk-ant-api03-" + random_text(93, alnum));
    BOOST_TEST_REQUIRE(found.size() == 1u);
    BOOST_TEST(found[0] == "anthropic_key");
}

BOOST_AUTO_TEST_CASE(sets_select_their_rules) {
    auto pii = detectors::make({"pii"}, {});
    BOOST_TEST_REQUIRE(static_cast<bool>(pii));
    auto text = "ops@contextgate.dev ghp_" + random_text(36, alnum);
    auto hits = pii.value->scan(text);
    BOOST_TEST_REQUIRE(hits.size() == 1u);
    BOOST_TEST(hits[0].rule == "email");
    BOOST_TEST(pii.value->max_match_bytes() == 254u);
    auto none = detectors::make({}, {});
    BOOST_TEST_REQUIRE(static_cast<bool>(none));
    BOOST_TEST(none.value->empty());
    BOOST_TEST(none.value->scan(text).empty());
    for (const auto& r : builtin_rules()) BOOST_TEST(known_set(r.set));
}

BOOST_AUTO_TEST_CASE(custom_rules_match_whole) {
    auto built = detectors::make(
        {}, {{"ticket", R"(TICKET-[0-9]{4,8})"}, {"codename", R"((?i)project\s+falcon)"}});
    BOOST_TEST_REQUIRE(static_cast<bool>(built), built.error);
    std::string text = "See TICKET-12345 about Project  Falcon.";
    auto hits = built.value->scan(text);
    BOOST_TEST_REQUIRE(hits.size() == 2u);
    BOOST_TEST(mask(text, hits) == "See [REDACTED:ticket] about [REDACTED:codename].");
    BOOST_TEST(built.value->max_match_bytes() == custom_rule_max_bytes);
    // A match longer than the bound is refused (a stream could not hold it back).
    auto greedy = detectors::make({}, {{"quoted", R"("[^"]*")"}});
    BOOST_TEST(greedy.value->scan("\"" + std::string(300, 'x') + "\"").empty());
    BOOST_TEST(greedy.value->scan("\"short\"").size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_rules_are_refused_by_name) {
    auto unknown = detectors::make({"secrets", "passwords"}, {});
    BOOST_TEST(!unknown);
    BOOST_TEST(unknown.error == "unknown detector set `passwords` (known: secrets, pii)");
    auto broken = detectors::make({}, {{"ticket", "TICKET-(["}});
    BOOST_TEST(!broken);
    BOOST_TEST(broken.error.starts_with("rule `ticket`: "));
    auto empty = detectors::make({}, {{"anything", "x*"}});
    BOOST_TEST(empty.error == "rule `anything`: it matches the empty string");
    auto twice = detectors::make({"secrets"}, {{"jwt", "JWT-[0-9]+"}});
    BOOST_TEST(twice.error == "rule `jwt` is named twice");
    BOOST_TEST(pattern_error("a(b").find("missing )") != std::string::npos);
    BOOST_TEST(pattern_error("[A-Z]{3}-[0-9]+").empty());
}

BOOST_AUTO_TEST_CASE(every_rule_respects_its_bound) {
    // A long run of one token alphabet gives at most spans within each rule's bound.
    auto text = "ghp_" + random_text(5000, alnum) + " sk-" + random_text(5000, alnum);
    for (const auto& h : all().scan(text)) BOOST_TEST(h.end - h.begin <= all().max_match_bytes());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace detection_detectors_test
