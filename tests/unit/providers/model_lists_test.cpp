#include "gateway/providers/model_lists.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

namespace providers_model_lists_test {

namespace providers = gateway::providers;
namespace json = boost::json;
using providers::provider;

namespace {

std::vector<providers::listed_model> named(std::vector<std::string> ids) {
    std::vector<providers::listed_model> out;
    for (auto& id : ids) {
        providers::listed_model m;
        m.id = std::move(id);
        m.owned_by = "up";
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(providers_model_lists)

BOOST_AUTO_TEST_CASE(each_providers_pages_are_read_with_the_token_to_the_next) {
    std::vector<providers::listed_model> got;
    std::string next, error;
    BOOST_TEST(providers::read_model_page(
        provider::openai,
        R"({"object":"list","data":[{"id":"gpt-4o","object":"model","created":5,"owned_by":"x","extra":1},{"no_id":1}]})",
        got, next, error));
    BOOST_TEST_REQUIRE(got.size() == 1u);
    BOOST_TEST(got[0].owned_by == "x");
    BOOST_TEST(got[0].created == 5);
    BOOST_TEST(got[0].original.contains("extra"));  // kept for an OpenAI client
    BOOST_TEST(next.empty());

    got.clear();
    BOOST_TEST(providers::read_model_page(
        provider::anthropic,
        R"({"data":[{"type":"model","id":"claude-a","display_name":"Claude A","created_at":"2025-02-19T00:00:00Z"}],"has_more":true,"first_id":"claude-a","last_id":"claude-a"})",
        got, next, error));
    BOOST_TEST(got[0].display_name == "Claude A");
    BOOST_TEST(got[0].created == 1739923200);
    BOOST_TEST(next == "claude-a");
    BOOST_TEST(providers::model_list_target(provider::anthropic, next) ==
               "/v1/models?limit=1000&after_id=claude-a");

    got.clear();
    BOOST_TEST(providers::read_model_page(
        provider::gemini,
        R"({"models":[{"name":"models/gemini-2.5-pro","displayName":"Gemini"}],"nextPageToken":"a+b="})",
        got, next, error));
    BOOST_TEST(got[0].id == "gemini-2.5-pro");
    BOOST_TEST(providers::model_list_target(provider::gemini, next) ==
               "/models?pageSize=1000&pageToken=a%2Bb%3D");
    BOOST_TEST(providers::model_list_target(provider::openai, "") == "/models");

    BOOST_TEST(!providers::read_model_page(provider::openai, "<html>", got, next, error));
    BOOST_TEST(!error.empty());
}

BOOST_AUTO_TEST_CASE(a_listing_is_answered_in_the_clients_shape_and_pages) {
    auto models = named({"a", "b", "c"});
    auto openai = json::parse(providers::model_list_answer(provider::openai, models, "/v1/models"));
    BOOST_TEST(openai.at("data").as_array().size() == 3u);
    BOOST_TEST(openai.at("data").at(0).at("owned_by") == json::value("up"));

    auto page = json::parse(
        providers::model_list_answer(provider::anthropic, models, "/v1/models?limit=2"));
    BOOST_TEST(page.at("data").as_array().size() == 2u);
    BOOST_TEST(page.at("has_more") == json::value(true));
    BOOST_TEST(page.at("last_id") == json::value("b"));
    BOOST_TEST(page.at("data").at(0).at("created_at") == json::value("1970-01-01T00:00:00Z"));
    auto after = json::parse(
        providers::model_list_answer(provider::anthropic, models, "/v1/models?limit=2&after_id=b"));
    BOOST_TEST(after.at("data").as_array().size() == 1u);
    BOOST_TEST(after.at("has_more") == json::value(false));
    auto before = json::parse(providers::model_list_answer(provider::anthropic, models,
                                                           "/v1/models?limit=1&before_id=c"));
    BOOST_TEST(before.at("first_id") == json::value("b"));
    BOOST_TEST(before.at("has_more") == json::value(true));

    auto gemini = json::parse(
        providers::model_list_answer(provider::gemini, models, "/v1beta/models?pageSize=2"));
    BOOST_TEST(gemini.at("models").at(1).at("name") == json::value("models/b"));
    BOOST_TEST(gemini.at("nextPageToken") == json::value("2"));
}

// A priced model's entry has one member more, the same in each dialect; an upstream's own
// `pricing` (OpenRouter's) is relayed as it is, its `contextgate_price` replaced by ours.
BOOST_AUTO_TEST_CASE(a_priced_entry_carries_its_price_in_each_shape) {
    gateway::config::price_entry price;
    price.rates.input = 1.25;
    price.rates.output = 10.0;
    price.rates.cache_read = 0.3125;
    price.long_context.above = 200'000;
    price.long_context.rates.input = 2.5;
    price.long_context.rates.output = 15.0;
    const std::string shown =
        R"({"unit":"usd_per_1m_tokens","input":1.25,"output":10,"cache_read":0.3125,)"
        R"("long_context":{"above":200000,"input":2.5,"output":15}})";
    BOOST_TEST(providers::price_json(price) == shown);

    auto models = named({"gemini-2.5-pro", "house-model"});
    models[0].price = &price;
    models[0].original = json::parse(R"({"id":"gemini-2.5-pro","pricing":{"prompt":"0.00000125"},)"
                                     R"("contextgate_price":"a gateway before this one"})")
                             .as_object();
    BOOST_TEST(
        providers::model_list_answer(provider::openai, models, "/v1/models") ==
        R"({"object":"list","data":[{"id":"gemini-2.5-pro","pricing":{"prompt":"0.00000125"},)"
        R"("contextgate_price":)" +
            shown + R"(},{"id":"house-model","object":"model","created":0,"owned_by":"up"}]})");
    auto anthropic = json::parse(providers::model_list_answer(provider::anthropic, models, ""));
    BOOST_TEST(anthropic.at("data").at(0).at("contextgate_price") == json::parse(shown));
    BOOST_TEST(!anthropic.at("data").at(1).as_object().contains("contextgate_price"));
    BOOST_TEST(anthropic.at("last_id") == json::value("house-model"));
    auto gemini = json::parse(providers::model_list_answer(provider::gemini, models, ""));
    BOOST_TEST(gemini.at("models").at(0).at("contextgate_price") == json::parse(shown));
    BOOST_TEST(!gemini.at("models").at(1).as_object().contains("contextgate_price"));
}

BOOST_AUTO_TEST_CASE(a_model_not_found_is_each_providers_404) {
    auto openai = json::parse(providers::model_not_found_body(provider::openai, "no"));
    BOOST_TEST(openai.at("error").at("code") == json::value("model_not_found"));
    BOOST_TEST(openai.at("error").at("param") == json::value("model"));
    auto anthropic = json::parse(providers::model_not_found_body(provider::anthropic, "no"));
    BOOST_TEST(anthropic.at("error").at("type") == json::value("not_found_error"));
    auto gemini = json::parse(providers::model_not_found_body(provider::gemini, "no"));
    BOOST_TEST(gemini.at("error").at("status") == json::value("NOT_FOUND"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace providers_model_lists_test
