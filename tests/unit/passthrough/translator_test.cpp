#include "gateway/passthrough/translator.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

namespace config = gateway::config;
namespace providers = gateway::providers;
namespace json = boost::json;
using gateway::passthrough::merged_models_json;
using gateway::passthrough::model_call_api;

BOOST_AUTO_TEST_SUITE(passthrough_translator)

BOOST_AUTO_TEST_CASE(only_a_model_calls_post_is_translated_and_in_its_own_api) {
    using config::provider_kind;
    BOOST_TEST(model_call_api(provider_kind::openai, "/v1/chat/completions", true) ==
               &providers::chat_completions());
    BOOST_TEST(model_call_api(provider_kind::openai, "/v1/responses", true) ==
               &providers::responses());
    BOOST_TEST(model_call_api(provider_kind::anthropic, "/v1/messages", true) ==
               &providers::messages());
    for (auto path : {"/v1beta/models/g:generateContent", "/v1beta/models/g:streamGenerateContent"})
        BOOST_TEST(
            model_call_api(provider_kind::gemini, path, true) == &providers::generate_content(),
            path);
    // Not a model call, not a POST, or another dialect's path: nothing to translate with.
    BOOST_TEST(model_call_api(provider_kind::openai, "/v1/chat/completions", false) == nullptr);
    BOOST_TEST(model_call_api(provider_kind::openai, "/v1/embeddings", true) == nullptr);
    BOOST_TEST(model_call_api(provider_kind::anthropic, "/v1/chat/completions", true) == nullptr);
    BOOST_TEST(model_call_api(provider_kind::gemini, "/v1beta/models/g:countTokens", true) ==
               nullptr);
}

BOOST_AUTO_TEST_CASE(the_model_list_merges_what_upstreams_list_with_the_configured_names) {
    std::vector<config::upstream_config> ups(3);
    ups[0].name = "openai";
    ups[0].model_map = {{"fast", "gpt-4o-mini"}};
    ups[1].name = "claude";
    ups[1].provider = config::provider_kind::anthropic;
    ups[1].models = {"claude-sonnet-4-5", "claude-*"};
    ups[2].name = "gemini";
    ups[2].provider = config::provider_kind::gemini;
    ups[2].models = {"gemini-2.5-pro", "claude-sonnet-4-5"};
    std::vector<std::string> listed{
        R"({"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"}]})",
        "not json", R"({"data":[{"id":"gpt-4o"},{"no_id":1}]})"};
    auto merged = json::parse(merged_models_json(listed, ups));
    std::multiset<std::string> ids;
    for (const auto& m : merged.at("data").as_array())
        ids.insert(std::string(m.at("id").as_string()));
    // Each once; globs are no model names; an unreadable listing adds nothing.
    BOOST_TEST((ids == std::multiset<std::string>{"gpt-4o", "fast", "claude-sonnet-4-5",
                                                  "gemini-2.5-pro"}),
               boost::test_tools::per_element());
    BOOST_TEST(merged.at("object").as_string() == "list");
}

BOOST_AUTO_TEST_SUITE_END()
