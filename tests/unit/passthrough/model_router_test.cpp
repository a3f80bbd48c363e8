#include "gateway/passthrough/model_router.hpp"

#include <boost/test/unit_test.hpp>

using namespace gateway::passthrough;

BOOST_AUTO_TEST_SUITE(model_routing)

BOOST_AUTO_TEST_CASE(model_is_read_without_touching_the_rest) {
    BOOST_TEST(*read_model(R"({"model":"gpt-4o","messages":[]})") == "gpt-4o");
    BOOST_TEST(
        *read_model(R"({"messages":[{"model":"inner"}],"x":{"model":"nested"},"model":"outer"})") ==
        "outer");
    BOOST_TEST(*read_model("  {\n \"stream\" : true , \"model\" : \"caf\\u00e9\\n\"}") ==
               "caf\xC3\xA9\n");
    // Found before the syntax error that follows: the parser stops early by design.
    BOOST_TEST(*read_model(R"({"model":"m", broken)") == "m");
    BOOST_TEST(!read_model(R"({"model":42})"));
    BOOST_TEST(!read_model(R"({"model":{"id":"x"}})"));
    BOOST_TEST(!read_model(R"(["model","x"])"));
    BOOST_TEST(!read_model("not json"));
    BOOST_TEST(!read_model(""));
    BOOST_TEST(!read_model(R"({"messages":[]})"));
    std::string deep(10'000, '[');
    BOOST_TEST(!read_model("{\"a\":" + deep));
}

BOOST_AUTO_TEST_CASE(first_matching_upstream_wins_and_the_first_is_the_default) {
    std::vector<gateway::config::upstream_config> ups(3);
    ups[0].models = {"gpt-*", "o?-*"};
    ups[1].models = {"claude-*", "gpt-4o-special"};
    ups[2].models = {"*"};
    model_router router(ups);
    BOOST_TEST(router.route("gpt-4o") == 0u);
    BOOST_TEST(router.route("gpt-4o-special") == 0u);
    BOOST_TEST(router.route("claude-3-opus") == 1u);
    BOOST_TEST(router.route("llama") == 2u);
    BOOST_TEST(router.route(std::nullopt) == 0u);
    ups.pop_back();
    model_router no_catch_all(ups);
    BOOST_TEST(no_catch_all.route("llama") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
