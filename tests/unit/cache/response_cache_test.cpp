#include "gateway/cache/response_cache.hpp"
#include "gateway/cache/cache_key.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

using gateway::cache::memory_cache;
namespace cache = gateway::cache;
namespace providers = gateway::providers;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(response_cache_store)

BOOST_AUTO_TEST_CASE(entries_expire_and_the_least_recently_used_go_first) {
    auto now = memory_cache::clock::now();
    const std::string value(1000, 'v');
    // Room for two entries of ~1 KB each (key, value and bookkeeping), not three.
    memory_cache c(2 * (1000 + 1 + sizeof(void*) * 16) + 200);
    c.store("a", value, now + 10s);
    c.store("b", value, now + 10s);
    BOOST_TEST(c.find("a", now).has_value());  // a is now the most recently used
    c.store("c", value, now + 10s);            // b goes
    BOOST_TEST(c.find("a", now).has_value());
    BOOST_TEST(!c.find("b", now).has_value());
    BOOST_TEST(c.find("c", now).has_value());
    BOOST_TEST(c.size() == 2u);
    // Past its time an entry is gone, and its bytes with it.
    auto held = c.bytes();
    BOOST_TEST(!c.find("a", now + 11s).has_value());
    BOOST_TEST(c.size() == 1u);
    BOOST_TEST(c.bytes() < held);
    // Storing again replaces; an entry larger than the whole cache is not kept.
    c.store("c", "short", now + 10s);
    BOOST_TEST(*c.find("c", now) == "short");
    c.store("huge", std::string(100'000, 'x'), now + 10s);
    BOOST_TEST(!c.find("huge", now).has_value());
    BOOST_TEST(c.find("c", now).has_value());
}

BOOST_AUTO_TEST_CASE(the_key_ignores_member_order_stream_and_user_but_nothing_else) {
    std::string why;
    auto key = [&](std::string_view body, std::string_view scope = "",
                   std::string_view path = "/v1/chat/completions") {
        return cache::key_of(body, path, "upstream up0 gpt", scope, why).value_or("none");
    };
    auto base = key(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(base.size() == 64u);
    BOOST_TEST(key(R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})") == base);
    BOOST_TEST(key(R"({"model":"m","stream":true,"stream_options":{"include_usage":true},)"
                   R"("user":"x","messages":[{"role":"user","content":"hi"}]})") == base);
    BOOST_TEST(key(R"({"model":"m","messages":[{"role":"user","content":"hi "}]})") != base);
    BOOST_TEST(key(R"({"model":"m","tools":[],"messages":[{"role":"user","content":"hi"}]})") !=
               base);
    BOOST_TEST(key(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", "key k1") !=
               base);
    // Gemini: the streamed and the whole call share a key; the model in the path does not.
    auto g = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
    BOOST_TEST(key(g, "", "/v1beta/models/x:streamGenerateContent") ==
               key(g, "", "/v1beta/models/x:generateContent"));
    BOOST_TEST(key(g, "", "/v1beta/models/y:generateContent") !=
               key(g, "", "/v1beta/models/x:generateContent"));
    // Not cached: several choices, log probabilities, a body that is not an object.
    BOOST_TEST(!cache::key_of(R"({"n":2})", "/v1/chat/completions", "", "", why));
    BOOST_TEST(why == "it asks for several choices");
    BOOST_TEST(!cache::key_of(R"({"generationConfig":{"candidateCount":3}})", "/x", "", "", why));
    BOOST_TEST(!cache::key_of(R"({"logprobs":true})", "/x", "", "", why));
    BOOST_TEST(why == "it asks for log probabilities");
    BOOST_TEST(cache::key_of(R"({"logprobs":false,"n":1})", "/x", "", "", why).has_value());
    BOOST_TEST(!cache::key_of("[1,2]", "/x", "", "", why));
    BOOST_TEST(!cache::key_of("{\"a\":", "/x", "", "", why));
}

BOOST_AUTO_TEST_CASE(an_answer_survives_its_stored_form) {
    providers::reply r;
    r.id = "chatcmpl-1";
    r.model = "gpt-x";
    r.content.parts.push_back(providers::part::of_reasoning("thinking"));
    r.content.parts.push_back(providers::part::of_text("Hello ✓"));
    providers::tool_call call{
        "call_1", "get_weather", boost::json::parse(R"({"city":"Paris"})").as_object(), {}};
    r.content.parts.push_back(providers::part::of_call(call));
    r.why = providers::finish::tool_calls;
    r.used = {true, 9, 12};
    auto back = cache::decode_reply(cache::encode_reply(r));
    BOOST_TEST_REQUIRE(back.has_value());
    BOOST_TEST(back->model == "gpt-x");
    BOOST_TEST(back->content.text() == "Hello ✓");
    BOOST_TEST_REQUIRE(back->content.calls().size() == 1u);
    BOOST_TEST(back->content.calls()[0]->arguments.at("city").as_string() == "Paris");
    BOOST_TEST(back->content.parts.front().text == "thinking");
    BOOST_TEST((back->why == providers::finish::tool_calls));
    BOOST_TEST(back->used.known);
    BOOST_TEST(back->used.output == 12);
    BOOST_TEST(!cache::decode_reply("{\"v\":2}").has_value());
    BOOST_TEST(!cache::decode_reply("not json").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
