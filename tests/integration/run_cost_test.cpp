// What an agent run's model calls cost: each call priced at settlement from the usage its
// upstream reported (Anthropic's cache reads and writes, OpenAI's cached and reasoning tokens), at
// the price of the upstream that answered and the model it heard, by the price table of the
// configuration the call started in; each call's model.replied event, the run's totals in
// /context/runs/{id}, kept across a restart, and the usage ledger's row for key "context".
#include "tests/integration/context_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

namespace integration_run_cost_test {

using namespace gateway::testing;
namespace config = gateway::config;

namespace {

// A price override, USD per 1M tokens.
config::price_entry price(std::string model, config::token_rates rates) {
    config::price_entry p;
    p.model = std::move(model);
    p.rates = rates;
    return p;
}

// A scripted reply that reports `usage` (JSON in its dialect's terms).
scripted_reply reporting(std::string content, std::string usage) {
    scripted_reply r;
    r.content = std::move(content);
    r.usage = std::move(usage);
    return r;
}

// A USD figure the API gave, in whole nano-dollars (what the gateway sums).
std::int64_t nano(const json::value& usd) {
    return std::llround(usd.to_number<double>() * 1e9);
}

std::vector<sse_event> replied(const std::vector<sse_event>& events) {
    std::vector<sse_event> out;
    for (const auto& e : events)
        if (e.type == "model.replied") out.push_back(e);
    return out;
}

constexpr const char* admin_key = "admin-key-0123456789";

// The usage ledger's report for key "context" (read through /admin/usage, which writes what the
// ledger holds first), its rows by model.
std::map<std::string, json::object> context_usage(context_fixture& f) {
    client c(f.port());
    auto r = c.request(make_request("GET", "/admin/usage?key=context&group_by=model", "",
                                    std::string("Authorization: Bearer ") + admin_key + "\r\n"));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    std::map<std::string, json::object> rows;
    auto report = json::parse(r.body);
    for (const auto& row : report.at("data").as_array())
        rows[std::string(row.at("model").as_string())] = row.as_object();
    return rows;
}

// An Anthropic upstream for the fake (native tool calling), its model heard as `claude-test`,
// priced by an override for that upstream and model; the admin API on.
void anthropic_priced(config::gateway_config& c, const fake_upstream& fake) {
    auto& up = c.upstreams[0];
    up.provider = config::provider_kind::anthropic;
    up.base_url = "http://127.0.0.1:" + std::to_string(fake.port());
    up.endpoint = *config::parse_base_url(up.base_url).value;
    up.api_key = "k";
    up.tool_calling = config::tool_calling_mode::native;
    up.model_map = {{"fake-model", "claude-test"}};
    auto p = price("claude-test", {3.00, 15.00, 0.30, 3.75, {}, {}});
    p.upstream = "up0";
    c.pricing.overrides = {p};
    c.admin.api_key = admin_key;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_cost)

BOOST_AUTO_TEST_CASE(an_anthropic_runs_calls_are_priced_per_step_and_per_run_across_a_restart) {
    context_fixture f([&](config::gateway_config& c) { anthropic_priced(c, f.fake); });
    // Call 1: 100 fresh input tokens, 2000 read from the cache, 500 written to it, 60 out:
    // 100 * 3 + 2000 * 0.30 + 500 * 3.75 + 60 * 15 = 3675 per million, $0.003675.
    auto first = reporting("", R"({"input_tokens":100,"cache_read_input_tokens":2000,)"
                               R"("cache_creation_input_tokens":500,"output_tokens":60})");
    first.calls = {{"replace_in_file", R"({"path":"README.md","find":"teh","replace":"the"})"}};
    // Call 2: 300 * 3 + 2100 * 0.30 + 40 * 15 = 2130 per million, $0.00213.
    auto second =
        reporting("Fixed the typo.", R"({"input_tokens":300,)"
                                     R"("cache_read_input_tokens":2100,"output_tokens":40})");
    f.fake.script({first, second});
    auto run = f.start(f.create_chat(), "fix the typo");
    auto approval = f.wait_for(run, "approval.required");

    // While it waits: the first call's event and the run's totals so far.
    auto before =
        replied(f.events(run, [](const sse_event& e) { return e.type == "approval.required"; }));
    BOOST_TEST_REQUIRE(before.size() == 1u);
    const auto& one = before[0].data;
    BOOST_TEST(one.at("step").as_int64() == 1);
    BOOST_TEST(one.at("upstream").as_string() == "up0");
    BOOST_TEST(one.at("model").as_string() == "claude-test");  // the name the upstream heard
    BOOST_TEST(one.at("cost").as_string() == "priced");
    BOOST_TEST(nano(one.at("cost_usd")) == 3'675'000);
    BOOST_TEST(one.at("usage") == (json::object{{"input_tokens", 2600},
                                                {"output_tokens", 60},
                                                {"cache_read_tokens", 2000},
                                                {"cache_write_tokens", 500},
                                                {"reasoning_tokens", 0}}));
    auto waiting = f.run_state(run);
    BOOST_TEST(waiting.at("model_calls").as_int64() == 1);
    BOOST_TEST(nano(waiting.at("cost_usd")) == 3'675'000);

    // A restart between the two calls: the run resumes with its totals.
    f.gateway.reset();
    f.gateway.emplace(f.config);
    BOOST_TEST(nano(f.run_state(run).at("cost_usd")) == 3'675'000);
    auto r = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");

    // Each model turn is followed by what it cost.
    std::vector<std::string> turns;
    for (const auto& e : all)
        if (e.type.starts_with("model.")) turns.push_back(e.type);
    std::vector<std::string> expected{"model.requested", "model.replied", "model.requested",
                                      "model.replied"};
    BOOST_TEST(turns == expected, boost::test_tools::per_element());
    auto calls = replied(all);
    BOOST_TEST_REQUIRE(calls.size() == 2u);
    BOOST_TEST(calls[1].data.at("step").as_int64() == 2);
    BOOST_TEST(nano(calls[1].data.at("cost_usd")) == 2'130'000);
    BOOST_TEST(calls[1].data.at("usage").at("input_tokens").as_int64() == 2400);
    BOOST_TEST(calls[1].data.at("usage").at("cache_write_tokens").as_int64() == 0);

    auto done = f.run_state(run);
    BOOST_TEST(done.at("model_calls").as_int64() == 2);
    BOOST_TEST(nano(done.at("cost_usd")) == 5'805'000);
    BOOST_TEST(done.at("unpriced_calls").as_int64() == 0);
    BOOST_TEST(done.at("estimated_calls").as_int64() == 0);
    BOOST_TEST(done.at("usage") == (json::object{{"input_tokens", 5000},
                                                 {"output_tokens", 100},
                                                 {"cache_read_tokens", 4100},
                                                 {"cache_write_tokens", 500},
                                                 {"reasoning_tokens", 0}}));
    // The chat's view shows each run with the same totals.
    auto [shown, chat] =
        f.send("GET", "/context/chats/" + std::string(done.at("chat_id").as_string()));
    BOOST_TEST(nano(chat.at("runs").at(0).at("cost_usd")) == 5'805'000);

    // The ledger counted both calls under key "context", with their cost.
    auto ledger = context_usage(f);
    BOOST_TEST_REQUIRE(ledger.count("claude-test") == 1u);
    const auto& row = ledger["claude-test"];
    BOOST_TEST(row.at("requests").as_int64() == 2);
    BOOST_TEST(row.at("input_tokens").as_int64() == 5000);
    BOOST_TEST(row.at("cache_read_tokens").as_int64() == 4100);
    BOOST_TEST(nano(row.at("usd")) == 5'805'000);
    BOOST_TEST(row.at("unpriced_requests").as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(an_unpriced_model_is_unpriced_never_zero) {
    context_fixture f([](config::gateway_config& c) { c.admin.api_key = admin_key; });
    f.fake.script({reporting("Paris.", R"({"prompt_tokens":50,"completion_tokens":7})")});
    auto run = f.start(f.create_chat(), "capital of France?");
    auto calls = replied(f.events(run));
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST(calls[0].data.at("model").as_string() == "fake-model");
    BOOST_TEST(calls[0].data.at("cost").as_string() == "unpriced");
    BOOST_TEST(!calls[0].data.contains("cost_usd"));
    BOOST_TEST(calls[0].data.at("usage").at("input_tokens").as_int64() == 50);
    BOOST_TEST(calls[0].data.at("usage").at("output_tokens").as_int64() == 7);
    auto shown = f.run_state(run);
    BOOST_TEST(shown.at("model_calls").as_int64() == 1);
    BOOST_TEST(shown.at("unpriced_calls").as_int64() == 1);
    BOOST_TEST(shown.at("cost_usd").is_null());  // nothing priced it: no $0
    auto row = context_usage(f).at("fake-model");
    BOOST_TEST(row.at("unpriced_requests").as_int64() == 1);
    BOOST_TEST(nano(row.at("usd")) == 0);
}

BOOST_AUTO_TEST_CASE(a_reply_without_usage_is_charged_the_estimate_and_says_so) {
    context_fixture f([](config::gateway_config& c) {
        c.pricing.overrides = {price("fake-model", {1.00, 2.00, {}, {}, {}, {}})};
    });
    // A scripted OpenAI stream reports no usage.
    f.fake.script({{"Paris is the capital."}});
    auto run = f.start(f.create_chat(), "capital of France?");
    auto calls = replied(f.events(run));
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    const auto& call = calls[0].data;
    BOOST_TEST(call.at("cost").as_string() == "estimated");
    // Output: the reply's 21 bytes / 4, rounded up; input: the request's bytes / 4.
    auto input = call.at("usage").at("input_tokens").as_int64();
    BOOST_TEST(call.at("usage").at("output_tokens").as_int64() == 6);
    BOOST_TEST(input > 100);
    auto expected = input * 1'000 + 6 * 2'000;  // nano-dollars at $1 and $2 per million
    BOOST_TEST(nano(call.at("cost_usd")) == expected);
    auto shown = f.run_state(run);
    BOOST_TEST(shown.at("estimated_calls").as_int64() == 1);
    BOOST_TEST(nano(shown.at("cost_usd")) == expected);
}

BOOST_AUTO_TEST_CASE(a_call_in_flight_across_a_reload_is_priced_by_the_table_it_started_with) {
    // OpenAI's split: 400 of the 1000 prompt tokens cached, 30 of the 100 completion tokens
    // reasoning. At $1 input, $0.50 cached, $2 output and $4 reasoning per million:
    // 600 * 1 + 400 * 0.5 + 70 * 2 + 30 * 4 = 1060 per million, $0.00106; ten times that after
    // the reload.
    auto usage = R"({"prompt_tokens":1000,"completion_tokens":100,)"
                 R"("prompt_tokens_details":{"cached_tokens":400},)"
                 R"("completion_tokens_details":{"reasoning_tokens":30}})";
    auto rates = [](double times) {
        return price("fake-model",
                     {1.00 * times, 2.00 * times, 0.50 * times, {}, {}, 4.00 * times});
    };
    context_fixture f([&](config::gateway_config& c) { c.pricing.overrides = {rates(1)}; });
    auto first = reporting(
        call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}}),
        usage);
    first.delay_ms = 500;  // in flight while the configuration is reloaded
    f.fake.script({first, reporting("Fixed.", usage)});
    auto run = f.start(f.create_chat(), "fix the typo");
    BOOST_TEST_REQUIRE(f.fake.wait_requests(1, 5s));
    auto next = f.config;
    next.pricing.overrides = {rates(10)};
    auto reloaded = f.gateway->server().reload(next);
    BOOST_TEST_REQUIRE(reloaded.error.empty(), reloaded.error);
    // The second call starts after the approval, so after the reload.
    auto approval = f.wait_for(run, "approval.required");
    BOOST_TEST(f.approve(run, std::string(approval.data.at("call_id").as_string())).status == 200u);
    auto calls = replied(f.events(run));
    BOOST_TEST_REQUIRE(calls.size() == 2u);
    BOOST_TEST(nano(calls[0].data.at("cost_usd")) == 1'060'000);
    BOOST_TEST(nano(calls[1].data.at("cost_usd")) == 10'600'000);
    BOOST_TEST(calls[0].data.at("usage").at("cache_read_tokens").as_int64() == 400);
    BOOST_TEST(calls[0].data.at("usage").at("reasoning_tokens").as_int64() == 30);
    BOOST_TEST(nano(f.run_state(run).at("cost_usd")) == 11'660'000);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_run_cost_test
