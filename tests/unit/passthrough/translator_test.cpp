#include "gateway/passthrough/translator.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

namespace config = gateway::config;
namespace providers = gateway::providers;
namespace json = boost::json;
using gateway::passthrough::call_reading;
using gateway::passthrough::merged_models_json;

BOOST_AUTO_TEST_SUITE(passthrough_translator)

BOOST_AUTO_TEST_CASE(a_call_is_read_once_and_a_body_it_cannot_read_says_why) {
    namespace bhttp = boost::beast::http;
    gateway::http::request req{bhttp::verb::post, "/v1/chat/completions", 11};
    req.body() = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    call_reading reading(req, &providers::chat_completions());
    const auto* first = reading.request();
    BOOST_TEST_REQUIRE(first != nullptr);
    BOOST_TEST(first->model == "m");
    // Read once: a body changed afterwards (as a forwarded target hears it) is not read again.
    req.body() = R"({"model":"other","messages":[]})";
    BOOST_TEST(reading.request() == first);
    BOOST_TEST(reading.request()->model == "m");

    gateway::http::request broken{bhttp::verb::post, "/v1/chat/completions", 11};
    broken.body() = R"({"model":"m","messages":"not a list"})";
    call_reading unread(broken, &providers::chat_completions());
    BOOST_TEST(unread.request() == nullptr);
    BOOST_TEST(!unread.failure().message.empty());
    // A Gemini path that names no model cannot be read either.
    gateway::http::request nameless{bhttp::verb::post, "/v1beta/models", 11};
    nameless.body() = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
    call_reading gemini(nameless, &providers::generate_content());
    BOOST_TEST(gemini.request() == nullptr);
    BOOST_TEST(gemini.failure().message == "The request's path names no model.");
    // No model call: nothing to read.
    call_reading none(req, nullptr);
    BOOST_TEST(none.request() == nullptr);
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
