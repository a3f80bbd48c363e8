#include "gateway/pricing/price_table.hpp"

#include <boost/test/unit_test.hpp>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <string>

namespace pricing_price_table_test {

using namespace gateway;

namespace {

// A file in the temporary folder, removed when it goes.
struct temp_file {
    std::string path;
    explicit temp_file(const std::string& text) {
        path = "/tmp/cg-prices-" + std::to_string(::getpid()) + "-" +
               std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".yaml";
        std::ofstream(path) << text;
    }
    ~temp_file() { std::remove(path.c_str()); }
};

std::shared_ptr<const pricing::price_table> built(const config::pricing_config& c) {
    auto table = pricing::build_prices(c);
    BOOST_TEST_REQUIRE(static_cast<bool>(table), table.error);
    return *table.value;
}

config::price_entry entry(std::string model, double input, double output,
                          std::string upstream = {}) {
    config::price_entry e;
    e.model = std::move(model);
    e.upstream = std::move(upstream);
    e.rates.input = input;
    e.rates.output = output;
    return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pricing_table)

// The shipped table loads, is dated, names a source for every entry, and prices the flagship and
// small models of each provider, dated snapshots by their globs.
BOOST_AUTO_TEST_CASE(the_shipped_table_prices_each_providers_models) {
    auto t = built({});
    BOOST_TEST(t->date().size() == 10u);  // 2026-11-27
    BOOST_TEST(t->size() > 30u);
    for (auto model : {"gpt-5",
                       "gpt-5-mini",
                       "gpt-5-nano",
                       "gpt-4.1",
                       "gpt-4.1-mini",
                       "gpt-4o",
                       "gpt-4o-mini",
                       "o3",
                       "o4-mini",
                       "claude-opus-4-5",
                       "claude-opus-4-1-20250805",
                       "claude-sonnet-4-5-20250929",
                       "claude-sonnet-4-20250514",
                       "claude-3-7-sonnet-20250219",
                       "claude-haiku-4-5",
                       "claude-3-5-haiku-latest",
                       "gemini-2.5-pro",
                       "gemini-2.5-flash",
                       "gemini-2.5-flash-lite",
                       "gemini-2.0-flash"}) {
        const auto* p = t->find("any", model);
        BOOST_TEST_REQUIRE(p != nullptr, model << " has no price");
        BOOST_TEST(p->source.starts_with("https://"), model << " names no source");
    }
    // A dated snapshot takes its own model's price, not a wider glob's.
    BOOST_TEST(*t->find("openai", "gpt-4o-2024-08-06")->rates.input == 2.50);
    BOOST_TEST(*t->find("openai", "gpt-4o-mini-2024-07-18")->rates.input == 0.15);
    BOOST_TEST(*t->find("gemini", "gemini-2.5-flash-lite")->rates.input == 0.10);
    BOOST_TEST(t->find("openai", "gpt-4o-audio-preview") == nullptr);
}

// Bedrock's ids carry a `:` version and a cross-region profile's prefix: each takes its Bedrock
// entry, never an Anthropic glob's price. A geographic Claude profile, whose rates the table
// leaves out, is unpriced rather than charged the global rate.
BOOST_AUTO_TEST_CASE(bedrock_ids_and_profiles_take_their_own_entries) {
    auto t = built({});
    const auto* nova = t->find("bedrock", "us.amazon.nova-pro-v1:0");
    BOOST_TEST_REQUIRE(nova != nullptr);
    BOOST_TEST(nova == t->find("bedrock", "amazon.nova-pro-v1:0"));
    BOOST_TEST(nova->model == "*amazon.nova-pro-v1:*");
    BOOST_TEST(*nova->rates.input == 0.80);
    BOOST_TEST(*nova->rates.output == 3.20);
    BOOST_TEST(*nova->rates.cache_read == 0.20);
    BOOST_TEST(*t->find("bedrock", "apac.amazon.nova-micro-v1:0")->rates.input == 0.035);
    BOOST_TEST(t->find("bedrock", "amazon.nova-2-lite-v1:0") == nullptr);

    const auto* sonnet = t->find("bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    BOOST_TEST_REQUIRE(sonnet != nullptr);
    BOOST_TEST(sonnet->model == "global.anthropic.claude-sonnet-4-5-*");
    BOOST_TEST(*sonnet->rates.input == 3.00);
    BOOST_TEST(*sonnet->rates.cache_write_1h == 6.00);
    BOOST_TEST(sonnet->long_context.above == 200000);
    BOOST_TEST(*sonnet->long_context.rates.output == 22.50);
    BOOST_TEST(t->find("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0") == nullptr);
    BOOST_TEST(t->find("bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0") == nullptr);
}

// Overrides come first, by glob, optionally per upstream; the first that matches wins.
BOOST_AUTO_TEST_CASE(overrides_by_glob_and_per_upstream) {
    config::pricing_config c;
    auto azure = entry("gpt-4o", 2.25, 9.00, "azure");
    azure.rates.cache_read = 1.125;
    c.overrides.push_back(azure);
    c.overrides.push_back(entry("my-finetune-*", 0.30, 1.20));
    c.overrides.push_back(entry("my-finetune-2", 9, 9));  // after the glob: never reached
    auto t = built(c);
    BOOST_TEST(*t->find("azure", "gpt-4o")->rates.input == 2.25);
    BOOST_TEST(*t->find("azure", "gpt-4o")->rates.cache_read == 1.125);
    BOOST_TEST(*t->find("openai", "gpt-4o")->rates.input == 2.50);  // the table's
    BOOST_TEST(*t->find("openai", "my-finetune-2")->rates.input == 0.30);
    BOOST_TEST(t->find("openai", "my-other-model") == nullptr);
}

// pricing.file replaces the shipped table: what it does not list is unpriced.
BOOST_AUTO_TEST_CASE(a_pricing_file_replaces_the_table) {
    temp_file f(R"(date: 2026-01-01
models:
  - {model: house-model, input: 1.5, output: 3, source: "https://example.com/prices"}
  - model: "house-*"
    input: 0.5
    output: 1
    long_context: {above: 1000, input: 1, output: 2}
)");
    config::pricing_config c;
    c.file = f.path;
    auto t = built(c);
    BOOST_TEST(t->date() == "2026-01-01");
    BOOST_TEST(t->origin() == f.path);
    BOOST_TEST(*t->find("x", "house-model")->rates.input == 1.5);
    BOOST_TEST(t->find("x", "house-small")->long_context.above == 1000);
    BOOST_TEST(t->find("x", "gpt-4o") == nullptr);
}

// A broken price file is refused with its file and line, and so is an entry without prices.
BOOST_AUTO_TEST_CASE(a_broken_pricing_file_is_refused_with_file_and_line) {
    struct bad {
        std::string text;
        std::string line;
        std::string says;
    };
    for (const auto& b : std::vector<bad>{
             {"date: 2026-01-01\nmodels:\n  - model: a\n    input: cheap\n    output: 1\n",
              ":4:", "price in USD per 1M tokens"},
             {"models:\n  - {model: a, input: 1}\n", ":2:", "`input` and `output` are required"},
             {"models:\n  - {model: a, input: 1, output: -2}\n", ":2:", "not `-2`"},
             {"models:\n  - {model: a, input: 1, output: 2, price: 3}\n", ":2:", "price"},
             {"date: x\nmodel:\n  - {model: a}\n", ":2:", "unknown key `model`"},
             {"models:\n  - {model: a, input: 1, output: 2,\n", ":", ""},
             {"models:\n  - {model: a, input: 1, output: 2, long_context: {input: 2}}\n",
              ":2:", "long_context"}}) {
        temp_file f(b.text);
        config::pricing_config c;
        c.file = f.path;
        auto t = pricing::build_prices(c);
        BOOST_TEST_REQUIRE(!t, b.text);
        BOOST_TEST(t.error.starts_with(f.path + b.line), t.error);
        BOOST_TEST(t.error.find(b.says) != std::string::npos, t.error);
    }
    config::pricing_config missing;
    missing.file = "/nonexistent/prices.yaml";
    auto t = pricing::build_prices(missing);
    BOOST_TEST(!t);
    BOOST_TEST(t.error.starts_with("/nonexistent/prices.yaml: cannot open"));
}

// The pricing section of the configuration: overrides read with their lines, an override's
// upstream must be one of the configuration's.
BOOST_AUTO_TEST_CASE(the_pricing_section_is_read_and_checked) {
    std::string base = R"(upstreams:
  - name: azure
    base_url: https://example.openai.azure.com/v1
)";
    auto loaded = config::load_string(base + R"(pricing:
  overrides:
    - {upstream: azure, model: "gpt-4o", input: 2.25, output: 9.00, cache_read: 1.125}
    - {model: "my-finetune-*", input: 0.30, output: 1.20}
)",
                                      "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& o = loaded.value->pricing.overrides;
    BOOST_TEST_REQUIRE(o.size() == 2u);
    BOOST_TEST(o[0].upstream == "azure");
    BOOST_TEST(*o[0].rates.cache_read == 1.125);
    BOOST_TEST(!o[1].rates.cache_read.has_value());
    auto refused = config::load_string(base + R"(pricing:
  overrides:
    - {upstream: openai, model: "gpt-4o", input: 2.25, output: 9.00}
)",
                                       "test.yaml");
    BOOST_TEST(!refused);
    BOOST_TEST(refused.error.starts_with("test.yaml:6:"), refused.error);
    BOOST_TEST(refused.error.find("no upstream is named `openai`") != std::string::npos);
    auto printed = config::to_yaml(*loaded.value);
    BOOST_TEST(printed.find("cache_read: 1.125") != std::string::npos, printed);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace pricing_price_table_test
