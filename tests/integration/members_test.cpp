// The console's Members page on the server: GET /admin/users lists a team admin's team and the
// newcomers (members and viewers of no team) they may take in; PATCH /admin/users/{id} lets a
// team admin take a newcomer into their own team, and nothing wider; an admin sets any role and
// team. Each change is in the audit log with its author and the team it concerns.
#include "tests/integration/harness.hpp"

#include "gateway/clock.hpp"
#include "gateway/config/config.hpp"
#include "gateway/io/offload.hpp"
#include "gateway/store/sqlite_store.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>

namespace integration_members_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
namespace store = gateway::store;

namespace {

// A signed-in person: a user in the store and a session whose cookie the tests send.
struct person {
    std::string id;
    std::string cookie;
    std::string csrf;
};

// Teams red and blue; alice (admin), tom (red's team admin), mary (member of red), bob (member
// of blue), nora (a member of no team: a newcomer) and zed (a team admin of no team).
struct members_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;
    std::map<std::string, person> people;

    members_gateway() {
        auto c = make_config(fake);
        c.admin.api_key = "admin-key-0123456789";
        for (const char* name : {"red", "blue"}) {
            config::team_config t;
            t.name = name;
            c.teams.push_back(t);
        }
        // The people sign in before the gateway starts: their users and sessions go straight
        // into its store.
        {
            auto opened = store::sqlite_store::open(c.context.data_dir + "/contextgate.db");
            BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
            auto& db = **opened.value;
            auto now = gateway::now_ms();
            for (auto [name, role, team] : {std::tuple{"alice", "admin", ""},
                                            {"tom", "team_admin", "red"},
                                            {"mary", "member", "red"},
                                            {"bob", "member", "blue"},
                                            {"nora", "member", ""},
                                            {"zed", "team_admin", ""}}) {
                std::string n = name;
                store::user_sign_in who{
                    "https://idp.test", "sub-" + n, n + "@example.com", n, role, team, "member"};
                auto user = gateway::io::run_blocking(db.sign_in_user(who));
                person p{user.id, "session-" + n + "-0123456789abcdef", "csrf-" + n};
                gateway::io::run_blocking(db.start_user_session(
                    {config::key_digest(p.cookie), user.id, p.csrf, now, now, now + 3'600'000}));
                people[n] = p;
            }
        }
        gw.emplace(c);
    }

    response as(const std::string& name, std::string_view method, const std::string& path,
                const std::string& body = "") {
        const auto& p = people.at(name);
        std::string headers = "Cookie: contextgate_session=" + p.cookie + "\r\n";
        if (method != "GET")
            headers += "X-CSRF-Token: " + p.csrf + "\r\nContent-Type: application/json\r\n";
        client c(gw->port());
        return c.request(make_request(method, path, body, headers));
    }

    // The names of the users `name` sees in GET /admin/users.
    std::set<std::string> users_seen_by(const std::string& name) {
        auto r = as(name, "GET", "/admin/users");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        auto listed = json::parse(r.body);
        std::set<std::string> out;
        for (const auto& u : listed.at("data").as_array())
            out.insert(std::string(u.at("name").as_string()));
        return out;
    }

    // The user.update records `name` reads in the audit log.
    json::array user_updates_seen_by(const std::string& name) {
        auto r = as(name, "GET", "/admin/audit?action=user.update");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        return json::parse(r.body).at("data").as_array();
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(members)

BOOST_AUTO_TEST_CASE(a_team_admin_sees_their_team_and_the_newcomers_they_may_take_in) {
    members_gateway g;
    BOOST_TEST((g.users_seen_by("alice") ==
                std::set<std::string>{"alice", "tom", "mary", "bob", "nora", "zed"}));
    // Not bob (blue), nor alice or zed: of no team, but not theirs to take.
    BOOST_TEST((g.users_seen_by("tom") == std::set<std::string>{"tom", "mary", "nora"}));
    // A team admin of no team has no team to see, nor to take anyone into.
    BOOST_TEST(g.users_seen_by("zed").empty());
}

BOOST_AUTO_TEST_CASE(a_team_admin_takes_a_newcomer_into_their_team_and_nothing_wider) {
    members_gateway g;
    const auto nora = "/admin/users/" + g.people["nora"].id;
    // Into another team, without naming a team, or with a role wider than member: refused.
    BOOST_TEST(g.as("tom", "PATCH", nora, R"({"team":"blue"})").status == 403u);
    BOOST_TEST(g.as("tom", "PATCH", nora, R"({"role":"viewer"})").status == 403u);
    BOOST_TEST(g.as("tom", "PATCH", nora, R"({"team":"red","role":"team_admin"})").status == 403u);
    // Nor a team admin of no team, nor another team's member.
    BOOST_TEST(
        g.as("tom", "PATCH", "/admin/users/" + g.people["zed"].id, R"({"team":"red"})").status ==
        403u);
    BOOST_TEST(
        g.as("tom", "PATCH", "/admin/users/" + g.people["bob"].id, R"({"team":"red"})").status ==
        403u);
    BOOST_TEST(g.user_updates_seen_by("alice").empty());

    auto taken = g.as("tom", "PATCH", nora, R"({"team":"red","role":"viewer"})");
    BOOST_TEST_REQUIRE(taken.status == 200u, taken.body);
    auto user = json::parse(taken.body);
    BOOST_TEST(user.at("team").as_string() == "red");
    BOOST_TEST(user.at("role").as_string() == "viewer");
    // From then on she is one of red's: tom sets her role as for any member of his.
    BOOST_TEST(g.as("tom", "PATCH", nora, R"({"role":"member"})").status == 200u);
    BOOST_TEST(g.as("tom", "PATCH", nora, R"({"team":null})").status == 403u);

    // Tom reads both changes in red's audit log, with him as their author.
    auto records = g.user_updates_seen_by("tom");
    BOOST_TEST_REQUIRE(records.size() == 2u);
    const auto& first = records.back().as_object();  // newest first
    BOOST_TEST(first.at("actor").as_string() == g.people["tom"].id);
    BOOST_TEST(first.at("actor_role").as_string() == "team_admin");
    BOOST_TEST(first.at("target").as_string() == g.people["nora"].id);
    BOOST_TEST(first.at("team").as_string() == "red");
    BOOST_TEST(first.at("detail").at("team").as_string() == "red");
    BOOST_TEST(first.at("detail").at("role").as_string() == "viewer");
}

BOOST_AUTO_TEST_CASE(an_admin_sets_any_role_and_team) {
    members_gateway g;
    const auto bob = "/admin/users/" + g.people["bob"].id;
    auto moved = g.as("alice", "PATCH", bob, R"({"team":"red","role":"team_admin"})");
    BOOST_TEST_REQUIRE(moved.status == 200u, moved.body);
    BOOST_TEST(json::parse(moved.body).at("role").as_string() == "team_admin");
    auto teamless = g.as("alice", "PATCH", bob, R"({"team":null,"role":"admin"})");
    BOOST_TEST_REQUIRE(teamless.status == 200u, teamless.body);
    BOOST_TEST(json::parse(teamless.body).at("team").is_null());
    BOOST_TEST(g.as("alice", "PATCH", bob, R"({"team":"green"})").status == 400u);
    BOOST_TEST(g.as("alice", "PATCH", bob, R"({"role":"owner"})").status == 400u);
    auto records = g.user_updates_seen_by("alice");
    BOOST_TEST_REQUIRE(records.size() == 2u);
    BOOST_TEST(records.front().at("actor").as_string() == g.people["alice"].id);
    BOOST_TEST(records.front().at("target").as_string() == g.people["bob"].id);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_members_test
