#include "gateway/pricing/litellm_import.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>

namespace pricing_litellm_import_test {

using namespace gateway;

namespace {

// LiteLLM's real map at upstream commit 579843b4 (tests/data/litellm/README.md).
std::string real_map() {
    std::ifstream in(std::string(CONTEXTGATE_TEST_DATA) +
                     "/litellm/model_prices_and_context_window.json");
    BOOST_TEST_REQUIRE(static_cast<bool>(in));
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

pricing::litellm_import imported(std::string_view json, pricing::litellm_options options = {}) {
    if (options.date.empty()) options.date = "2025-11-01";
    auto out = pricing::import_litellm(json, options);
    BOOST_TEST_REQUIRE(static_cast<bool>(out), out.error);
    return std::move(*out.value);
}

const config::price_entry& entry(const pricing::litellm_import& in, std::string_view model) {
    for (const auto& e : in.prices.models)
        if (e.model == model) return e;
    BOOST_FAIL("no entry for " << model);
    return in.prices.models.front();
}

bool same(const config::price_entry& a, const config::price_entry& b) {
    return a.rates == b.rates && a.long_context == b.long_context;
}

bool has(const pricing::litellm_import& in, std::string_view model) {
    for (const auto& e : in.prices.models)
        if (e.model == model) return true;
    return false;
}

// How the table prints a rate: its shortest form.
std::string printed(double v) {
    char out[32];
    auto [end, ec] = std::to_chars(out, out + sizeof out, v);
    return std::string(out, end);
}

std::string error_of(std::string_view json) {
    auto out = pricing::import_litellm(json, {});
    BOOST_TEST_REQUIRE(!out);
    return out.error;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(litellm_import)

// Per-token prices become per-million ones exactly: multiplying by 1e6 in binary floating point
// gives 1.0499999999999998 for 1.05e-06 and 0.09999999999999999 for 1e-07.
BOOST_AUTO_TEST_CASE(a_per_token_price_becomes_the_exact_per_million_one) {
    BOOST_TEST(printed(1.05e-06 * 1e6) != "1.05");  // the trap itself
    for (auto [per_token, text] :
         std::initializer_list<std::pair<double, std::string_view>>{{3e-06, "3"},
                                                                    {1.05e-06, "1.05"},
                                                                    {1e-07, "0.1"},
                                                                    {1.6e-06, "1.6"},
                                                                    {2.1875e-06, "2.1875"},
                                                                    {3.125e-07, "0.3125"},
                                                                    {1.0172526e-08, "0.010172526"},
                                                                    {0.00021429, "214.29"},
                                                                    {0.0, "0"}}) {
        auto rate = pricing::per_million(per_token);
        BOOST_TEST_REQUIRE(rate.has_value());
        BOOST_TEST(printed(*rate) == text);
    }
    BOOST_TEST(!pricing::per_million(-1e-06).has_value());
    BOOST_TEST(!pricing::per_million(std::numeric_limits<double>::infinity()).has_value());
    // Any price of up to eight digits, printed and moved back six places, is the same number.
    std::mt19937_64 random(54);
    std::uniform_int_distribution<long> digits(1, 99'999'999);
    std::uniform_int_distribution<int> exponent(-14, -3);
    for (int i = 0; i < 20'000; ++i) {
        auto m = digits(random);
        auto e = exponent(random);
        auto text = std::to_string(m) + "e" + std::to_string(e);
        double per_token = std::stod(text);
        auto rate = pricing::per_million(per_token);
        BOOST_TEST_REQUIRE(rate.has_value(), text);
        auto back = std::to_string(m) + "e" + std::to_string(e + 6);
        BOOST_TEST_REQUIRE(*rate == std::stod(back), text);
    }
}

// The real map: the entries of OpenAI, Anthropic and Gemini's API as the file gives them.
BOOST_AUTO_TEST_CASE(the_real_map_gives_its_prices_exactly) {
    auto in = imported(real_map());
    BOOST_TEST(in.prices.date == "2025-11-01");

    const auto& gpt_4o = entry(in, "gpt-4o");
    BOOST_TEST(*gpt_4o.rates.input == 2.5);
    BOOST_TEST(*gpt_4o.rates.output == 10.0);
    BOOST_TEST(*gpt_4o.rates.cache_read == 1.25);
    BOOST_TEST(!gpt_4o.rates.cache_write.has_value());
    BOOST_TEST(gpt_4o.long_context.above == 0);  // batch and priority rates are not carried
    BOOST_TEST(gpt_4o.source == "litellm model_prices_and_context_window.json");

    // Sonnet 4.5's tier gives no 1-hour write (nor does its base): none in either.
    const auto& sonnet = entry(in, "claude-sonnet-4-5");
    BOOST_TEST(*sonnet.rates.input == 3.0);
    BOOST_TEST(*sonnet.rates.output == 15.0);
    BOOST_TEST(*sonnet.rates.cache_read == 0.3);
    BOOST_TEST(*sonnet.rates.cache_write == 3.75);
    BOOST_TEST(!sonnet.rates.cache_write_1h.has_value());
    BOOST_TEST(sonnet.long_context.above == 200'000);
    BOOST_TEST(*sonnet.long_context.rates.input == 6.0);
    BOOST_TEST(*sonnet.long_context.rates.output == 22.5);
    BOOST_TEST(*sonnet.long_context.rates.cache_read == 0.6);
    BOOST_TEST(*sonnet.long_context.rates.cache_write == 7.5);
    BOOST_TEST(same(entry(in, "claude-sonnet-4-5-20250929"), sonnet));

    // 1e-07 per token read from the cache: 0.1, not 0.09999999999999999.
    const auto& haiku = entry(in, "claude-haiku-4-5");
    BOOST_TEST(printed(*haiku.rates.cache_read) == "0.1");
    BOOST_TEST(*haiku.rates.cache_write_1h == 2.0);

    // `gemini/gemini-2.5-pro` (Gemini's API), not Vertex AI's `gemini-2.5-pro`: its tier has no
    // cache read of its own and keeps the base one, as LiteLLM charges it.
    const auto& pro = entry(in, "gemini-2.5-pro");
    BOOST_TEST(*pro.rates.input == 1.25);
    BOOST_TEST(*pro.rates.output == 10.0);
    BOOST_TEST(*pro.rates.cache_read == 0.3125);
    BOOST_TEST(pro.long_context.above == 200'000);
    BOOST_TEST(*pro.long_context.rates.input == 2.5);
    BOOST_TEST(*pro.long_context.rates.output == 15.0);
    BOOST_TEST(*pro.long_context.rates.cache_read == 0.3125);
    BOOST_TEST(*entry(in, "gemini-2.5-flash").rates.reasoning == 2.5);

    // A fine-tuned model is priced by its base.
    const auto& tuned = entry(in, "ft:gpt-4o-2024-08-06:*");
    BOOST_TEST(*tuned.rates.input == 3.75);
    BOOST_TEST(*tuned.rates.output == 15.0);
    BOOST_TEST(!has(in, "gpt-image-1"));                               // image generation
    BOOST_TEST(!has(in, "text-embedding-3-small"));                    // embedding
    BOOST_TEST(!has(in, "anthropic.claude-3-5-haiku-20241022-v1:0"));  // Bedrock
    BOOST_TEST(std::is_sorted(in.prices.models.begin(), in.prices.models.end(),
                              [](const auto& a, const auto& b) { return a.model < b.model; }));
}

// What was left out of the real map, and why, counted.
BOOST_AUTO_TEST_CASE(the_real_maps_report_counts_what_was_left_out) {
    const auto& r = imported(real_map()).report;
    BOOST_TEST(r.entries == 1708u);
    BOOST_TEST(r.kept == 168u);
    BOOST_TEST(r.not_models == 1u);  // sample_spec
    std::size_t others = 0;
    for (const auto& [provider, n] : r.other_providers) others += n;
    BOOST_TEST(others == 1483u);
    BOOST_TEST(r.other_providers.at("bedrock") == 185u);
    BOOST_TEST(r.other_providers.at("azure") == 124u);
    BOOST_TEST(r.other_providers.at("vertex_ai-language-models") == 47u);
    std::size_t modes = 0;
    for (const auto& [mode, n] : r.other_modes) modes += n;
    BOOST_TEST(modes == 55u);
    BOOST_TEST(r.other_modes.at("image_generation") == 32u);
    BOOST_TEST(r.other_modes.at("embedding") == 5u);
    BOOST_TEST(r.no_token_prices == 1u);  // gpt-image-1-mini: chat, but priced per image
    BOOST_TEST(r.unusable.empty());
    BOOST_TEST(r.duplicates == 0u);
    BOOST_TEST(r.free == 14u);  // Gemini's experimental models, at $0 in the file
    BOOST_TEST(r.extra_tiers == 0u);
    BOOST_TEST(r.not_carried.at("input_cost_per_token_batches") == 33u);
    BOOST_TEST(r.kept + r.not_models + others + modes + r.no_token_prices == r.entries);
}

// Where two providers price one name, the one named first wins, and the other is reported.
BOOST_AUTO_TEST_CASE(the_provider_named_first_wins_a_name_two_price) {
    auto map = real_map();
    pricing::litellm_options gemini_first;
    gemini_first.providers = {"gemini", "vertex_ai-language-models"};
    auto in = imported(map, gemini_first);
    BOOST_TEST(*entry(in, "gemini-2.5-pro").rates.cache_read == 0.3125);
    BOOST_TEST(in.report.duplicates == 29u);
    BOOST_TEST(in.report.differing.size() == 14u);
    pricing::litellm_options vertex_first;
    vertex_first.providers = {"vertex_ai-language-models", "gemini"};
    BOOST_TEST(*entry(imported(map, vertex_first), "gemini-2.5-pro").rates.cache_read == 0.125);
}

// Within one provider a key without its prefix wins over the prefixed one, wherever it is.
BOOST_AUTO_TEST_CASE(an_unprefixed_key_wins_over_its_prefixed_duplicate) {
    auto in = imported(R"({
        "groq/llama-3": {"litellm_provider": "groq", "mode": "chat",
                         "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06},
        "llama-3": {"litellm_provider": "groq", "mode": "chat",
                    "input_cost_per_token": 5e-07, "output_cost_per_token": 8e-07}
    })",
                       {{"groq"}, ""});
    BOOST_TEST_REQUIRE(in.prices.models.size() == 1u);
    BOOST_TEST(*in.prices.models[0].rates.input == 0.5);
    BOOST_TEST(in.report.duplicates == 1u);
    BOOST_TEST_REQUIRE(in.report.differing.size() == 1u);
    BOOST_TEST(in.report.differing[0] ==
               "groq/llama-3 (groq) prices `llama-3` unlike llama-3, which is kept");
}

// An entry with a price that is none, a name no request can send, or no token prices is
// reported, not kept; a tier's missing rates are the base ones; of two tiers, the lowest.
BOOST_AUTO_TEST_CASE(entries_that_do_not_map_are_reported_with_their_reason) {
    auto in = imported(R"({
        "sample_spec": {"litellm_provider": "one of https://docs.litellm.ai/docs/providers"},
        "a-string-price": {"litellm_provider": "openai", "mode": "chat",
                           "input_cost_per_token": "1e-06", "output_cost_per_token": 2e-06},
        "a-negative-price": {"litellm_provider": "openai", "mode": "chat",
                             "input_cost_per_token": -1e-06, "output_cost_per_token": 2e-06},
        "a-glob-*": {"litellm_provider": "openai", "mode": "chat",
                     "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06},
        "per-character": {"litellm_provider": "openai", "mode": "chat",
                          "input_cost_per_character": 1e-06},
        "whisper": {"litellm_provider": "openai", "mode": "audio_transcription",
                    "input_cost_per_second": 1e-04},
        "no-mode": {"litellm_provider": "openai", "input_cost_per_token": 1e-06},
        "tiers": {"litellm_provider": "openai", "mode": "responses",
                  "input_cost_per_token": 1e-06, "output_cost_per_token": 4e-06,
                  "cache_read_input_token_cost": 1e-07,
                  "input_cost_per_token_above_200k_tokens": 3e-06,
                  "input_cost_per_token_above_128k_tokens": 2e-06,
                  "output_cost_per_token_above_128k_tokens": 6e-06,
                  "output_cost_per_token_batches": 2e-06},
        "not-a-model": 12
    })");
    const auto& r = in.report;
    BOOST_TEST(r.entries == 9u);
    BOOST_TEST(r.not_models == 2u);
    BOOST_TEST_REQUIRE(r.unusable.size() == 3u);
    BOOST_TEST(r.unusable[0] ==
               "a-string-price: `input_cost_per_token` is not a price in USD per token: \"1e-06\"");
    BOOST_TEST(r.unusable[1] ==
               "a-negative-price: `input_cost_per_token` is not a price in USD per token: -1E-6");
    BOOST_TEST(r.unusable[2] == "a-glob-*: the name holds a glob character (* ? [)");
    BOOST_TEST(r.no_token_prices == 1u);
    BOOST_TEST(r.other_modes.at("audio_transcription") == 1u);
    BOOST_TEST(r.other_modes.at("") == 1u);
    BOOST_TEST(r.extra_tiers == 1u);
    BOOST_TEST(r.not_carried.at("input_cost_per_token_above_200k_tokens") == 1u);
    BOOST_TEST(r.not_carried.at("output_cost_per_token_batches") == 1u);
    BOOST_TEST_REQUIRE(in.prices.models.size() == 1u);
    const auto& tier = in.prices.models[0].long_context;
    BOOST_TEST(tier.above == 128'000);
    BOOST_TEST(*tier.rates.input == 2.0);
    BOOST_TEST(*tier.rates.output == 6.0);
    BOOST_TEST(*tier.rates.cache_read == 0.1);  // the base rate, as LiteLLM charges it
}

// The table made is one the configuration loader reads back as it is.
BOOST_AUTO_TEST_CASE(the_table_made_loads_back_as_it_is) {
    auto in = imported(real_map());
    auto text = config::price_list_yaml(in.prices);
    auto back = config::load_price_list(text, "imported.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(back), back.error);
    BOOST_TEST(back.value->date == "2025-11-01");
    BOOST_TEST_REQUIRE(back.value->models.size() == in.prices.models.size());
    for (std::size_t i = 0; i < in.prices.models.size(); ++i) {
        const auto& a = in.prices.models[i];
        const auto& b = back.value->models[i];
        BOOST_TEST(a.model == b.model);
        BOOST_TEST(a.source == b.source);
        BOOST_TEST(same(a, b), a.model);
    }
}

// A file that is not the map fails, saying where and why.
BOOST_AUTO_TEST_CASE(a_file_that_is_not_the_map_fails_naming_the_problem) {
    BOOST_TEST(error_of("{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}") ==
               "3:14: not JSON: syntax error");
    BOOST_TEST(error_of("{\"gpt-4o\": {\"litellm_provider\": \"openai\"") ==
               "1:41: not JSON: incomplete JSON");
    BOOST_TEST(error_of("") == "1:1: not JSON: incomplete JSON");
    BOOST_TEST(error_of("[1, 2]") ==
               "1:1: not LiteLLM's price map: the file holds an array, not an object of models");
    BOOST_TEST(error_of(R"({"models": [{"model": "gpt-4o", "input": 2.5}]})") ==
               "1:1: not LiteLLM's price map: no member is a model with a `litellm_provider`");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace pricing_litellm_import_test
