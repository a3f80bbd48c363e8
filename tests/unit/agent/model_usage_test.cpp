#include "gateway/agent/model_usage.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace agent_model_usage_test {

using namespace gateway::agent;
namespace providers = gateway::providers;

BOOST_AUTO_TEST_SUITE(model_usage_suite)

namespace {

providers::usage reported(std::int64_t input, std::int64_t output) {
    providers::usage u;
    u.known = true;
    u.input = input;
    u.output = output;
    return u;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_call_counts_its_tokens_and_its_cost_in_nano_dollars) {
    auto used = reported(1300, 250);
    used.cache_read = 1000;
    used.cache_write = 100;
    used.cache_write_1h = 50;
    used.reasoning = 40;
    auto call = model_usage::of_call(used, {0.0012345674, true, false});
    BOOST_TEST(call.calls == 1);
    BOOST_TEST(call.input_tokens == 1300);
    BOOST_TEST(call.output_tokens == 250);
    BOOST_TEST(call.cache_read_tokens == 1000);
    BOOST_TEST(call.cache_write_tokens == 150);  // both caches' writes
    BOOST_TEST(call.reasoning_tokens == 40);
    BOOST_TEST(call.usd_nano == 1'234'567);  // rounded to the nearest nano-dollar
    BOOST_TEST(call.unpriced_calls == 0);
    BOOST_TEST(call.estimated_calls == 0);
    auto shown = tokens_json(call);
    BOOST_TEST(shown.at("cache_write_tokens").as_int64() == 150);
    BOOST_TEST(shown.size() == 5u);
    BOOST_TEST(cost_usd_json(call).as_double() == 0.001234567);
}

BOOST_AUTO_TEST_CASE(an_unpriced_call_adds_no_dollars_and_is_counted) {
    auto call = model_usage::of_call(reported(10, 5), {0, false, true});
    BOOST_TEST(call.usd_nano == 0);
    BOOST_TEST(call.unpriced_calls == 1);
    BOOST_TEST(call.estimated_calls == 1);
    // Never $0: nothing priced it.
    BOOST_TEST(cost_usd_json(call).is_null());
}

BOOST_AUTO_TEST_CASE(a_runs_totals_are_the_sum_of_its_calls) {
    model_usage run;
    BOOST_TEST(cost_usd_json(run).as_double() == 0.0);  // no call, no cost
    run += model_usage::of_call(reported(100, 10), {0.000001, true, false});
    run += model_usage::of_call(reported(200, 20), {0.000002, true, true});
    run += model_usage::of_call(reported(300, 30), {0, false, false});
    BOOST_TEST(run.calls == 3);
    BOOST_TEST(run.input_tokens == 600);
    BOOST_TEST(run.output_tokens == 60);
    BOOST_TEST(run.usd_nano == 3000);
    BOOST_TEST(run.unpriced_calls == 1);
    BOOST_TEST(run.estimated_calls == 1);
    // Some calls priced: their sum, beside the count of those that were not.
    BOOST_TEST(cost_usd_json(run).as_double() == 0.000003);
}

BOOST_AUTO_TEST_CASE(negative_token_figures_count_zero) {
    auto call = model_usage::of_call(reported(-5, 7), {0, false, false});
    BOOST_TEST(call.input_tokens == 0);
    BOOST_TEST(call.output_tokens == 7);
}

BOOST_AUTO_TEST_CASE(the_stored_form_reads_back_and_refuses_what_is_no_count) {
    auto call = model_usage::of_call(reported(10, 5), {0.5, true, false});
    auto stored = boost::json::value_from(call);
    auto back = boost::json::try_value_to<model_usage>(stored);
    BOOST_TEST_REQUIRE(back.has_value());
    BOOST_TEST(back->usd_nano == 500'000'000);
    BOOST_TEST(boost::json::serialize(boost::json::value_from(*back)) ==
               boost::json::serialize(stored));
    for (auto bad : {R"({"calls":-1})", R"({"usd_nano":1.5})", R"({"input_tokens":"9"})", "[]"})
        BOOST_TEST(!boost::json::try_value_to<model_usage>(boost::json::parse(bad)).has_value(),
                   bad);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_model_usage_test
