// Teams through the real gateway against the fake upstream: a team's model list and USD budget
// bound every key it owns (the budget one account its keys spend together), /admin/usage per
// team, /admin/teams, and the audit log that records each change with its author.
#include "tests/integration/harness.hpp"

#include "gateway/observability/log.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace integration_teams_test {

using namespace gateway::testing;
namespace config = gateway::config;
namespace json = boost::json;
namespace observability = gateway::observability;
using namespace std::chrono_literals;

namespace {

const std::string admin_header = "Authorization: Bearer admin-key-0123456789\r\n";

std::string secret_of(const std::string& name) {
    return "sk-team-" + name + "-0123456789";
}

config::virtual_key team_key(const std::string& name, const std::string& team) {
    config::virtual_key k;
    k.id = "cfg-" + name;
    k.name = name;
    k.digest = config::key_digest(secret_of(name));
    k.team = team;
    return k;
}

// budget-* models cost $1,000 per 1M tokens in and out: a token is $0.001. The red team may use
// budget-* models for $0.10 a month; its keys have no limits of their own.
struct teams_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;

    teams_gateway() {
        auto c = make_config(fake);
        c.admin.api_key = "admin-key-0123456789";
        config::team_config red;
        red.name = "red";
        red.models = {"budget-*"};
        red.budget_usd_nano = 100'000'000;
        c.teams.push_back(red);
        config::team_config blue;
        blue.name = "blue";
        c.teams.push_back(blue);
        c.admin.keys = {team_key("red-1", "red"), team_key("red-2", "red"),
                        team_key("blue-1", "blue")};
        config::price_entry p;
        p.model = "budget-*";
        p.rates.input = 1000.0;
        p.rates.output = 1000.0;
        c.pricing.overrides.push_back(p);
        gw.emplace(c);
    }

    // A chat request with `name`'s key; the fake reports 10 tokens in and 10 out ($0.02).
    response chat(const std::string& name, std::string_view model = "budget-model") {
        client c(gw->port());
        std::string body = R"({"model":")" + std::string(model) +
                           R"(","max_tokens":15,"messages":[{"role":"user","content":"hi"}]})";
        return c.request(make_request(
            "POST", "/v1/chat/completions", body,
            "Authorization: Bearer " + secret_of(name) +
                "\r\nContent-Type: application/json\r\n"
                "x-fake-usage: {\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}"
                "\r\n"));
    }

    response admin(std::string_view method, std::string_view target, std::string body = {}) {
        client c(gw->port());
        return c.request(make_request(
            method, target, body,
            admin_header + (body.empty() ? "" : "Content-Type: application/json\r\n")));
    }
};

// Settlement runs after the answer went out and before the access line is written: a test that
// needs a request settled waits for its line.
class settled_requests {
public:
    void wait(std::size_t n) {
        auto until = std::chrono::steady_clock::now() + 10s;
        while (seen_ < n && std::chrono::steady_clock::now() < until) {
            for (const auto& line : follower_.take().lines)
                if (line.find("/v1/chat/completions") != std::string::npos) ++seen_;
            if (seen_ < n) std::this_thread::sleep_for(2ms);
        }
        BOOST_TEST_REQUIRE(seen_ >= n);
    }
    std::size_t seen() const { return seen_; }

private:
    observability::access_follower follower_;
    std::size_t seen_ = 0;
};

std::string error_message(const response& r) {
    return std::string(json::parse(r.body).at("error").at("message").as_string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(teams)

BOOST_AUTO_TEST_CASE(a_teams_model_list_bounds_its_keys) {
    teams_gateway g;
    BOOST_TEST(g.chat("red-1", "budget-model").status == 200u);
    auto refused = g.chat("red-1", "gpt-4o");
    BOOST_TEST(refused.status == 403u, refused.body);
    BOOST_TEST(error_message(refused).find("team `red`") != std::string::npos, refused.body);
    // Another team's keys are not bound by it.
    BOOST_TEST(g.chat("blue-1", "gpt-4o").status == 200u);
}

BOOST_AUTO_TEST_CASE(a_teams_budget_is_spent_by_its_keys_together) {
    teams_gateway g;
    settled_requests settled;
    // $0.02 a request, $0.035 reserved for one: four fit in $0.10, the fifth would pass it.
    for (int i = 0; i < 4; ++i) {
        auto r = g.chat(i % 2 ? "red-2" : "red-1");
        BOOST_TEST_REQUIRE(r.status == 200u, r.body);
        settled.wait(settled.seen() + 1);
    }
    auto refused = g.chat("red-2");
    BOOST_TEST(refused.status == 429u, refused.body);
    auto message = error_message(refused);
    BOOST_TEST(message.find("Team `red`") != std::string::npos, message);
    BOOST_TEST(message.find("$0.1") != std::string::npos, message);
    BOOST_TEST(!refused.header("x-ratelimit-limit-usd").empty());
    // The blue team's key spends on its own account.
    BOOST_TEST(g.chat("blue-1").status == 200u);
    // /admin/teams shows what the team spent.
    auto teams = json::parse(g.admin("GET", "/admin/teams").body).at("data").as_array();
    for (const auto& t : teams)
        if (t.at("name").as_string() == "red") BOOST_TEST(t.at("spent_usd").as_double() == 0.08);
}

BOOST_AUTO_TEST_CASE(usage_is_reported_per_team) {
    teams_gateway g;
    settled_requests settled;
    BOOST_TEST(g.chat("red-1").status == 200u);
    BOOST_TEST(g.chat("red-2").status == 200u);
    BOOST_TEST(g.chat("blue-1").status == 200u);
    settled.wait(3);
    auto per_team = g.admin("GET", "/admin/usage?group_by=team");
    BOOST_TEST_REQUIRE(per_team.status == 200u, per_team.body);
    auto rows = json::parse(per_team.body).at("data").as_array();
    BOOST_TEST_REQUIRE(rows.size() == 2u, per_team.body);
    BOOST_TEST(rows[0].at("team").as_string() == "blue");
    BOOST_TEST(rows[0].at("requests").as_int64() == 1);
    BOOST_TEST(rows[1].at("team").as_string() == "red");
    BOOST_TEST(rows[1].at("requests").as_int64() == 2);
    BOOST_TEST(rows[1].at("usd").as_double() == 0.04);
    auto red_keys = json::parse(g.admin("GET", "/admin/usage?team=red&group_by=key").body);
    BOOST_TEST(red_keys.at("data").as_array().size() == 2u);
    auto bad = g.admin("GET", "/admin/usage?group_by=department");
    BOOST_TEST(bad.status == 400u);
    BOOST_TEST(bad.body.find("team") != std::string::npos, bad.body);
}

BOOST_AUTO_TEST_CASE(teams_are_made_changed_and_removed_and_declared_ones_stay) {
    teams_gateway g;
    auto made =
        g.admin("POST", "/admin/teams",
                R"({"name":"green","budget":{"usd":5,"period":"week"},"models":["gpt-*"]})");
    BOOST_TEST_REQUIRE(made.status == 201u, made.body);
    BOOST_TEST(json::parse(made.body).at("budget").at("period").as_string() == "week");
    BOOST_TEST(g.admin("POST", "/admin/teams", R"({"name":"green"})").status == 409u);
    BOOST_TEST(g.admin("POST", "/admin/teams", R"({"name":"bad name"})").status == 400u);
    BOOST_TEST(g.admin("POST", "/admin/teams", R"({"name":"x","budget":{"usd":-1}})").status ==
               400u);
    BOOST_TEST(g.admin("PATCH", "/admin/teams/red", R"({"models":["*"]})").status == 409u);
    BOOST_TEST(g.admin("DELETE", "/admin/teams/red").status == 409u);
    // A key of the new team is bound by its models; the team cannot go while it owns the key.
    auto key = g.admin("POST", "/admin/keys", R"({"name":"green-1","team":"green"})");
    BOOST_TEST_REQUIRE(key.status == 201u, key.body);
    BOOST_TEST(json::parse(key.body).at("team").as_string() == "green");
    BOOST_TEST(g.admin("POST", "/admin/keys", R"({"name":"nowhere","team":"purple"})").status ==
               400u);
    auto id = std::string(json::parse(key.body).at("id").as_string());
    BOOST_TEST(g.admin("PATCH", "/admin/keys/" + id, R"({"team":"blue"})").status == 400u);
    BOOST_TEST(g.admin("DELETE", "/admin/teams/green").status == 409u);
    BOOST_TEST(g.admin("DELETE", "/admin/keys/" + id).status == 200u);
    BOOST_TEST(g.admin("PATCH", "/admin/teams/green", R"({"models":["*"]})").status == 200u);
    BOOST_TEST(g.admin("DELETE", "/admin/teams/green").status == 200u);
    BOOST_TEST(g.admin("DELETE", "/admin/teams/green").status == 404u);
}

BOOST_AUTO_TEST_CASE(the_audit_log_records_each_change_with_its_author) {
    teams_gateway g;
    auto made = g.admin("POST", "/admin/keys", R"({"name":"ci","team":"red"})");
    BOOST_TEST_REQUIRE(made.status == 201u, made.body);
    auto id = std::string(json::parse(made.body).at("id").as_string());
    BOOST_TEST(g.admin("PATCH", "/admin/keys/" + id, R"({"rpm":7})").status == 200u);
    BOOST_TEST(g.admin("DELETE", "/admin/keys/" + id).status == 200u);
    BOOST_TEST(g.admin("POST", "/admin/teams", R"({"name":"green"})").status == 201u);
    // A refused change is no change.
    BOOST_TEST(g.admin("POST", "/admin/teams", R"({"name":"green"})").status == 409u);
    auto log = g.admin("GET", "/admin/audit");
    BOOST_TEST_REQUIRE(log.status == 200u, log.body);
    auto records = json::parse(log.body).at("data").as_array();
    BOOST_TEST_REQUIRE(records.size() == 4u, log.body);
    // Newest first.
    BOOST_TEST(records[0].at("action").as_string() == "team.create");
    BOOST_TEST(records[0].at("target").as_string() == "green");
    BOOST_TEST(records[1].at("action").as_string() == "key.revoke");
    BOOST_TEST(records[2].at("action").as_string() == "key.update");
    BOOST_TEST(records[2].at("detail").at("rpm").as_int64() == 7);
    BOOST_TEST(records[3].at("action").as_string() == "key.create");
    BOOST_TEST(records[3].at("target").as_string() == id);
    BOOST_TEST(records[3].at("team").as_string() == "red");
    for (const auto& r : records) {
        BOOST_TEST(r.at("actor").as_string() == "api-key");
        BOOST_TEST(r.at("actor_role").as_string() == "admin");
        BOOST_TEST(r.at("remote").as_string() == "127.0.0.1");
    }
    // The made key's secret is never on record.
    auto secret = std::string(json::parse(made.body).at("key").as_string());
    BOOST_TEST(log.body.find(secret) == std::string::npos);
    auto updates = g.admin("GET", "/admin/audit?action=key.update&target=" + id);
    BOOST_TEST(json::parse(updates.body).at("data").as_array().size() == 1u);
    BOOST_TEST(
        json::parse(g.admin("GET", "/admin/audit?limit=2").body).at("data").as_array().size() ==
        2u);
    BOOST_TEST(g.admin("GET", "/admin/audit?limit=0").status == 400u);
    BOOST_TEST(g.admin("GET", "/admin/audit?from=yesterday").status == 400u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_teams_test
