#include "gateway/passthrough/translator.hpp"

#include <boost/test/unit_test.hpp>

namespace passthrough_translator_test {

namespace providers = gateway::providers;
using gateway::passthrough::call_reading;

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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace passthrough_translator_test
