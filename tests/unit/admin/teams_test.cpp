#include "gateway/admin/teams.hpp"

#include <boost/test/unit_test.hpp>

namespace admin_teams_test {

using namespace gateway;

namespace {

config::team_config team_named(std::string name, std::vector<std::string> models = {"*"}) {
    config::team_config t;
    t.name = std::move(name);
    t.models = std::move(models);
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(team_book_suite)

BOOST_AUTO_TEST_CASE(declared_teams_win_and_stay_read_only) {
    admin::team_book book({team_named("red")});
    BOOST_TEST(book.by_name("red")->declared);
    BOOST_TEST(!book.put({team_named("red", {"gpt-*"}), false, 1}));
    BOOST_TEST(!book.remove("red"));
    // A stored team of a declared team's name is not adopted over it.
    book.adopt({{team_named("red", {"gpt-*"}), 5}, {team_named("blue"), 6}});
    BOOST_TEST(book.by_name("red")->settings.models.front() == "*");
    BOOST_TEST(book.by_name("blue")->created_at == 6);
    BOOST_TEST(book.all().size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_reload_changes_the_declared_teams_and_keeps_the_made_ones) {
    admin::team_book book({team_named("red")});
    BOOST_TEST(book.put({team_named("green"), false, 1}));
    book.declare({team_named("blue")});
    BOOST_TEST(!book.by_name("red"));
    BOOST_TEST(book.by_name("blue")->declared);
    BOOST_TEST(book.by_name("green"));
    BOOST_TEST(book.remove("green"));
    BOOST_TEST(!book.by_name("green"));
}

BOOST_AUTO_TEST_CASE(a_teams_models_are_globs) {
    admin::team t{team_named("red", {"gpt-4o*", "claude-*"}), true, 0};
    BOOST_TEST(t.allows_model("gpt-4o-mini"));
    BOOST_TEST(t.allows_model("claude-sonnet-4-5"));
    BOOST_TEST(!t.allows_model("gemini-2.5-pro"));
    BOOST_TEST(admin::team_account("red") == "team:red");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace admin_teams_test
