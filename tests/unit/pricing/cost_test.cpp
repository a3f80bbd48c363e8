#include "gateway/pricing/cost.hpp"

#include "gateway/pricing/price_table.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/usage_observer.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace pricing_cost_test {

// The cost of recorded usage shapes of each provider, read the two ways the gateway reads them:
// by the usage observer from the bytes relayed to a client of the same dialect, and by the
// provider's adapter when the client's dialect differs (a translated answer). Prices are the
// shipped table's; each expected cost is worked out by hand in the comment above it.

using namespace gateway;
using providers::usage;

namespace {

constexpr double exact = 1e-9;

const pricing::price_table& shipped() {
    static auto built = pricing::build_prices({});
    BOOST_TEST_REQUIRE(static_cast<bool>(built), built.error);
    return **built.value;
}

double usd_of(const usage& u, std::string_view upstream, std::string_view model) {
    auto c = pricing::cost(u, shipped().find(upstream, model));
    BOOST_TEST_REQUIRE(c.priced, model << " has no price");
    return c.usd;
}

// What the observer reads from `text`, relayed in pieces of every size given.
usage observed(bool sse, std::string_view text) {
    usage first;
    for (std::size_t step : {1u, 7u, 100000u}) {
        providers::usage_observer o(sse);
        for (std::size_t i = 0; i < text.size(); i += step) o.feed(text.substr(i, step));
        auto u = o.finish(true);
        if (step == 1) first = u;
        BOOST_TEST(u.input == first.input);
        BOOST_TEST(u.output == first.output);
        BOOST_TEST(u.cache_read == first.cache_read);
        BOOST_TEST(u.cache_write == first.cache_write);
        BOOST_TEST(u.cache_write_1h == first.cache_write_1h);
        BOOST_TEST(u.reasoning == first.reasoning);
    }
    BOOST_TEST(first.known);
    return first;
}

// What the provider's adapter reads from a whole JSON answer.
usage decoded(config::provider_kind p, std::string_view body) {
    providers::reply r;
    std::string error;
    BOOST_TEST_REQUIRE(providers::adapter_for(p).decode(body, r, error), error);
    BOOST_TEST(r.used.known);
    return r.used;
}

// What the provider's adapter reads from a stream: its `finished` delta's usage.
usage decoded_stream(config::provider_kind p, std::string_view events) {
    providers::stream_reader reader(providers::adapter_for(p), 1 << 20);
    std::vector<providers::stream_delta> deltas;
    std::string error;
    BOOST_TEST_REQUIRE(reader.feed(events, deltas, error), error);
    BOOST_TEST_REQUIRE(reader.finish(deltas, error), error);
    for (const auto& d : deltas)
        if (d.what == providers::stream_delta::kind::finished) return d.used;
    BOOST_FAIL("no finished delta");
    return {};
}

// OpenAI Chat Completions, gpt-4o: 2006 prompt tokens of which 1920 cached, 300 completion.
const std::string openai_cached = R"({"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o",
 "choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,
  "prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},
  "completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,
   "accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}})";

// o4-mini streamed with include_usage: 1200 prompt (1024 cached), 900 completion of which 640
// were reasoning.
const std::string openai_reasoning_stream =
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"}}],"
    "\"usage\":null}\n\n"
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\","
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":900,"
    "\"total_tokens\":2100,\"prompt_tokens_details\":{\"cached_tokens\":1024},"
    "\"completion_tokens_details\":{\"reasoning_tokens\":640}}}\n\n"
    "data: [DONE]\n\n";

// Anthropic Messages, claude-sonnet-4-5: 50 new input tokens, 20000 read from the cache, 10000
// written to it (4000 for 5 minutes, 6000 for an hour), 700 output.
const std::string anthropic_cached = R"({"id":"msg_1","type":"message","role":"assistant",
 "model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"hi"}],
 "stop_reason":"end_turn","stop_sequence":null,
 "usage":{"input_tokens":50,"cache_creation_input_tokens":10000,"cache_read_input_tokens":20000,
  "cache_creation":{"ephemeral_5m_input_tokens":4000,"ephemeral_1h_input_tokens":6000},
  "output_tokens":700,"service_tier":"standard"}})";

// The same streamed: message_start has the input counts, message_delta the output (and, as the
// API does lately, the input totals again without their 5m/1h split).
const std::string anthropic_cached_stream =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
    "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\","
    "\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":50,"
    "\"cache_creation_input_tokens\":10000,\"cache_read_input_tokens\":20000,"
    "\"cache_creation\":{\"ephemeral_5m_input_tokens\":4000,\"ephemeral_1h_input_tokens\":6000},"
    "\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":50,"
    "\"cache_creation_input_tokens\":10000,\"cache_read_input_tokens\":20000,"
    "\"output_tokens\":700}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

// Gemini, gemini-2.5-pro: 12000 prompt tokens of which 8000 cached, 400 candidates and 1600
// thoughts.
const std::string gemini_thoughts = R"({"candidates":[{"content":{"role":"model",
 "parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}],
 "usageMetadata":{"promptTokenCount":12000,"cachedContentTokenCount":8000,
  "candidatesTokenCount":400,"thoughtsTokenCount":1600,"totalTokenCount":14000},
 "modelVersion":"gemini-2.5-pro","responseId":"r1"})";

const std::string gemini_thoughts_stream =
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"h\"}]},"
    "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":12000,"
    "\"cachedContentTokenCount\":8000,\"candidatesTokenCount\":1,\"thoughtsTokenCount\":1600,"
    "\"totalTokenCount\":13601},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n"
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"i\"}]},"
    "\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":12000,"
    "\"cachedContentTokenCount\":8000,\"candidatesTokenCount\":400,\"thoughtsTokenCount\":1600,"
    "\"totalTokenCount\":14000},\"modelVersion\":\"gemini-2.5-pro\"}\r\n\r\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(pricing_cost)

// 86 x 2.50 + 1920 x 1.25 + 300 x 10.00 = 5615 per 1M: $0.005615 (the cached tokens are part of
// prompt_tokens: charged at cache_read only).
BOOST_AUTO_TEST_CASE(openai_cached_prompt_json_forwarded_and_translated) {
    auto forwarded = observed(false, openai_cached);
    BOOST_TEST(forwarded.cache_read == 1920);
    BOOST_TEST(std::abs(usd_of(forwarded, "openai", "gpt-4o") - 0.005615) < exact);
    auto translated = decoded(config::provider_kind::openai, openai_cached);
    BOOST_TEST(translated.cache_read == 1920);
    BOOST_TEST(std::abs(usd_of(translated, "openai", "gpt-4o") - 0.005615) < exact);
}

// o4-mini: 176 x 1.10 + 1024 x 0.275 + 900 x 4.40 = 4435.2: $0.0044352, reasoning at the output
// rate and not again. With a reasoning rate of 8.00: 193.6 + 281.6 + 260 x 4.40 + 640 x 8.00 =
// 6739.2: $0.0067392.
BOOST_AUTO_TEST_CASE(openai_reasoning_stream_forwarded_and_translated) {
    auto forwarded = observed(true, openai_reasoning_stream);
    BOOST_TEST(forwarded.reasoning == 640);
    BOOST_TEST(forwarded.cache_read == 1024);
    BOOST_TEST(std::abs(usd_of(forwarded, "openai", "o4-mini") - 0.0044352) < exact);
    auto translated = decoded_stream(config::provider_kind::openai, openai_reasoning_stream);
    BOOST_TEST(translated.reasoning == 640);
    BOOST_TEST(std::abs(usd_of(translated, "openai", "o4-mini") - 0.0044352) < exact);
    config::price_entry thinking = *shipped().find("openai", "o4-mini");
    thinking.rates.reasoning = 8.00;
    BOOST_TEST(std::abs(pricing::cost(forwarded, &thinking).usd - 0.0067392) < exact);
}

// The Responses API (forwarded only): gpt-5, 5000 input (4096 cached), 1500 output (1000
// reasoning): 904 x 1.25 + 4096 x 0.125 + 1500 x 10 = 16642: $0.016642.
BOOST_AUTO_TEST_CASE(responses_api_stream_with_cached_and_reasoning_tokens) {
    std::string stream =
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        "\"delta\":\"hi\"}\n\n"
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{"
        "\"id\":\"resp_1\",\"status\":\"completed\",\"model\":\"gpt-5\",\"usage\":{"
        "\"input_tokens\":5000,\"input_tokens_details\":{\"cached_tokens\":4096},"
        "\"output_tokens\":1500,\"output_tokens_details\":{\"reasoning_tokens\":1000},"
        "\"total_tokens\":6500}}}\n\n";
    auto u = observed(true, stream);
    BOOST_TEST(u.input == 5000);
    BOOST_TEST(u.cache_read == 4096);
    BOOST_TEST(u.reasoning == 1000);
    BOOST_TEST(std::abs(usd_of(u, "openai", "gpt-5") - 0.016642) < exact);
}

// Claude Sonnet 4.5: 50 x 3.00 + 20000 x 0.30 + 4000 x 3.75 + 6000 x 6.00 + 700 x 15.00 = 67650:
// $0.06765 (cache reads and writes apart from input_tokens, each at its own rate, once).
BOOST_AUTO_TEST_CASE(anthropic_cache_read_and_5m_1h_writes_json) {
    for (auto u : {observed(false, anthropic_cached),
                   decoded(config::provider_kind::anthropic, anthropic_cached)}) {
        BOOST_TEST(u.input == 30050);  // what limits and the ledger count
        BOOST_TEST(u.cache_read == 20000);
        BOOST_TEST(u.cache_write == 4000);
        BOOST_TEST(u.cache_write_1h == 6000);
        BOOST_TEST(std::abs(usd_of(u, "anthropic", "claude-sonnet-4-5-20250929") - 0.06765) <
                   exact);
    }
}

BOOST_AUTO_TEST_CASE(anthropic_cache_tokens_streamed_keep_their_split) {
    for (auto u : {observed(true, anthropic_cached_stream),
                   decoded_stream(config::provider_kind::anthropic, anthropic_cached_stream)}) {
        BOOST_TEST(u.input == 30050);
        BOOST_TEST(u.output == 700);
        BOOST_TEST(u.cache_write == 4000);
        BOOST_TEST(u.cache_write_1h == 6000);
        BOOST_TEST(std::abs(usd_of(u, "anthropic", "claude-sonnet-4-5-20250929") - 0.06765) <
                   exact);
    }
}

// Without the split, every cache write is a 5-minute one: 50 x 3 + 20000 x 0.30 + 10000 x 3.75
// + 700 x 15 = 54150: $0.05415.
BOOST_AUTO_TEST_CASE(anthropic_cache_writes_without_split_are_5_minute_ones) {
    std::string body = R"({"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5",
      "content":[{"type":"text","text":"x"}],"stop_reason":"end_turn",
      "usage":{"input_tokens":50,"cache_creation_input_tokens":10000,
               "cache_read_input_tokens":20000,"output_tokens":700}})";
    for (auto u : {observed(false, body), decoded(config::provider_kind::anthropic, body)}) {
        BOOST_TEST(u.cache_write == 10000);
        BOOST_TEST(u.cache_write_1h == 0);
        BOOST_TEST(std::abs(usd_of(u, "anthropic", "claude-sonnet-4-5") - 0.05415) < exact);
    }
}

// Past 200k input tokens (cache reads included) Sonnet 4.5 takes its long-context rates:
// 150000 x 6.00 + 60000 x 0.60 + 1000 x 22.50 = 958500: $0.9585.
BOOST_AUTO_TEST_CASE(anthropic_long_context_tier_by_the_whole_input) {
    std::string body = R"({"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5",
      "content":[{"type":"text","text":"x"}],"stop_reason":"end_turn",
      "usage":{"input_tokens":150000,"cache_read_input_tokens":60000,"output_tokens":1000}})";
    auto u = observed(false, body);
    BOOST_TEST(std::abs(usd_of(u, "anthropic", "claude-sonnet-4-5") - 0.9585) < exact);
    // Just under the tier: 139999 x 3 + 60000 x 0.30 + 1000 x 15 = 452997: $0.452997.
    u.input -= 10001;
    BOOST_TEST(std::abs(usd_of(u, "anthropic", "claude-sonnet-4-5") - 0.452997) < exact);
}

// Gemini 2.5 Pro: 4000 x 1.25 + 8000 x 0.125 + (400 + 1600) x 10.00 = 26000: $0.026 (cached
// content is part of the prompt; thoughts come apart from the candidates, at the output rate).
BOOST_AUTO_TEST_CASE(gemini_cached_content_and_thoughts_json_and_stream) {
    for (auto u :
         {observed(false, gemini_thoughts), decoded(config::provider_kind::gemini, gemini_thoughts),
          observed(true, gemini_thoughts_stream),
          decoded_stream(config::provider_kind::gemini, gemini_thoughts_stream)}) {
        BOOST_TEST(u.input == 12000);
        BOOST_TEST(u.output == 2000);
        BOOST_TEST(u.reasoning == 1600);
        BOOST_TEST(u.cache_read == 8000);
        BOOST_TEST(std::abs(usd_of(u, "gemini", "gemini-2.5-pro") - 0.026) < exact);
    }
}

// Gemini 2.5 Pro past 200k prompt tokens: 250000 x 2.50 + 1000 x 15.00 = 640000: $0.64.
BOOST_AUTO_TEST_CASE(gemini_long_context_tier) {
    std::string body = R"({"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},
      "finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":250000,
      "candidatesTokenCount":1000,"totalTokenCount":251000}})";
    auto u = observed(false, body);
    BOOST_TEST(std::abs(usd_of(u, "gemini", "gemini-2.5-pro") - 0.64) < exact);
}

// A translated answer tells its client the parts it was charged for, in the client's own terms:
// read back from what the client receives, Claude's cache reads and writes and Gemini's thoughts
// and cached content come out as they went in (OpenAI's dialects have no cache writes: they
// say the reads).
BOOST_AUTO_TEST_CASE(a_translated_answer_keeps_the_usage_parts_for_its_client) {
    providers::reply claude;
    claude.content.parts.push_back(providers::part::of_text("hi"));
    claude.used = decoded(config::provider_kind::anthropic, anthropic_cached);
    providers::answer_names names{"msg_1", "claude-sonnet-4-5", 1, "/v1/messages"};
    auto as_messages = observed(false, providers::messages().answer(claude, names, {}));
    BOOST_TEST(as_messages.input == 30050);
    BOOST_TEST(as_messages.cache_write_1h == 6000);
    BOOST_TEST(std::abs(usd_of(as_messages, "anthropic", "claude-sonnet-4-5") - 0.06765) < exact);
    auto as_chat = observed(false, providers::chat_completions().answer(claude, names, {}));
    BOOST_TEST(as_chat.input == 30050);
    BOOST_TEST(as_chat.cache_read == 20000);
    auto as_responses = observed(false, providers::responses().answer(claude, names, {}));
    BOOST_TEST(as_responses.cache_read == 20000);

    providers::reply gemini;
    gemini.content.parts.push_back(providers::part::of_text("hi"));
    gemini.used = decoded(config::provider_kind::gemini, gemini_thoughts);
    for (const auto* in : {&providers::generate_content(), &providers::chat_completions(),
                           &providers::responses()}) {
        auto seen = observed(false, in->answer(gemini, names, {}));
        BOOST_TEST(seen.reasoning == 1600);
        BOOST_TEST(seen.cache_read == 8000);
        BOOST_TEST(std::abs(usd_of(seen, "gemini", "gemini-2.5-pro") - 0.026) < exact);
    }
}

BOOST_AUTO_TEST_CASE(an_unpriced_model_is_never_zero_dollars) {
    usage u;
    u.known = true;
    u.input = 1000;
    u.output = 1000;
    const auto* none = shipped().find("openai", "my-own-model");
    BOOST_TEST(none == nullptr);
    auto c = pricing::cost(u, none);
    BOOST_TEST(!c.priced);
    BOOST_TEST(gateway::cost_text(c) == "unpriced");
    // Priced, even at nothing used, says so.
    auto zero = pricing::cost(usage{true}, shipped().find("openai", "gpt-4o"));
    BOOST_TEST(zero.priced);
    BOOST_TEST(gateway::cost_text(zero) == "0");
}

// A cut stream's usage is the gateway's estimate: priced all the same, and marked.
BOOST_AUTO_TEST_CASE(an_estimated_usage_is_priced_and_marked) {
    auto settled = providers::settled_usage({}, 400, 4000, false);
    BOOST_TEST(settled.estimated);
    auto c = pricing::cost(settled.used, shipped().find("openai", "gpt-4o-mini"), true);
    BOOST_TEST(c.priced);
    BOOST_TEST(c.estimated);
    // 1000 x 0.15 + 100 x 0.60 = 210: $0.00021.
    BOOST_TEST(std::abs(c.usd - 0.00021) < exact);
    BOOST_TEST(gateway::cost_text(c) == "0.00021");
}

// Parts reported larger than their totals are cut to them: no token is charged twice, none
// below zero.
BOOST_AUTO_TEST_CASE(parts_larger_than_their_totals_are_cut) {
    usage u;
    u.known = true;
    u.input = 100;
    u.cache_read = 80;
    u.cache_write = 80;  // only 20 left
    u.output = 10;
    u.reasoning = 50;  // only 10
    config::price_entry p;
    p.rates.input = 1;
    p.rates.output = 2;
    p.rates.cache_read = 0.5;
    p.rates.cache_write = 3;
    p.rates.reasoning = 4;
    // 0 x 1 + 80 x 0.5 + 20 x 3 + 0 x 2 + 10 x 4 = 140 per 1M.
    BOOST_TEST(std::abs(pricing::cost(u, &p).usd - 0.00014) < exact);
}

BOOST_AUTO_TEST_CASE(cost_text_is_a_plain_decimal) {
    BOOST_TEST(gateway::cost_text({0.000123, true}) == "0.000123");
    BOOST_TEST(gateway::cost_text({12.5, true}) == "12.5");
    BOOST_TEST(gateway::cost_text({0.00000005, true}) == "0.00000005");
    BOOST_TEST(gateway::cost_text({0.1 + 0.2, true}) == "0.3");  // to the nano-dollar
    BOOST_TEST(gateway::cost_text({1234.000000001, true}) == "1234.000000001");
    BOOST_TEST(gateway::cost_text({0.0000000004, true}) == "0");
    BOOST_TEST(gateway::cost_text({0.0000000006, true}) == "0.000000001");
    BOOST_TEST(gateway::cost_text({2.5e12, true}) == "2500000000000");  // past a billion
    BOOST_TEST(gateway::cost_text({0, false}) == "unpriced");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace pricing_cost_test
