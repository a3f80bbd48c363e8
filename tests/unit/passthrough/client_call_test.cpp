#include "gateway/passthrough/client_call.hpp"

#include <boost/test/unit_test.hpp>

namespace passthrough_client_call_test {

namespace providers = gateway::providers;
using gateway::config::provider_kind;
using gateway::passthrough::classify;
using gateway::passthrough::client_api;
using gateway::passthrough::ingress_of;
using verb = boost::beast::http::verb;

BOOST_AUTO_TEST_SUITE(passthrough_client_call)

BOOST_AUTO_TEST_CASE(each_model_api_is_known_by_its_post_and_path) {
    struct row {
        std::string_view target;
        client_api api;
        provider_kind dialect;
        const providers::ingress* ingress;
    };
    const row rows[] = {
        {"/v1/chat/completions", client_api::chat_completions, provider_kind::openai,
         &providers::chat_completions()},
        {"/v1/responses?x=1", client_api::responses, provider_kind::openai,
         &providers::responses()},
        {"/v1/messages", client_api::messages, provider_kind::anthropic, &providers::messages()},
        {"/v1/messages/count_tokens", client_api::messages_count_tokens, provider_kind::anthropic,
         nullptr},
        {"/v1beta/models/gemini-2.5-pro:generateContent", client_api::generate_content,
         provider_kind::gemini, &providers::generate_content()},
        {"/v1beta/models/g:streamGenerateContent?alt=sse", client_api::generate_content,
         provider_kind::gemini, &providers::generate_content()},
        {"/v1/models/g:generateContent", client_api::generate_content, provider_kind::gemini,
         &providers::generate_content()},
        {"/v1beta/models/g:countTokens", client_api::gemini_count_tokens, provider_kind::gemini,
         nullptr},
        {"/v1/embeddings", client_api::other, provider_kind::openai, nullptr},
        {"/v1/messages/batches", client_api::other, provider_kind::anthropic, nullptr},
        {"/v1beta/cachedContents", client_api::other, provider_kind::gemini, nullptr},
    };
    for (const auto& r : rows) {
        auto call = classify(verb::post, r.target, false);
        BOOST_TEST((call.api == r.api), r.target);
        BOOST_TEST((call.dialect == r.dialect), r.target);
        BOOST_TEST(ingress_of(call) == r.ingress, r.target);
        BOOST_TEST(call.model_call() == (r.ingress != nullptr), r.target);
    }
}

BOOST_AUTO_TEST_CASE(other_methods_and_upgrades_are_no_model_call) {
    BOOST_TEST((classify(verb::get, "/v1/chat/completions", false).api == client_api::other));
    BOOST_TEST((classify(verb::post, "/v1/responses", true).api == client_api::other));
    // OpenAI's GET /v1/models/{id} is not Gemini's stable API, whatever the id holds.
    auto listing = classify(verb::get, "/v1/models/ft:gpt-4o:generateContent", false);
    BOOST_TEST((listing.dialect == provider_kind::openai));
    BOOST_TEST(!listing.gemini_stable);
    BOOST_TEST(listing.path_model.empty());
}

BOOST_AUTO_TEST_CASE(the_path_and_geminis_model_are_read_without_the_query) {
    auto call =
        classify(verb::post, "/v1beta/models/llama3:70b:streamGenerateContent?alt=sse", false);
    BOOST_TEST(call.path == "/v1beta/models/llama3:70b:streamGenerateContent");
    BOOST_TEST(call.path_model == "llama3:70b");  // split at the last colon
    BOOST_TEST(call.route == "/v1beta/models/{model}:streamGenerateContent");
    BOOST_TEST(call.operation == "generate_content");
    auto stable = classify(verb::post, "/v1/models/g:countTokens", false);
    BOOST_TEST(stable.gemini_stable);
    BOOST_TEST(stable.counts_tokens());
    BOOST_TEST(stable.path_model == "g");
    BOOST_TEST(stable.route == "/v1/models/{model}:countTokens");
    BOOST_TEST(classify(verb::post, "/v1/messages/count_tokens", false).counts_tokens());
    // Spans name the OpenAI APIs the gateway only forwards too.
    BOOST_TEST(classify(verb::post, "/v1/embeddings", false).operation == "embeddings");
    BOOST_TEST(classify(verb::post, "/v1/files", false).operation.empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_client_call_test
