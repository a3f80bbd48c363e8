// What sign-in decides without the network: where the browser may be sent back to, which role
// and team the claims give, the session cookie and the CSRF rule.
#include "gateway/auth/sign_in.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/test/unit_test.hpp>

namespace auth_sign_in_test {

namespace json = boost::json;
namespace bhttp = boost::beast::http;
using namespace gateway::auth;

BOOST_AUTO_TEST_SUITE(sign_in_rules)

BOOST_AUTO_TEST_CASE(only_a_path_on_this_gateway_is_returned_to) {
    BOOST_TEST(safe_return("/console/keys?x=1") == "/console/keys?x=1");
    for (std::string_view elsewhere : {"https://evil.test/", "//evil.test/", "/\\evil.test", "",
                                       "console", "/console\r\nSet-Cookie: x", "/a b"})
        BOOST_TEST(safe_return(elsewhere) == "/console/", elsewhere);
}

BOOST_AUTO_TEST_CASE(the_widest_mapped_role_and_the_team_claim) {
    gateway::config::oidc_config c;
    c.roles_claim = "groups";
    c.roles = {{"eng", "member"}, {"leads", "team_admin"}, {"ops", "admin"}};
    c.team_claim = "team";
    json::object claims{{"groups", json::array{"eng", "leads", "unmapped"}}, {"team", "ml"}};
    BOOST_TEST(*role_from_claims(claims, c) == "team_admin");
    claims["groups"] = "ops";  // a single value as a string
    BOOST_TEST(*role_from_claims(claims, c) == "admin");
    claims["groups"] = json::array{"unmapped"};
    BOOST_TEST(!role_from_claims(claims, c));  // nothing maps: the stored role stays
    BOOST_TEST(*team_from_claims(claims, c) == "ml");
    claims.erase("team");
    BOOST_TEST(!team_from_claims(claims, c));
    c.team_claim.clear();
    claims["team"] = "ml";
    BOOST_TEST(!team_from_claims(claims, c));  // no team claim configured: admins set teams
}

BOOST_AUTO_TEST_CASE(a_claim_is_found_by_its_dotted_path_or_its_whole_name) {
    gateway::config::oidc_config c;
    c.roles = {{"eng", "member"}, {"ops", "admin"}, {"leads", "team_admin"}};
    // Keycloak's realm roles and a client's roles, nested.
    json::object claims{
        {"realm_access", json::object{{"roles", json::array{"offline_access", "eng"}}}},
        {"resource_access",
         json::object{{"contextgate", json::object{{"roles", json::array{"ops"}}}}}},
        {"https://example.com/groups", json::array{"leads"}},
        {"org", json::object{{"team", "ml"}, {"unit", json::array{"x"}}}}};
    c.roles_claim = "realm_access.roles";
    BOOST_TEST(*role_from_claims(claims, c) == "member");
    c.roles_claim = "resource_access.contextgate.roles";
    BOOST_TEST(*role_from_claims(claims, c) == "admin");
    // A claim named by a URL, dots and all: the whole name first.
    c.roles_claim = "https://example.com/groups";
    BOOST_TEST(*role_from_claims(claims, c) == "team_admin");
    c.team_claim = "org.team";
    BOOST_TEST(*team_from_claims(claims, c) == "ml");
    // A path that leads nowhere, or through a value that is no object, finds nothing.
    for (std::string_view nowhere : {"realm_access.groups", "realm_access.roles.eng",
                                     "resource_access.other.roles", "org.unit.x", "org.", ".org"}) {
        c.roles_claim = nowhere;
        BOOST_TEST(!role_from_claims(claims, c), nowhere);
    }
    // A whole name that is there wins over the path its dots would spell.
    claims["org.team"] = "platform";
    BOOST_TEST(*team_from_claims(claims, c) == "platform");
}

BOOST_AUTO_TEST_CASE(the_session_cookie_is_found_among_others) {
    bhttp::request_header<> head;
    head.insert(bhttp::field::cookie, "theme=dark; contextgate_session=abc123");
    head.insert(bhttp::field::cookie, "other=1");
    BOOST_TEST(cookie_value(head, session_cookie) == "abc123");
    BOOST_TEST(cookie_value(head, "other") == "1");
    BOOST_TEST(cookie_value(head, "contextgate") == "");
}

BOOST_AUTO_TEST_CASE(a_change_with_a_session_needs_its_csrf_token) {
    principal user;
    user.from = principal::kind::session;
    user.csrf = "token-1";
    principal automation;
    bhttp::request_header<> head;
    head.method(bhttp::verb::post);
    BOOST_TEST(!csrf_satisfied(head, &user));
    BOOST_TEST(csrf_satisfied(head, &automation));  // a bearer key is no cookie a page can send
    BOOST_TEST(csrf_satisfied(head, nullptr));
    head.set(csrf_header, "token-2");
    BOOST_TEST(!csrf_satisfied(head, &user));
    head.set(csrf_header, "token-1");
    BOOST_TEST(csrf_satisfied(head, &user));
    head.erase(csrf_header);
    head.method(bhttp::verb::get);
    BOOST_TEST(csrf_satisfied(head, &user));
    for (auto verb : {bhttp::verb::put, bhttp::verb::patch, bhttp::verb::delete_}) {
        head.method(verb);
        BOOST_TEST(!csrf_satisfied(head, &user));
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace auth_sign_in_test
