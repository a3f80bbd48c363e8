// The `auth:` section: sign-in's settings read, checked with the line named, and printed with the
// client secret masked.
#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace config_sections_auth_test {

using namespace gateway::config;

namespace {

const std::string upstream = "upstreams:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\n";

std::string with_oidc(const std::string& lines) {
    return upstream + "auth:\n  oidc:\n" + lines;
}

const std::string valid = R"(    issuer: https://login.example.com/realms/eng
    client_id: contextgate
    client_secret: s3cret-value
    redirect_url: https://gateway.example.com/auth/callback
    roles_claim: groups
    roles: {platform-admins: admin, eng-leads: team_admin}
    team_claim: team
    default_role: viewer
)";

std::string error_of(const std::string& yaml) {
    auto loaded = load_string(yaml, "test.yaml");
    BOOST_TEST(!loaded);
    return loaded.error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(auth_config)

BOOST_AUTO_TEST_CASE(sign_in_settings_load_and_print_with_the_secret_masked) {
    auto loaded = load_string(with_oidc(valid) + "  session_idle: 2h\n", "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& a = loaded.value->auth;
    BOOST_TEST(a.oidc.issuer == "https://login.example.com/realms/eng");
    BOOST_TEST(a.oidc.roles.size() == 2u);
    BOOST_TEST(a.oidc.roles[1].second == "team_admin");
    BOOST_TEST(a.oidc.default_role == "viewer");
    BOOST_TEST((a.oidc.scopes == std::vector<std::string>{"openid", "email", "profile"}));
    BOOST_TEST(a.session_idle.count() == 7'200'000);
    BOOST_TEST(a.session_absolute.count() == 7 * 86'400'000);
    auto printed = to_yaml(*loaded.value);
    BOOST_TEST(printed.find("client_secret: \"***\"") != std::string::npos);
    BOOST_TEST(printed.find("s3cret-value") == std::string::npos);
    // Without auth.oidc sign-in is off, and what check-config prints then loads again.
    auto off = load_string(upstream, "test.yaml");
    BOOST_TEST(off.value->auth.oidc.issuer.empty());
    auto again = load_string(to_yaml(*off.value), "effective.yaml");
    BOOST_TEST(static_cast<bool>(again), again.error);
    // openid is always among the scopes asked for.
    auto scoped = load_string(with_oidc(valid + "    scopes: [email, groups]\n"), "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(scoped), scoped.error);
    BOOST_TEST(
        (scoped.value->auth.oidc.scopes == std::vector<std::string>{"openid", "email", "groups"}));
}

BOOST_AUTO_TEST_CASE(sign_in_mistakes_name_the_line) {
    auto replaced = [](std::string from, std::string to) {
        auto text = valid;
        text.replace(text.find(from), from.size(), to);
        return with_oidc(text);
    };
    BOOST_TEST(error_of(replaced("https://login", "http://login")) ==
               "test.yaml:6: `auth.oidc.issuer` must be an https:// URL (http:// only on "
               "loopback), got `http://login.example.com/realms/eng`");
    // A provider on this machine (tests) may speak plain HTTP.
    BOOST_TEST(static_cast<bool>(
        load_string(replaced("https://login.example.com", "http://127.0.0.1:9000"), "t.yaml")));
    BOOST_TEST(
        error_of(replaced("/auth/callback", "/callback"))
            .find("test.yaml:9: `auth.oidc.redirect_url` must be the gateway's address followed "
                  "by /auth/callback") == 0);
    BOOST_TEST(error_of(replaced("team_admin}", "superuser}")) ==
               "test.yaml:11: `auth.oidc.roles`: `superuser` is no role: admin, team_admin, "
               "member or viewer");
    BOOST_TEST(error_of(replaced("default_role: viewer", "default_role: root"))
                   .find("test.yaml:13: `auth.oidc.default_role`: `root` is no role") == 0);
    BOOST_TEST(error_of(replaced("    roles_claim: groups\n", ""))
                   .find("`auth.oidc.roles` maps the values of `roles_claim`") !=
               std::string::npos);
    BOOST_TEST(error_of(replaced("    client_id: contextgate\n", ""))
                   .find("`auth.oidc` needs `client_id`") != std::string::npos);
    BOOST_TEST(error_of(with_oidc(valid + "    client: x\n")).find("unknown key `client`") !=
               std::string::npos);
    BOOST_TEST(error_of(upstream + "auth:\n  session_idle: 0s\n").find("session_idle") !=
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace config_sections_auth_test
