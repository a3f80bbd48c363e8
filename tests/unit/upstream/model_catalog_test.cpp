#include "gateway/upstream/model_catalog.hpp"

#include <boost/test/unit_test.hpp>

namespace upstream_model_catalog_test {

namespace config = gateway::config;
namespace providers = gateway::providers;
using gateway::upstream::model_catalog;

namespace {

std::vector<std::string> ids(const model_catalog::models& models) {
    std::vector<std::string> out;
    for (const auto& m : models) out.push_back(m.id);
    return out;
}

model_catalog::models listed(std::vector<std::string> names) {
    model_catalog::models out;
    for (auto& n : names) {
        providers::listed_model m;
        m.id = std::move(n);
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_model_catalog)

BOOST_AUTO_TEST_CASE(a_model_is_served_when_a_route_or_a_glob_takes_it) {
    std::vector<config::upstream_config> ups(2);
    ups[0].models = {"gpt-*"};
    ups[1].models.clear();  // only a route's target
    std::vector<config::route_config> routes(1);
    routes[0].model = "team-*";
    model_catalog catalog(ups, routes);
    BOOST_TEST(catalog.serves("gpt-4o"));
    BOOST_TEST(catalog.serves("team-a"));
    BOOST_TEST(!catalog.serves("claude"));
    ups[1].models = {"*"};
    BOOST_TEST(catalog.serves("claude"));  // a catch-all takes every model
}

BOOST_AUTO_TEST_CASE(who_asks_an_upstream_for_its_list) {
    std::vector<config::upstream_config> ups(4);
    ups[0].models = {"gpt-*"};  // forward, no key: the client's list
    ups[1].models = {"gpt-*"};
    ups[1].api_key = "sk";       // the gateway's
    ups[2].models = {"gpt-4o"};  // names only: not asked
    ups[3].models = {"*"};
    ups[3].model_list_ttl = std::chrono::milliseconds(0);  // not asked
    model_catalog catalog(ups, {});
    BOOST_TEST((catalog.source_of(0) == model_catalog::source::client));
    BOOST_TEST((catalog.source_of(1) == model_catalog::source::gateway));
    BOOST_TEST((catalog.source_of(2) == model_catalog::source::none));
    BOOST_TEST((catalog.source_of(3) == model_catalog::source::none));
}

BOOST_AUTO_TEST_CASE(the_listing_is_routes_names_and_lists_cut_by_globs_and_the_key) {
    std::vector<config::upstream_config> ups(2);
    ups[0].name = "openai";
    ups[0].models = {"gpt-*"};
    ups[0].model_map = {{"gpt-fast", "gpt-4o-mini"}, {"other", "x"}};
    ups[1].name = "claude";
    ups[1].models = {"claude-sonnet-4-5", "claude-*"};
    std::vector<config::route_config> routes(2);
    routes[0].model = "smart";
    routes[1].model = "team-*";
    model_catalog catalog(ups, routes);
    model_catalog::lists lists{listed({"gpt-4o", "dall-e-3", "gpt-fast"}),
                               listed({"claude-sonnet-4-5", "claude-opus-4-1"})};
    std::vector<std::string> all{"smart", "gpt-fast", "gpt-4o", "claude-sonnet-4-5",
                                 "claude-opus-4-1"};
    BOOST_TEST(ids(catalog.merge(lists, {})) == all, boost::test_tools::per_element());
    BOOST_TEST(catalog.merge(lists, {})[2].owned_by == "openai");
    std::vector<std::string> keyed{"smart", "claude-sonnet-4-5", "claude-opus-4-1"};
    BOOST_TEST(ids(catalog.merge(lists, {"claude-*", "smart"})) == keyed,
               boost::test_tools::per_element());
    // Without the lists: the names the configuration gives.
    std::vector<std::string> named{"smart", "gpt-fast", "claude-sonnet-4-5"};
    BOOST_TEST(ids(catalog.merge(model_catalog::lists(2), {})) == named,
               boost::test_tools::per_element());
    auto known = catalog.known_names();
    BOOST_TEST((std::find(known.begin(), known.end(), "smart") != known.end()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_model_catalog_test
