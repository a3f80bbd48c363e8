#include "gateway/observability/metrics.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>

namespace observability_metrics_test {

using namespace gateway::observability;

BOOST_AUTO_TEST_SUITE(metrics_exposition)

BOOST_AUTO_TEST_CASE(counters_and_gauges_render_with_escaped_labels) {
    family<counter> requests("demo_requests_total", "Requests\\with a \"help\"\nline.",
                             {"route", "status"});
    requests.with({"passthrough", "2xx"}).inc();
    requests.with({"passthrough", "2xx"}).inc(2);
    requests.with({"we\"ird\\\n", "5xx"}).inc();
    family<gauge> open("demo_open", "Open.", {});
    open.with().add(3);
    open.with().add(-1);
    std::string out;
    requests.render(out);
    open.render(out);
    BOOST_TEST(out ==
               "# HELP demo_requests_total Requests\\\\with a \"help\"\\nline.\n"
               "# TYPE demo_requests_total counter\n"
               "demo_requests_total{route=\"passthrough\",status=\"2xx\"} 3\n"
               "demo_requests_total{route=\"we\\\"ird\\\\\\n\",status=\"5xx\"} 1\n"
               "# HELP demo_open Open.\n"
               "# TYPE demo_open gauge\n"
               "demo_open 2\n");
}

BOOST_AUTO_TEST_CASE(histograms_are_cumulative_with_sum_and_count) {
    std::vector<double> bounds{0.1, 1, 10};
    family<histogram> h("demo_seconds", "Time.", {"route"},
                        [&] { return std::make_unique<histogram>(bounds); });
    auto& s = h.with({"a"});
    for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) s.observe(v);
    std::string out;
    h.render(out);
    BOOST_TEST(out ==
               "# HELP demo_seconds Time.\n"
               "# TYPE demo_seconds histogram\n"
               "demo_seconds_bucket{route=\"a\",le=\"0.1\"} 2\n"
               "demo_seconds_bucket{route=\"a\",le=\"1\"} 3\n"
               "demo_seconds_bucket{route=\"a\",le=\"10\"} 4\n"
               "demo_seconds_bucket{route=\"a\",le=\"+Inf\"} 5\n"
               "demo_seconds_sum{route=\"a\"} 55.65\n"
               "demo_seconds_count{route=\"a\"} 5\n");
}

BOOST_AUTO_TEST_CASE(label_sets_are_bounded) {
    family<counter> models(
        "demo_total", "By model.", {"model", "kind"}, [] { return std::make_unique<counter>(); },
        3);
    for (int i = 0; i < 10; ++i) models.with({"model-" + std::to_string(i), "x"}).inc();
    std::string out;
    models.render(out);
    // Three distinct sets, then everything else in one "other" series.
    BOOST_TEST(out.find("model=\"model-2\"") != std::string::npos);
    BOOST_TEST(out.find("model=\"model-3\"") == std::string::npos);
    BOOST_TEST(out.find("demo_total{model=\"other\",kind=\"other\"} 7\n") != std::string::npos,
               out);
}

// A client's model name is a label value: it stays in its own label (the key's separator, CR and
// NUL are replaced), is valid UTF-8, and is at most 256 bytes however long the name was.
BOOST_AUTO_TEST_CASE(label_values_are_bounded_and_cannot_move_into_another_series) {
    family<counter> tokens("demo_tokens_total", "Tokens.", {"model", "type"});
    tokens.with({std::string("m\x1f") + "output", "input"}).inc();
    tokens.with({std::string("a\rb\0c\x7f", 6) + "\xff\xc3", "input"}).inc();
    tokens.with({std::string(40'000, 'x'), "input"}).inc();
    tokens.with({"caf\xc3\xa9", "input"}).inc();
    std::string out;
    tokens.render(out);
    BOOST_TEST(
        out.find("demo_tokens_total{model=\"m?output\",type=\"input\"} 1\n") != std::string::npos,
        out);
    BOOST_TEST(out.find("{model=\"a?b?c???\",type=\"input\"} 1\n") != std::string::npos, out);
    BOOST_TEST(out.find("{model=\"" + std::string(256, 'x') + "\",type=\"input\"} 1\n") !=
               std::string::npos);
    BOOST_TEST(out.find(std::string(257, 'x')) == std::string::npos);
    BOOST_TEST(out.find("caf\xc3\xa9") != std::string::npos);  // UTF-8 is kept
    BOOST_TEST(out.find('\r') == std::string::npos);
    BOOST_TEST(out.find('\0') == std::string::npos);
    BOOST_TEST(out.size() < 2000u);
}

BOOST_AUTO_TEST_CASE(concurrent_updates_are_all_counted) {
    family<counter> c("demo_concurrent_total", "Concurrent.", {"thread"});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) c.with({"same"}).inc();
        });
    for (auto& t : threads) t.join();
    BOOST_TEST(c.with({"same"}).value() == 40000);
}

BOOST_AUTO_TEST_CASE(the_gateway_families_render_and_status_classes) {
    gateway_metrics m;
    m.http_duration.with({"passthrough", "POST", status_class(200)}).observe(0.002);
    auto text = m.render();
    BOOST_TEST(text.find("# TYPE contextgate_http_request_duration_seconds histogram") !=
               std::string::npos);
    BOOST_TEST(text.find("contextgate_http_request_duration_seconds_count{route=\"passthrough\","
                         "method=\"POST\",status=\"2xx\"} 1") != std::string::npos);
    BOOST_TEST(text.find("# TYPE gen_ai_client_token_usage histogram") != std::string::npos);
    BOOST_TEST(text.find("contextgate_agent_runs_active 0") != std::string::npos);
    BOOST_TEST(status_class(404) == "4xx");
    BOOST_TEST(status_class(0) == "other");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace observability_metrics_test
