#include "gateway/cache/response_cache.hpp"
#include "gateway/cache/cache_key.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>

namespace cache_response_cache_test {

using gateway::request_cost;
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
    auto key = [&](std::string_view body, std::string scope = "",
                   std::string_view path = "/v1/chat/completions") {
        return cache::key_of(body, path, "upstream up0 gpt", {std::move(scope), ""}, why)
            .value_or("none");
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
    BOOST_TEST(!cache::key_of(R"({"n":2})", "/v1/chat/completions", "", {}, why));
    BOOST_TEST(why == "it asks for several choices");
    BOOST_TEST(!cache::key_of(R"({"generationConfig":{"candidateCount":3}})", "/x", "", {}, why));
    BOOST_TEST(!cache::key_of(R"({"logprobs":true})", "/x", "", {}, why));
    BOOST_TEST(why == "it asks for log probabilities");
    BOOST_TEST(cache::key_of(R"({"logprobs":false,"n":1})", "/x", "", {}, why).has_value());
    BOOST_TEST(!cache::key_of("[1,2]", "/x", "", {}, why));
    BOOST_TEST(!cache::key_of("{\"a\":", "/x", "", {}, why));
}

// The head's part of the key (docs/operations.md, "Response cache").
struct head_of {
    cache::head_view view;
    explicit head_of(std::string_view target = "/v1/chat/completions") { view.target = target; }
    head_of& field(std::string_view name, std::string_view value) {
        view.fields.emplace_back(name, value);
        return *this;
    }
    head_of& key(std::string_view id, std::string_view secret) {
        view.key_id = id;
        view.key_secret = secret;
        return *this;
    }
    cache::head_key of(bool shared = false) const { return cache::head_key_of(view, shared); }
};

BOOST_AUTO_TEST_CASE(every_credential_scopes_the_entries_whatever_its_scheme_or_name) {
    auto none = head_of().of();
    BOOST_TEST(none.scope.empty());
    for (auto [name, value] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
             {"Authorization", "Basic dXNlcjpwYXNz"},
             {"Authorization", "Bearer sk-1"},
             {"x-api-key", "sk-1"},
             {"x-goog-api-key", "g-1"},
             {"api-key", "azure-1"},
             {"X-Custom-Auth", "s3cret"},
             {"Cookie", "session=1"}}) {
        auto one = head_of().field(name, value).of();
        BOOST_TEST(!one.scope.empty(), name);
        BOOST_TEST(one.scope.find(value) == std::string::npos, name);  // a digest, not the value
        BOOST_TEST(one.scope != head_of().field(name, "other").of().scope, name);
        BOOST_TEST(one.varies.empty(), name);
        // Shared: one namespace, whoever asks.
        BOOST_TEST(head_of().field(name, value).of(true).scope.empty(), name);
    }
    // In the query, under any credential-like name.
    for (auto target : {"/v1beta/models/g:generateContent?key=k1", "/v1/x?api-key=k1",
                        "/v1/x?%6Bey=k1", "/v1/x?subscription-key=k1"}) {
        auto one = head_of(target).of();
        BOOST_TEST(!one.scope.empty(), target);
        BOOST_TEST(one.varies.empty(), target);
    }
    // Header names in any case and order: the same scope.
    BOOST_TEST(head_of().field("X-Api-Key", "a").field("Authorization", "Basic b").of().scope ==
               head_of().field("authorization", "Basic b").field("x-api-key", "a").of().scope);
}

BOOST_AUTO_TEST_CASE(a_virtual_key_scopes_by_its_id_and_its_secret) {
    auto alice = head_of().key("cfg-alice", "sk-1").of().scope;
    BOOST_TEST(!alice.empty());
    BOOST_TEST(alice.find("sk-1") == std::string::npos);
    BOOST_TEST(head_of().key("cfg-alice", "sk-2").of().scope != alice);  // rotated
    BOOST_TEST(head_of().key("cfg-bob", "sk-1").of().scope != alice);
    BOOST_TEST(head_of().key("cfg-alice", "sk-1").of(true).scope.empty());
}

BOOST_AUTO_TEST_CASE(what_can_change_the_answer_is_keyed_and_what_cannot_is_not) {
    auto plain = head_of().of();
    for (auto [name, value] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
             {"anthropic-beta", "tools-2024"},
             {"anthropic-version", "2023-06-01"},
             {"OpenAI-Beta", "assistants=v2"},
             {"x-goog-user-project", "p"},
             {"openai-organization", "org-1"},
             {"x-something-new", "1"}}) {
        auto one = head_of().field(name, value).of();
        BOOST_TEST(one.varies != plain.varies, name);
        BOOST_TEST(head_of().field(name, value).of(true).varies == one.varies, name);  // shared too
        BOOST_TEST(one.scope.empty(), name);
    }
    for (auto [name, value] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
             {"User-Agent", "OpenAI/JS 5.0"},
             {"x-stainless-retry-count", "2"},
             {"Accept", "text/event-stream"},
             {"Content-Type", "application/json"},
             {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
             {"Cache-Control", "no-cache"},
             {"Idempotency-Key", "k-1"},
             {"X-Request-Id", "r-1"}}) {
        auto one = head_of().field(name, value).of();
        BOOST_TEST(one.varies == plain.varies, name);
        BOOST_TEST(one.scope == plain.scope, name);
    }
    // The query: `alt` is how the answer is written, not what it says; the rest is keyed.
    BOOST_TEST(head_of("/v1beta/models/g:streamGenerateContent?alt=sse").of().varies ==
               plain.varies);
    auto versioned = head_of("/v1/chat/completions?api-version=2024-10-21").of();
    BOOST_TEST(versioned.varies != plain.varies);
    BOOST_TEST(head_of("/v1/chat/completions?api-version=2025-01-01").of().varies !=
               versioned.varies);
    // And each part of the key reaches it.
    std::string why;
    auto body = R"({"model":"m","messages":[]})";
    auto key = [&](const cache::head_key& h) {
        return cache::key_of(body, "/v1/chat/completions", "t", h, why).value_or("none");
    };
    BOOST_TEST(key(versioned) != key(plain));
    BOOST_TEST(key(head_of().field("Authorization", "Basic x").of()) != key(plain));
    // A scope's text cannot pass for the next part's: each is length-prefixed.
    BOOST_TEST(key({"a\nb", ""}) != key({"a", "b"}));
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
    auto stored = cache::decode_answer(cache::encode_answer({r, request_cost{0.005615, true}}));
    BOOST_TEST_REQUIRE(stored.has_value());
    // What it cost, exactly in nano-dollars: what a hit on it saves.
    BOOST_TEST_REQUIRE(stored->cost.has_value());
    BOOST_TEST(std::llround(stored->cost->usd * 1e9) == 5'615'000);
    BOOST_TEST(stored->cost->priced);
    BOOST_TEST(!stored->cost->estimated);
    const auto* back = &stored->reply;
    BOOST_TEST(back->model == "gpt-x");
    BOOST_TEST(back->content.text() == "Hello ✓");
    BOOST_TEST_REQUIRE(back->content.calls().size() == 1u);
    BOOST_TEST(back->content.calls()[0]->arguments.at("city").as_string() == "Paris");
    BOOST_TEST(back->content.parts.front().text == "thinking");
    BOOST_TEST((back->why == providers::finish::tool_calls));
    BOOST_TEST(back->used.known);
    BOOST_TEST(back->used.output == 12);
    // An unpriced answer (and one stored before costs were) saves nothing known.
    BOOST_TEST(!cache::decode_answer(cache::encode_answer({r, request_cost{0, false}}))->cost);
    BOOST_TEST(!cache::decode_answer(cache::encode_answer({r, std::nullopt}))->cost);
    BOOST_TEST(!cache::decode_answer("{\"v\":2}").has_value());
    BOOST_TEST(!cache::decode_answer("not json").has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cache_response_cache_test
