// The response cache (docs/operations.md, "Response cache") through the real gateway against the
// fake upstream: what is a hit, what is keyed, what is never stored, and a hit in each client API
// as JSON or as a stream, whichever the request asks.
#include "tests/integration/harness.hpp"
#include "tests/integration/redis_server.hpp"
#include "tests/support/stream_grammar.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>
#include <optional>
#include <set>
#include <thread>

namespace integration_cache_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace config = gateway::config;
using namespace std::chrono_literals;

namespace {

const std::string hello =
    R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]})";
const std::string hello_streamed =
    R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello"}]})";

// The fake as three upstreams (OpenAI-compatible, Anthropic at its root, Gemini under /v1beta),
// each caching its answers for ten minutes; `adjust` changes the configuration last.
struct cached_gateway {
    fake_upstream fake;
    std::optional<running_gateway> gw;

    explicit cached_gateway(const std::function<void(config::gateway_config&)>& adjust = {}) {
        auto c = three_providers(fake, config::auth_mode::replace);
        for (auto& u : c.upstreams) u.cache.ttl = 10min;
        c.admin.api_key = "admin-key-0123456789";
        if (adjust) adjust(c);
        gw.emplace(c);
        seen_ = stores();
    }

    // An answer is stored just after the client has it: before asking again for a hit, a test
    // waits (up to 5 s) for the `n` answers it expects stored since it last waited.
    void stored(int n = 1) {
        seen_ += n;
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (stores() < seen_ && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(2ms);
        BOOST_TEST_REQUIRE(stores() >= seen_);
    }

    response post(std::string_view path, const std::string& body, std::string headers = {}) {
        client c(gw->port());
        return c.request(
            make_request("POST", path, body, "Content-Type: application/json\r\n" + headers));
    }
    response chat(const std::string& body, std::string headers = {}) {
        return post("/v1/chat/completions", body, std::move(headers));
    }
    std::size_t upstream_calls() const { return fake.requests().size(); }

private:
    // contextgate_cache_stores_total (the process's: tests run one at a time).
    double stores() {
        client c(gw->port());
        auto text = c.request(make_request("GET", "/metrics")).body;
        const std::string name = "contextgate_cache_stores_total ";
        auto at = text.find("\n" + name);
        return at == std::string::npos ? 0 : std::stod(text.substr(at + 1 + name.size()));
    }
    double seen_ = 0;
};

// The ids a streamed answer's chunks carry.
std::set<std::string> ids_of(const chat_stream& s) {
    std::set<std::string> ids;
    for (const auto& chunk : s.chunks) ids.insert(std::string(chunk.at("id").as_string()));
    return ids;
}

const std::string alice = "sk-cache-alice-0123456789";
const std::string bob = "sk-cache-bob-0123456789ab";

// Two virtual keys, Alice's and Bob's, each with `budget` tokens a month (0: none).
std::vector<config::virtual_key> alice_and_bob(std::uint64_t budget) {
    std::vector<config::virtual_key> keys(2);
    keys[0].id = "key-alice";
    keys[0].name = "alice";
    keys[0].digest = config::key_digest(alice);
    keys[1].id = "key-bob";
    keys[1].name = "bob";
    keys[1].digest = config::key_digest(bob);
    for (auto& k : keys) k.budget_tokens = budget;
    return keys;
}

std::string content_of(const std::string& body) {
    return std::string(
        json::parse(body).at("choices").at(0).at("message").at("content").as_string());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(response_cache)

BOOST_AUTO_TEST_CASE(a_repeated_request_is_answered_without_the_upstream_under_a_fresh_id) {
    cached_gateway g;
    auto first = g.chat(hello);
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("x-contextgate-cache") == "miss");
    BOOST_TEST(g.upstream_calls() == 1u);
    g.stored();
    // The same request with its members in another order and another `user`: the same key.
    auto second =
        g.chat(R"({"messages":[{"role":"user","content":"Say hello"}],"user":"u-2","model":)"
               R"("gpt-4o-mini"})");
    BOOST_TEST_REQUIRE(second.status == 200u, second.body);
    BOOST_TEST(second.header("x-contextgate-cache") == "hit");
    BOOST_TEST(g.upstream_calls() == 1u);
    BOOST_TEST(content_of(second.body) == content_of(first.body));
    auto a = json::parse(first.body).as_object();
    auto b = json::parse(second.body).as_object();
    BOOST_TEST(b.at("id") != a.at("id"));
    BOOST_TEST(b.at("model") == json::value("gpt-4o-mini"));
    BOOST_TEST(b.at("usage").at("total_tokens") == a.at("usage").at("total_tokens"));
    // Another model, another temperature: other keys.
    BOOST_TEST(g.chat(R"({"model":"gpt-4o","messages":[{"role":"user","content":"Say hello"}]})")
                   .header("x-contextgate-cache") == "miss");
    g.stored();
    BOOST_TEST(g.chat(R"({"model":"gpt-4o-mini","temperature":0.2,"messages":[{"role":"user",)"
                      R"("content":"Say hello"}]})")
                   .header("x-contextgate-cache") == "miss");
    g.stored();
    BOOST_TEST(g.upstream_calls() == 3u);
    client c(g.gw->port());
    auto metrics = c.request(make_request("GET", "/metrics")).body;
    BOOST_TEST(metrics.find("contextgate_cache_lookups_total{result=\"hit\"}") !=
               std::string::npos);
    BOOST_TEST(metrics.find("contextgate_cache_stores_total ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tools_and_tool_choice_are_part_of_the_key) {
    cached_gateway g;
    const std::string tools =
        R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",)"
        R"("properties":{"city":{"type":"string"}}}}}])";
    scripted_reply weather{"", "tool_calls", 200, "", 0, {{"get_weather", "{}"}}};
    g.fake.script({{"Plain answer."}, weather, weather});
    BOOST_TEST(content_of(g.chat(hello).body) == "Plain answer.");
    g.stored();
    // The same messages with a tool: not the tool-less answer.
    auto with_tools = g.chat(R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":)"
                             R"("Say hello"}],"tools":)" +
                             tools + "}");
    BOOST_TEST_REQUIRE(with_tools.status == 200u, with_tools.body);
    BOOST_TEST(with_tools.header("x-contextgate-cache") == "miss");
    g.stored();
    auto call = json::parse(with_tools.body).at("choices").at(0).at("message").at("tool_calls");
    BOOST_TEST(call.at(0).at("function").at("name") == json::value("get_weather"));
    // ... and tool_choice too.
    auto forced = g.chat(R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":)"
                         R"("Say hello"}],"tool_choice":"required","tools":)" +
                         tools + "}");
    BOOST_TEST_REQUIRE(forced.status == 200u, forced.body);
    BOOST_TEST(forced.header("x-contextgate-cache") == "miss");
    g.stored();
    BOOST_TEST(g.upstream_calls() == 3u);
    // The tool call itself comes back from the cache as a call, streamed.
    auto again = g.chat(R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user",)"
                        R"("content":"Say hello"}],"tools":)" +
                        tools + "}");
    BOOST_TEST(again.header("x-contextgate-cache") == "hit");
    auto streamed = read_chat_stream(again.body);
    BOOST_TEST_REQUIRE(streamed.calls.size() == 1u);
    BOOST_TEST(streamed.calls[0].at("name") == json::value("get_weather"));
    BOOST_TEST(streamed.finish_reason == "tool_calls");
    BOOST_TEST(g.upstream_calls() == 3u);
}

BOOST_AUTO_TEST_CASE(a_stored_answer_serves_json_and_stream_requests_alike) {
    cached_gateway g;
    // Stored from a JSON answer, asked as a stream: one valid stream under one fresh id.
    auto json_first = g.chat(hello);
    g.stored();
    auto as_stream = g.chat(hello_streamed);
    BOOST_TEST_REQUIRE(as_stream.status == 200u, as_stream.body);
    BOOST_TEST(as_stream.header("x-contextgate-cache") == "hit");
    BOOST_TEST(as_stream.header("content-type").starts_with("text/event-stream"));
    BOOST_TEST(as_stream.complete);
    auto s = read_chat_stream(as_stream.body);
    BOOST_TEST(s.text == content_of(json_first.body));
    BOOST_TEST(s.finish_reason == "stop");
    BOOST_TEST(s.done);
    auto ids = ids_of(s);
    BOOST_TEST(ids.size() == 1u);
    BOOST_TEST(*ids.begin() != std::string(json::parse(json_first.body).at("id").as_string()));
    // Stored from a stream, asked as JSON: the assembled answer.
    g.fake.script({{"Streamed once, then kept."}});
    const std::string other =
        R"({"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"other"}]})";
    auto streamed = g.chat(other);
    BOOST_TEST(streamed.header("x-contextgate-cache") == "miss");
    BOOST_TEST(read_chat_stream(streamed.body).text == "Streamed once, then kept.");
    g.stored();
    auto whole =
        g.chat(R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"other"}]})");
    BOOST_TEST(whole.header("x-contextgate-cache") == "hit");
    BOOST_TEST(content_of(whole.body) == "Streamed once, then kept.");
    BOOST_TEST(g.upstream_calls() == 2u);
}

BOOST_AUTO_TEST_CASE(errors_cut_streams_and_several_choices_are_never_stored) {
    cached_gateway g;
    scripted_reply cut{"A stream that breaks off midway through its answer."};
    cut.cut_after = 2;
    g.fake.script({{"overloaded", "stop", 500, "", 0}, cut, {"Fine now."}});
    BOOST_TEST(g.chat(hello).status == 500u);
    auto broken = read_chat_stream(g.chat(hello_streamed).body);  // cut: ends with an error event
    BOOST_TEST(!broken.error.empty());
    BOOST_TEST(!broken.done);
    auto fine = g.chat(hello);
    BOOST_TEST(fine.header("x-contextgate-cache") == "miss");
    BOOST_TEST(content_of(fine.body) == "Fine now.");
    BOOST_TEST(g.upstream_calls() == 3u);
    g.stored();
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "hit");
    // n > 1 and log probabilities are not looked up nor stored.
    const std::string two =
        R"({"model":"gpt-4o-mini","n":2,"messages":[{"role":"user","content":"two"}]})";
    BOOST_TEST(g.chat(two).header("x-contextgate-cache") == "skip");
    BOOST_TEST(g.chat(two).header("x-contextgate-cache") == "skip");
    const std::string probabilities =
        R"({"model":"gpt-4o-mini","logprobs":true,"messages":[{"role":"user","content":"p"}]})";
    BOOST_TEST(g.chat(probabilities).header("x-contextgate-cache") == "skip");
    BOOST_TEST(g.upstream_calls() == 6u);
}

BOOST_AUTO_TEST_CASE(no_cache_refreshes_and_no_store_keeps_nothing) {
    cached_gateway g;
    g.fake.script({{"Not kept."}, {"First kept."}, {"Refreshed."}});
    auto not_kept = g.chat(hello, "Cache-Control: no-store\r\n");
    BOOST_TEST(not_kept.header("x-contextgate-cache") == "miss");
    BOOST_TEST(content_of(g.chat(hello).body) == "First kept.");  // a miss: no-store kept nothing
    g.stored();
    BOOST_TEST(content_of(g.chat(hello).body) == "First kept.");  // a hit
    auto refreshed = g.chat(hello, "Cache-Control: max-age=0, No-Cache\r\n");
    BOOST_TEST(refreshed.header("x-contextgate-cache") == "skip");
    BOOST_TEST(content_of(refreshed.body) == "Refreshed.");
    g.stored();
    auto after = g.chat(hello);
    BOOST_TEST(after.header("x-contextgate-cache") == "hit");
    BOOST_TEST(content_of(after.body) == "Refreshed.");
    BOOST_TEST(g.upstream_calls() == 3u);
}

BOOST_AUTO_TEST_CASE(keys_never_share_entries_and_a_hit_charges_no_tokens) {
    // 21 tokens an answer (the fake's usage) and a reservation of about 20 per request: charged
    // for each hit, the third request would pass the budget and be refused.
    cached_gateway g([&](config::gateway_config& c) { c.admin.keys = alice_and_bob(60); });
    auto as = [](const std::string& key) { return "Authorization: Bearer " + key + "\r\n"; };
    BOOST_TEST(g.chat(hello, as(alice)).header("x-contextgate-cache") == "miss");
    g.stored();
    for (int i = 0; i < 4; ++i) {
        auto hit = g.chat(hello, as(alice));
        BOOST_TEST_REQUIRE(hit.status == 200u, hit.body);
        BOOST_TEST(hit.header("x-contextgate-cache") == "hit");
    }
    BOOST_TEST(g.upstream_calls() == 1u);
    // Bob's identical request is his own: a miss.
    BOOST_TEST(g.chat(hello, as(bob)).header("x-contextgate-cache") == "miss");
    BOOST_TEST(g.upstream_calls() == 2u);
    g.stored();
}

BOOST_AUTO_TEST_CASE(shared_entries_serve_every_key) {
    cached_gateway g([&](config::gateway_config& c) {
        c.admin.keys = alice_and_bob(0);
        c.cache.shared = true;
    });
    BOOST_TEST(
        g.chat(hello, "Authorization: Bearer " + alice + "\r\n").header("x-contextgate-cache") ==
        "miss");
    g.stored();
    BOOST_TEST(
        g.chat(hello, "Authorization: Bearer " + bob + "\r\n").header("x-contextgate-cache") ==
        "hit");
    BOOST_TEST(g.upstream_calls() == 1u);
}

BOOST_AUTO_TEST_CASE(without_virtual_keys_the_clients_own_key_scopes_its_entries) {
    cached_gateway g;  // auth: forward for the OpenAI-compatible upstream
    BOOST_TEST(g.chat(hello, "Authorization: Bearer sk-one\r\n").header("x-contextgate-cache") ==
               "miss");
    g.stored();
    BOOST_TEST(g.chat(hello, "Authorization: Bearer sk-one\r\n").header("x-contextgate-cache") ==
               "hit");
    // A key the upstream never saw gets no answer it did not pay for.
    BOOST_TEST(g.chat(hello, "Authorization: Bearer sk-two\r\n").header("x-contextgate-cache") ==
               "miss");
    BOOST_TEST(g.upstream_calls() == 2u);
    g.stored();
}

BOOST_AUTO_TEST_CASE(any_credential_scopes_entries_basic_custom_or_none) {
    cached_gateway g;  // auth: forward for the OpenAI-compatible upstream
    auto ask = [&](const std::string& body, const std::string& headers) {
        return g.chat(body, headers).header("x-contextgate-cache");
    };
    const std::string basic = "Authorization: Basic YWxpY2U6cGFzcw==\r\n";  // alice:pass
    BOOST_TEST(ask(hello, basic) == "miss");
    g.stored();
    BOOST_TEST(ask(hello, basic) == "hit");
    // A wrong password, and no credential at all: not Alice's answer.
    BOOST_TEST(ask(hello, "Authorization: Basic YWxpY2U6d3Jvbmc=\r\n") == "miss");  // alice:wrong
    g.stored();
    BOOST_TEST(ask(hello, "") == "miss");
    g.stored();
    BOOST_TEST(g.upstream_calls() == 3u);
    // A header the upstream authenticates with, under a name of the operator's choosing.
    const std::string other =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"custom"}]})";
    BOOST_TEST(ask(other, "X-Tenant-Auth: tenant-1-secret\r\n") == "miss");
    g.stored();
    BOOST_TEST(ask(other, "X-Tenant-Auth: tenant-1-secret\r\n") == "hit");
    BOOST_TEST(ask(other, "X-Tenant-Auth: a-guess\r\n") == "miss");
    g.stored();
    BOOST_TEST(ask(other, "") == "miss");
    g.stored();
    BOOST_TEST(g.upstream_calls() == 6u);
}

BOOST_AUTO_TEST_CASE(headers_and_query_that_can_change_the_answer_are_keyed) {
    cached_gateway g;
    // One client plants a tool call under a beta header; the next, without it, must not get it.
    scripted_reply planted{"", "tool_calls", 200, "", 0, {{"transfer_funds", "{}"}}};
    g.fake.script({planted, {"Plain."}, {"Plain."}, {"Plain."}, {"Plain."}, {"Plain."}});
    const std::string ask =
        R"({"model":"claude-sonnet","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})";
    const std::string anthropic = "x-api-key: sk-client\r\nanthropic-version: 2023-06-01\r\n";
    auto beta = g.post("/v1/messages", ask, anthropic + "anthropic-beta: planted-2025\r\n");
    BOOST_TEST_REQUIRE(beta.status == 200u, beta.body);
    BOOST_TEST(beta.header("x-contextgate-cache") == "miss");
    g.stored();
    auto plain = g.post("/v1/messages", ask, anthropic);
    BOOST_TEST(plain.header("x-contextgate-cache") == "miss");
    BOOST_TEST(plain.body.find("transfer_funds") == std::string::npos, plain.body);
    g.stored();
    BOOST_TEST(
        g.post("/v1/messages", ask, "x-api-key: sk-client\r\nanthropic-version: 2099-01-01\r\n")
            .header("x-contextgate-cache") == "miss");
    g.stored();
    // openai-beta, and the query string.
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "miss");
    g.stored();
    BOOST_TEST(g.chat(hello, "OpenAI-Beta: assistants=v2\r\n").header("x-contextgate-cache") ==
               "miss");
    g.stored();
    BOOST_TEST(g.post("/v1/chat/completions?api-version=2024-10-21", hello)
                   .header("x-contextgate-cache") == "miss");
    g.stored();
    BOOST_TEST(g.upstream_calls() == 6u);
    // What cannot change the answer stays out of the key: an SDK's retry count, its user agent.
    BOOST_TEST(g.chat(hello, "User-Agent: OpenAI/JS 5.1\r\nx-stainless-retry-count: 2\r\n")
                   .header("x-contextgate-cache") == "hit");
    BOOST_TEST(g.post("/v1/messages", ask, anthropic + "anthropic-beta: planted-2025\r\n")
                   .header("x-contextgate-cache") == "hit");
    BOOST_TEST(g.upstream_calls() == 6u);
}

BOOST_AUTO_TEST_CASE(a_declared_key_rotated_or_of_another_deployment_reads_no_entry_in_redis) {
    redis_server redis;
    if (!redis.running()) {
        BOOST_TEST_MESSAGE("redis-server is not available: skipped");
        return;
    }
    // Three deployments on one Redis, each declaring a key named alice: the first two with one
    // secret, the third with another (a rotated secret, or another team's key of that name).
    auto with_alice = [&](std::string secret) {
        return [&redis, secret](config::gateway_config& c) {
            c.cache.backend = config::cache_backend::redis;
            c.cache.redis_url = "redis://127.0.0.1:" + std::to_string(redis.port());
            c.admin.keys = alice_and_bob(0);
            c.admin.keys[0].digest = config::key_digest(secret);
        };
    };
    cached_gateway first(with_alice(alice));
    cached_gateway same(with_alice(alice));
    cached_gateway rotated(with_alice("sk-cache-alice-rotated-0123"));
    BOOST_TEST(first.chat(hello, "Authorization: Bearer " + alice + "\r\n")
                   .header("x-contextgate-cache") == "miss");
    first.stored();
    same.stored();  // the same store: the count is the process's
    rotated.stored();
    BOOST_TEST(
        same.chat(hello, "Authorization: Bearer " + alice + "\r\n").header("x-contextgate-cache") ==
        "hit");  // the entry is in Redis
    auto other = rotated.chat(hello, "Authorization: Bearer sk-cache-alice-rotated-0123\r\n");
    BOOST_TEST_REQUIRE(other.status == 200u, other.body);
    BOOST_TEST(other.header("x-contextgate-cache") == "miss");
    BOOST_TEST(rotated.upstream_calls() == 1u);
    rotated.stored();
}

BOOST_AUTO_TEST_CASE(messages_and_gemini_hits_keep_their_event_grammar) {
    cached_gateway g;
    const std::string ask =
        R"({"model":"claude-sonnet","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})";
    auto whole =
        g.post("/v1/messages", ask, "x-api-key: sk-client\r\nanthropic-version: 2023-06-01\r\n");
    BOOST_TEST_REQUIRE(whole.status == 200u, whole.body);
    BOOST_TEST(whole.header("x-contextgate-cache") == "miss");
    g.stored();
    auto streamed = g.post("/v1/messages",
                           R"({"model":"claude-sonnet","max_tokens":64,"stream":true,)"
                           R"("messages":[{"role":"user","content":"hi"}]})",
                           "x-api-key: sk-client\r\nanthropic-version: 2023-06-01\r\n");
    BOOST_TEST(streamed.header("x-contextgate-cache") == "hit");
    BOOST_TEST(check_messages_stream(streamed.body) == "", streamed.body);
    BOOST_TEST(streamed.body.find(std::string(
                   json::parse(whole.body).at("content").at(0).at("text").as_string())) !=
               std::string::npos);

    const std::string contents = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
    auto first = g.post("/v1beta/models/gemini-pro:generateContent", contents);
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("x-contextgate-cache") == "miss");
    g.stored();
    auto gemini_stream =
        g.post("/v1beta/models/gemini-pro:streamGenerateContent?alt=sse", contents);
    BOOST_TEST(gemini_stream.header("x-contextgate-cache") == "hit");
    BOOST_TEST(check_gemini_stream(gemini_stream.body) == "", gemini_stream.body);
    BOOST_TEST(g.upstream_calls() == 2u);
}

BOOST_AUTO_TEST_CASE(a_route_caches_its_answers_and_says_which_target_answered_the_miss) {
    cached_gateway g([](config::gateway_config& c) {
        for (auto& u : c.upstreams) u.cache.ttl = {};
        config::route_config r;
        r.model = "smart";
        r.targets.push_back({"up0", "gpt-4o-mini", 1, 0});
        r.cache.ttl = 10min;
        c.routes.push_back(r);
    });
    const std::string smart = R"({"model":"smart","messages":[{"role":"user","content":"hi"}]})";
    auto miss = g.chat(smart);
    BOOST_TEST(miss.header("x-contextgate-cache") == "miss");
    BOOST_TEST(miss.header("x-contextgate-upstream") == "up0");
    g.stored();
    auto hit = g.chat(smart);
    BOOST_TEST(hit.header("x-contextgate-cache") == "hit");
    BOOST_TEST(hit.header("x-contextgate-upstream") == "");  // no upstream was asked
    BOOST_TEST(json::parse(hit.body).at("model") == json::value("smart"));
    // The route's model without the route's cache: gpt-4o-mini asked directly is not cached.
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "");
    BOOST_TEST(g.upstream_calls() == 2u);
}

BOOST_AUTO_TEST_CASE(translated_answers_are_kept_whole_or_assembled_from_their_stream) {
    cached_gateway g;
    // Chat Completions to Claude (translated), answered whole, then asked again as a stream.
    const std::string claude =
        R"({"model":"claude-sonnet","messages":[{"role":"user","content":"hi"}]})";
    auto whole = g.chat(claude);
    BOOST_TEST_REQUIRE(whole.status == 200u, whole.body);
    BOOST_TEST(whole.header("x-contextgate-cache") == "miss");
    g.stored();
    auto streamed = g.chat(R"({"model":"claude-sonnet","stream":true,"messages":[{"role":"user",)"
                           R"("content":"hi"}]})");
    BOOST_TEST(streamed.header("x-contextgate-cache") == "hit");
    BOOST_TEST(read_chat_stream(streamed.body).text == content_of(whole.body));
    // To Gemini, streamed first: the stream is assembled and kept, and answers JSON.
    auto gemini_stream = g.chat(
        R"({"model":"gemini-pro","stream":true,"messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(gemini_stream.header("x-contextgate-cache") == "miss");
    auto text = read_chat_stream(gemini_stream.body).text;
    BOOST_TEST(!text.empty());
    g.stored();
    auto gemini_whole =
        g.chat(R"({"model":"gemini-pro","messages":[{"role":"user","content":"hi"}]})");
    BOOST_TEST(gemini_whole.header("x-contextgate-cache") == "hit");
    BOOST_TEST(content_of(gemini_whole.body) == text);
    BOOST_TEST(g.upstream_calls() == 2u);
}

BOOST_AUTO_TEST_CASE(an_answer_over_max_entry_bytes_is_not_kept) {
    cached_gateway g([](config::gateway_config& c) { c.cache.max_entry_bytes = 1000; });
    const std::string long_text(2000, 'x');
    g.fake.script({{long_text}, {"Short."}, {long_text}});
    const std::string other =
        R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"short one"}]})";
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "miss");  // too long to keep
    BOOST_TEST(g.chat(other).header("x-contextgate-cache") == "miss");  // kept
    g.stored();  // (so the long answer's turn to be stored, just before, has passed too)
    BOOST_TEST(g.chat(other).header("x-contextgate-cache") == "hit");
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "miss");
    BOOST_TEST(g.upstream_calls() == 3u);
}

BOOST_AUTO_TEST_CASE(an_upstream_without_cache_is_untouched) {
    cached_gateway g([](config::gateway_config& c) {
        for (auto& u : c.upstreams) u.cache.ttl = {};
        c.upstreams[1].cache.ttl = 10min;  // the cache exists, for another upstream
    });
    auto r = g.chat(hello);
    BOOST_TEST(r.header("x-contextgate-cache") == "");
    BOOST_TEST(g.chat(hello).header("x-contextgate-cache") == "");
    BOOST_TEST(g.upstream_calls() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_cache_test
