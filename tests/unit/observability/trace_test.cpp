#include "gateway/observability/trace.hpp"
#include "gateway/ids.hpp"
#include "gateway/observability/metrics.hpp"

#include <boost/test/unit_test.hpp>

namespace observability_trace_test {

using namespace gateway::observability;
using gateway::config::tracing_config;

namespace {

// Tracing on, towards a port nothing listens on (nothing is exported in these tests: the
// interval is long, and what is left at the stop is dropped at once).
tracing_config quiet_tracing(double ratio, std::size_t queue = 2048) {
    tracing_config t;
    t.otlp_endpoint = "http://127.0.0.1:1";
    t.endpoint.host = "127.0.0.1";
    t.endpoint.port = 1;
    t.endpoint.base_path = "/v1/traces";
    t.sample_ratio = ratio;
    t.max_queue_spans = queue;
    t.export_interval = std::chrono::hours(1);
    return t;
}

struct tracing_on {
    explicit tracing_on(tracing_config t) { start_tracing(t); }
    ~tracing_on() { stop_tracing(std::chrono::milliseconds(0)); }
};

double dropped(std::string_view reason) {
    return metrics().trace_spans_dropped.with({reason}).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(traces)

BOOST_AUTO_TEST_CASE(traceparent_is_read_as_w3c_trace_context_says) {
    auto read = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                                  "congo=t61rcWkgMzE");
    BOOST_REQUIRE(read);
    BOOST_TEST(gateway::to_hex(read->trace_id.data(), 16) == "4bf92f3577b34da6a3ce929d0e0e4736");
    BOOST_TEST(gateway::to_hex(read->span_id.data(), 8) == "00f067aa0ba902b7");
    BOOST_TEST(read->sampled);
    BOOST_TEST(read->state == "congo=t61rcWkgMzE");
    BOOST_TEST(traceparent(*read) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    BOOST_TEST(trace_fields(*read) ==
               "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n"
               "tracestate: congo=t61rcWkgMzE\r\n");

    auto unsampled = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    BOOST_REQUIRE(unsampled);
    BOOST_TEST(!unsampled->sampled);
    // A later version may add fields after a dash; it is read as version 00.
    BOOST_TEST(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what")
                   .has_value());

    for (std::string_view bad : {
             "",
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
             "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // uppercase
             "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
             "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero span id
             "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // 00 with more
             "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",   // no dash after
             "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",    // not hex
             "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // separator
         })
        BOOST_TEST(!parse_traceparent(bad).has_value(), bad);
}

BOOST_AUTO_TEST_CASE(nothing_is_recorded_while_tracing_is_off) {
    BOOST_REQUIRE(!tracing());
    auto root = start_span("GET /", span_kind::server);
    BOOST_TEST(!root.recording());
    BOOST_TEST(root.context() == nullptr);
    auto child = root.child("chat m", span_kind::client);
    BOOST_TEST(!child.recording());
    child.set("a", "b");  // no effect, no failure
    child.fail("x");
}

BOOST_AUTO_TEST_CASE(children_share_the_trace_and_a_client_parent_decides_sampling) {
    tracing_on on(quiet_tracing(1.0));
    auto root = start_span("GET /", span_kind::server);
    BOOST_REQUIRE(root.recording());
    auto child = root.child("chat m", span_kind::client);
    BOOST_REQUIRE(child.recording());
    BOOST_TEST((child.context()->trace_id == root.context()->trace_id));
    BOOST_TEST((child.context()->span_id != root.context()->span_id));

    auto parent =
        parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=1");
    auto under = start_span("POST /v1/chat/completions", span_kind::server, &*parent);
    BOOST_REQUIRE(under.recording());
    BOOST_TEST((under.context()->trace_id == parent->trace_id));
    BOOST_TEST((under.context()->span_id != parent->span_id));
    BOOST_TEST(under.context()->state == "vendor=1");
    BOOST_TEST(under.child("x", span_kind::client).context()->state == "vendor=1");

    parent->sampled = false;  // the client's trace is not recorded: neither is the gateway's part
    BOOST_TEST(!start_span("GET /", span_kind::server, &*parent).recording());
}

BOOST_AUTO_TEST_CASE(a_refused_caller_is_traced_only_as_the_gateway_samples) {
    auto parent = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    {
        // sample_ratio 0: the caller's sampled flag alone had it recorded; refused, it is not.
        tracing_on on(quiet_tracing(0.0));
        auto refused = start_span("POST /v1", span_kind::server, &*parent);
        BOOST_REQUIRE(refused.recording());
        refused.caller_refused();
        BOOST_TEST(!refused.recording());
        BOOST_TEST(refused.context() == nullptr);
        refused.end();  // nothing to queue, no failure

        auto admitted = start_span("POST /v1", span_kind::server, &*parent);
        BOOST_TEST(admitted.recording());  // let in: the caller's flag still decides
    }
    {
        // The gateway's own sampler would record this trace: refusing the caller changes nothing.
        tracing_on on(quiet_tracing(1.0));
        auto under = start_span("POST /v1", span_kind::server, &*parent);
        under.caller_refused();
        BOOST_TEST(under.recording());
        auto own = start_span("POST /v1", span_kind::server);
        own.caller_refused();
        BOOST_TEST(own.recording());
    }
}

BOOST_AUTO_TEST_CASE(new_traces_are_sampled_at_the_ratio) {
    tracing_on on(quiet_tracing(0.25, 1'000'000));
    int recorded = 0;
    for (int i = 0; i < 4000; ++i)
        if (start_span("GET /", span_kind::server).recording()) ++recorded;
    BOOST_TEST(recorded > 800);  // 1000 expected; 6 standard deviations either side
    BOOST_TEST(recorded < 1200);
}

BOOST_AUTO_TEST_CASE(a_full_queue_drops_spans_and_counts_them) {
    tracing_on on(quiet_tracing(1.0, 5));
    auto before = dropped("queue_full");
    for (int i = 0; i < 8; ++i) start_span("GET /", span_kind::server).end();
    BOOST_TEST(dropped("queue_full") - before == 3);
}

BOOST_AUTO_TEST_CASE(content_is_bounded_at_a_character_boundary) {
    std::string text(16 * 1024 - 1, 'a');
    text += "é and more";  // é straddles the bound
    auto kept = bounded_content(text);
    BOOST_TEST(kept.starts_with(std::string(16 * 1024 - 1, 'a')));
    BOOST_TEST(kept.substr(16 * 1024 - 1) == "…[cut]");
    BOOST_TEST(bounded_content("short") == "short");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace observability_trace_test
