// What a request costs (docs/operations.md "Prices and cost") through the real gateway against the
// fake upstream, which reports the usage the x-fake-usage header gives: the cost in the head of a
// JSON answer (x-contextgate-cost-usd), the access line, the metrics, an unpriced model, a
// translated answer, a cache hit, a reload that changes an override, and a table imported from
// LiteLLM's price map.
#include "tests/integration/harness.hpp"

#include "gateway/observability/log.hpp"
#include "gateway/pricing/litellm_import.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

namespace integration_pricing_test {

using namespace gateway::testing;
namespace config = gateway::config;
namespace observability = gateway::observability;
using namespace std::chrono_literals;

namespace {

// gpt-4o's usage with a cached prompt: 86 x 2.50 + 1920 x 1.25 + 300 x 10.00 = $0.005615.
const std::string cached_usage =
    "x-fake-usage: {\"prompt_tokens\":2006,\"completion_tokens\":300,\"total_tokens\":2306,"
    "\"prompt_tokens_details\":{\"cached_tokens\":1920}}\r\n";

// `stream`: 1 streams with include_usage, 2 streams without it (no usage reported).
response chat(std::uint16_t port, std::string_view model, std::string_view headers = {},
              int stream = 0) {
    client c(port);
    return c.request(
        make_request("POST", "/v1/chat/completions",
                     R"({"model":")" + std::string(model) + R"(",)" +
                         (stream == 1 ? R"("stream":true,"stream_options":{"include_usage":true},)"
                          : stream == 2 ? R"("stream":true,)"
                                        : "") +
                         R"("messages":[{"role":"user","content":"hi"}]})",
                     "Content-Type: application/json\r\n" + std::string(headers)));
}

// The value of a metric series, 0 when it is not there.
double metric(std::uint16_t port, const std::string& series) {
    client c(port);
    auto text = c.request(make_request("GET", "/metrics")).body;
    auto at = text.find("\n" + series + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + 2 + series.size()));
}

// The next access line the follower gets for `model` (written just after the answer).
std::string access_line(observability::access_follower& follower, std::string_view model) {
    auto until = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < until) {
        for (const auto& line : follower.take().lines)
            if (line.find("\"model\":\"" + std::string(model) + "\"") != std::string::npos)
                return line;
        std::this_thread::sleep_for(2ms);
    }
    BOOST_FAIL("no access line for " << model);
    return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pricing)

BOOST_AUTO_TEST_CASE(a_json_answer_carries_its_cost_in_the_head_the_log_and_the_metrics) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    observability::access_follower follower;
    const std::string series = R"(contextgate_cost_usd_total{upstream="up0",model="gpt-4o"})";
    double before = metric(gw.port(), series);

    auto r = chat(gw.port(), "gpt-4o", cached_usage);
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-cost-usd") == "0.005615");
    auto line = access_line(follower, "gpt-4o");
    BOOST_TEST(line.find("\"cost_usd\":0.005615") != std::string::npos, line);
    BOOST_TEST(std::abs(metric(gw.port(), series) - before - 0.005615) < 1e-9);

    // A stream's head goes out before its usage is known: no header, but the log has the cost
    // (the fake's stream reports 9 prompt and 12 completion tokens: 22.5 + 120 = $0.0001425).
    auto streamed = chat(gw.port(), "gpt-4o", {}, 1);
    BOOST_TEST_REQUIRE(streamed.status == 200u, streamed.body);
    BOOST_TEST(streamed.header("x-contextgate-cost-usd").empty());
    auto stream_line = access_line(follower, "gpt-4o");
    BOOST_TEST(stream_line.find("\"cost_usd\":0.0001425") != std::string::npos, stream_line);
    BOOST_TEST(std::abs(metric(gw.port(), series) - before - 0.005615 - 0.0001425) < 1e-9);
    BOOST_TEST(stream_line.find("cost_estimated") == std::string::npos, stream_line);

    // A stream that reports no usage is charged the gateway's estimate, priced and marked so.
    auto unreported = chat(gw.port(), "gpt-4o", {}, 2);
    BOOST_TEST_REQUIRE(unreported.status == 200u, unreported.body);
    auto estimate_line = access_line(follower, "gpt-4o");
    BOOST_TEST(estimate_line.find("\"cost_usd\":0.") != std::string::npos, estimate_line);
    BOOST_TEST(estimate_line.find("\"cost_estimated\":true") != std::string::npos, estimate_line);
}

BOOST_AUTO_TEST_CASE(an_unpriced_model_is_counted_as_unpriced_never_as_zero) {
    fake_upstream fake;
    running_gateway gw(make_config(fake));
    observability::access_follower follower;
    const std::string unpriced =
        R"(contextgate_unpriced_requests_total{upstream="up0",model="house-model-1"})";
    double before = metric(gw.port(), unpriced);
    auto r = chat(gw.port(), "house-model-1");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-cost-usd") == "unpriced");
    auto line = access_line(follower, "house-model-1");
    BOOST_TEST(line.find("\"cost_usd\":null,\"unpriced\":true") != std::string::npos, line);
    BOOST_TEST(metric(gw.port(), unpriced) == before + 1);
    BOOST_TEST(metric(gw.port(),
                      R"(contextgate_cost_usd_total{upstream="up0",model="house-model-1"})") == 0);
}

// A Chat Completions client answered by Anthropic (translated): the cache reads and writes the
// upstream reported are priced at Claude's rates. claude-sonnet-4-5: 50 x 3.00 + 20000 x 0.30
// + 4000 x 3.75 + 6000 x 6.00 + 700 x 15.00 = $0.06765.
BOOST_AUTO_TEST_CASE(a_translated_answer_is_priced_as_its_provider_splits_the_usage) {
    fake_upstream fake;
    running_gateway gw(three_providers(fake, config::auth_mode::replace));
    auto r = chat(gw.port(), "claude-sonnet-4-5",
                  "x-fake-usage: {\"input_tokens\":50,\"cache_creation_input_tokens\":10000,"
                  "\"cache_read_input_tokens\":20000,\"cache_creation\":{"
                  "\"ephemeral_5m_input_tokens\":4000,\"ephemeral_1h_input_tokens\":6000},"
                  "\"output_tokens\":700}\r\n");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(r.header("x-contextgate-cost-usd") == "0.06765");
}

BOOST_AUTO_TEST_CASE(a_cache_hit_costs_nothing) {
    fake_upstream fake;
    auto c = make_config(fake);
    c.upstreams[0].cache.ttl = 10min;
    running_gateway gw(c);
    auto first = chat(gw.port(), "gpt-4o-mini");
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("x-contextgate-cost-usd") == "0.00000855");  // 9 x 0.15 + 12 x 0.60
    std::optional<response> hit;
    for (int i = 0; i < 500 && (!hit || hit->header("x-contextgate-cache") != "hit"); ++i) {
        std::this_thread::sleep_for(5ms);  // stored just after the client had it
        hit = chat(gw.port(), "gpt-4o-mini");
    }
    BOOST_TEST_REQUIRE(hit->header("x-contextgate-cache") == "hit");
    BOOST_TEST(hit->header("x-contextgate-cost-usd") == "0");
}

// POST /admin/reload with a changed override: the next request costs what the new one says.
BOOST_AUTO_TEST_CASE(a_reload_that_changes_an_override_changes_the_next_cost) {
    fake_upstream fake;
    auto folder = temporary_folder();
    auto file = folder + "/gateway.yaml";
    auto yaml = [&](const std::string& input) {
        return "server:\n  listen: 127.0.0.1:0\n  workers: 2\nlogging:\n  access_log: false\n"
               "upstreams:\n  - name: main\n    base_url: " +
               fake.base_url() +
               "\ncontext:\n  data_dir: data\n  prompts_dir: " CONTEXTGATE_SOURCE_DIR
               "/prompts\n  workflows_dir: " CONTEXTGATE_SOURCE_DIR
               "/workflows\nadmin:\n  api_key: admin-key-0123456789\n"
               "pricing:\n  overrides:\n    - {upstream: main, model: \"gpt-4o*\", input: " +
               input + ", output: 10}\n";
    };
    std::ofstream(file) << yaml("2.00");
    auto loaded = config::load_file(file);
    BOOST_TEST_REQUIRE(loaded.error.empty(), loaded.error);
    running_gateway gw(*loaded.value);
    // 9 x 2.00 + 12 x 10 = $0.000138, then 9 x 4.00 + 12 x 10 = $0.000156 on every worker.
    BOOST_TEST(chat(gw.port(), "gpt-4o").header("x-contextgate-cost-usd") == "0.000138");
    std::ofstream(file, std::ios::trunc) << yaml("4.00");
    client c(gw.port());
    auto reloaded = c.request(make_request("POST", "/admin/reload", "",
                                           "Authorization: Bearer admin-key-0123456789\r\n"));
    BOOST_TEST_REQUIRE(reloaded.status == 200u, reloaded.body);
    for (int i = 0; i < 4; ++i)
        BOOST_TEST(chat(gw.port(), "gpt-4o").header("x-contextgate-cost-usd") == "0.000156");
}

// LiteLLM's real map imported (as `contextgate prices import` does), written to a file, named by
// `pricing.file` and read by the configuration loader: its prices are the ones charged. gpt-4-turbo
// is not in the shipped table; LiteLLM gives it 10 in, 30 out and no cache rate (cached tokens
// at input): 2006 x 10 + 300 x 30 = $0.02906.
BOOST_AUTO_TEST_CASE(a_table_imported_from_litellm_prices_requests_as_pricing_file) {
    std::ifstream in(CONTEXTGATE_TEST_DATA "/litellm/model_prices_and_context_window.json");
    std::string map((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto imported = gateway::pricing::import_litellm(map, {.date = "2025-11-01"});
    BOOST_TEST_REQUIRE(static_cast<bool>(imported), imported.error);
    auto folder = temporary_folder();
    std::ofstream(folder + "/litellm.yaml") << config::price_list_yaml(imported.value->prices);
    fake_upstream fake;
    std::ofstream(folder + "/gateway.yaml")
        << "server:\n  listen: 127.0.0.1:0\nlogging:\n  access_log: false\n"
           "upstreams:\n  - name: main\n    base_url: " +
               fake.base_url() +
               "\ncontext:\n  data_dir: data\n  prompts_dir: " CONTEXTGATE_SOURCE_DIR
               "/prompts\n  workflows_dir: " CONTEXTGATE_SOURCE_DIR
               "/workflows\npricing:\n  file: litellm.yaml\n";
    auto loaded = config::load_file(folder + "/gateway.yaml");
    BOOST_TEST_REQUIRE(loaded.error.empty(), loaded.error);
    running_gateway gw(*loaded.value);
    BOOST_TEST(chat(gw.port(), "gpt-4-turbo", cached_usage).header("x-contextgate-cost-usd") ==
               "0.02906");
    BOOST_TEST(chat(gw.port(), "gpt-4o", cached_usage).header("x-contextgate-cost-usd") ==
               "0.005615");
    // The shipped table's globs are gone with it: a dated snapshot LiteLLM does not list.
    BOOST_TEST(chat(gw.port(), "gpt-4o-2099-01-01").header("x-contextgate-cost-usd") == "unpriced");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_pricing_test
