#include "gateway/auth/roles.hpp"

#include <boost/test/unit_test.hpp>

namespace auth_roles_test {

using namespace gateway::auth;

namespace {

principal person(role as, std::string team = "red", std::string id = "user_1") {
    principal p;
    p.from = principal::kind::session;
    p.as = as;
    p.user_id = std::move(id);
    p.team = std::move(team);
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(roles_suite)

BOOST_AUTO_TEST_CASE(an_admin_may_do_everything_even_on_a_route_without_a_rule) {
    principal automation;
    BOOST_TEST(admin_refusal(automation, "DELETE", "/admin/teams/{name}", owner{"x", ""}).empty());
    BOOST_TEST(admin_refusal(automation, "POST", "/admin/something-new", std::nullopt).empty());
}

BOOST_AUTO_TEST_CASE(a_route_without_a_rule_is_the_admins_alone) {
    auto why = admin_refusal(person(role::team_admin), "POST", "/admin/something-new", {});
    BOOST_TEST(why.find("`team_admin`") != std::string::npos, why);
}

BOOST_AUTO_TEST_CASE(a_team_admin_reaches_their_own_teams_objects_only) {
    auto lead = person(role::team_admin);
    BOOST_TEST(admin_refusal(lead, "PATCH", "/admin/keys/{id}", owner{"red", ""}).empty());
    BOOST_TEST(admin_refusal(lead, "PATCH", "/admin/keys/{id}", owner{"red", "user_9"}).empty());
    auto why = admin_refusal(lead, "PATCH", "/admin/keys/{id}", owner{"blue", ""});
    BOOST_TEST(why.find("team `red`") != std::string::npos, why);
    BOOST_TEST(!admin_refusal(lead, "PATCH", "/admin/keys/{id}", owner{"", ""}).empty());
    // One of no team reaches no team's objects, the team-less ones included.
    BOOST_TEST(
        !admin_refusal(person(role::team_admin, ""), "GET", "/admin/keys/{id}", owner{"", ""})
             .empty());
    BOOST_TEST(!admin_refusal(lead, "POST", "/admin/teams", std::nullopt).empty());
}

BOOST_AUTO_TEST_CASE(a_member_reaches_their_own_objects_and_a_viewer_only_reads_them) {
    auto mary = person(role::member, "red", "user_mary");
    BOOST_TEST(admin_refusal(mary, "DELETE", "/admin/keys/{id}", owner{"", "user_mary"}).empty());
    BOOST_TEST(!admin_refusal(mary, "DELETE", "/admin/keys/{id}", owner{"red", ""}).empty());
    BOOST_TEST(!admin_refusal(mary, "GET", "/admin/users", std::nullopt).empty());
    auto victor = person(role::viewer, "red", "user_victor");
    BOOST_TEST(admin_refusal(victor, "GET", "/admin/keys/{id}", owner{"", "user_victor"}).empty());
    BOOST_TEST(!admin_refusal(victor, "POST", "/admin/keys", owner{"", "user_victor"}).empty());
}

BOOST_AUTO_TEST_CASE(the_context_api_is_read_only_for_a_viewer) {
    BOOST_TEST(context_refusal(person(role::viewer), "GET").empty());
    BOOST_TEST(context_refusal(person(role::viewer), "POST").find("viewer") != std::string::npos);
    BOOST_TEST(context_refusal(person(role::member), "POST").empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace auth_roles_test
