#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

namespace config_sections_teams_test {

using namespace gateway::config;

namespace {

const std::string upstream = "upstreams:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\n";

std::string error_of(const std::string& yaml) {
    auto loaded = load_string(yaml, "test.yaml");
    BOOST_TEST(!loaded);
    return loaded.error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sections_teams)

BOOST_AUTO_TEST_CASE(declared_teams_and_their_keys_load_and_print) {
    auto loaded = load_string(upstream + R"(teams:
  - {name: platform, budget: {usd: 500, period: week}, models: ["gpt-*"]}
  - name: data
admin:
  keys:
    - {name: ci, key: sk-0123456789abcdef, team: platform}
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& c = *loaded.value;
    BOOST_TEST_REQUIRE(c.teams.size() == 2u);
    BOOST_TEST(c.teams[0].budget_usd_nano == 500'000'000'000u);
    BOOST_TEST((c.teams[0].budget_period == budget_period::week));
    BOOST_TEST(c.teams[0].models.at(0) == "gpt-*");
    BOOST_TEST(c.teams[1].models.at(0) == "*");  // absent: every model
    BOOST_TEST(c.admin.keys.at(0).team == "platform");
    auto printed = to_yaml(c);
    BOOST_TEST(printed.find("  - name: \"platform\"\n    budget: {usd: 500") != std::string::npos,
               printed);
    BOOST_TEST(printed.find("team: \"platform\"") != std::string::npos, printed);
}

BOOST_AUTO_TEST_CASE(a_bad_team_is_refused_with_its_line) {
    auto dup = error_of(upstream + "teams:\n  - name: a\n  - name: a\n");
    BOOST_TEST(dup.find("test.yaml:6") != std::string::npos, dup);
    BOOST_TEST(dup.find("duplicate team name `a`") != std::string::npos, dup);
    auto name = error_of(upstream + "teams:\n  - name: \"two words\"\n");
    BOOST_TEST(name.find("letters, digits") != std::string::npos, name);
    auto budget = error_of(upstream + "teams:\n  - {name: a, budget: {usd: lots}}\n");
    BOOST_TEST(budget.find("budget.usd") != std::string::npos, budget);
    auto tokens = error_of(upstream + "teams:\n  - {name: a, budget: {tokens: 5}}\n");
    BOOST_TEST(tokens.find("tokens") != std::string::npos, tokens);
    auto unnamed = error_of(upstream + "teams:\n  - {models: [\"*\"]}\n");
    BOOST_TEST(unnamed.find("`name` is required") != std::string::npos, unnamed);
}

BOOST_AUTO_TEST_CASE(a_declared_keys_team_must_be_declared) {
    auto error = error_of(upstream + R"(teams:
  - name: platform
admin:
  keys:
    - {name: ci, key: sk-0123456789abcdef, team: platfrom}
)");
    BOOST_TEST(error.find("test.yaml:8") != std::string::npos, error);
    BOOST_TEST(error.find("no team in `teams` is named `platfrom`") != std::string::npos, error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace config_sections_teams_test
