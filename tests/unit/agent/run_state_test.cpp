#include "gateway/agent/run_state.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace agent_run_state_test {

using namespace gateway::agent;

BOOST_AUTO_TEST_SUITE(run_state_suite)

BOOST_AUTO_TEST_CASE(a_state_survives_its_stored_form) {
    run_state s;
    s.failed = {assistant_text("garbage"), user_text("Reply with one JSON object.")};
    s.retries = 1;
    s.last_call = "read_file{}";
    s.identical = 2;
    s.tool_errors = 1;
    s.segment_start = 4;
    s.turns = 3;
    s.turn_limit = 8;
    s.turn_start = 2;
    s.left_out = 5;
    s.approved_tools = {"edit_file"};
    s.active_ms = 1234;
    pending_call p;
    p.call_id = "call_1";
    p.tool = "append_file";
    p.parameters = {{"path", "log.txt"}, {"content", "x"}};
    p.asked = true;
    p.requested_at = 1700000000000;
    p.reason = "interrupted";
    p.executing = write_intent{"log.txt", true, "aa", "bb"};
    s.pending = p;
    workflow_progress w;
    w.id = "proofread";
    w.parameters = {{"path", "a.md"}};
    w.next = 2;
    w.phase = workflow_phase::agent;
    w.outputs["read"] = step_output{"text", {{"lines", 3}}, false};
    w.outputs["skip"] = step_output{"", {}, true};
    w.role = "reader";
    s.workflow = w;
    s.usage.calls = 2;
    s.usage.input_tokens = 1500;
    s.usage.cache_read_tokens = 1000;
    s.usage.usd_nano = 1'234'567;
    s.usage.unpriced_calls = 1;

    auto text = serialize_state(s);
    auto back = parse_state(text);
    BOOST_TEST_REQUIRE(back.has_value());
    BOOST_TEST(serialize_state(*back) == text);
    BOOST_TEST(back->version == run_state::current_version);
    BOOST_TEST(back->failed[1].text() == "Reply with one JSON object.");
    BOOST_TEST(back->turns.value_or(0) == 3);
    BOOST_TEST_REQUIRE(back->pending.has_value());
    BOOST_TEST(back->pending->executing->after_sha256 == "bb");
    BOOST_TEST_REQUIRE(back->workflow.has_value());
    BOOST_TEST((back->workflow->phase == workflow_phase::agent));
    BOOST_TEST(back->workflow->outputs.at("skip").skipped);
    BOOST_TEST(back->usage.usd_nano == 1'234'567);
    // The views read the usage alone.
    auto usage = usage_of(text);
    BOOST_TEST(usage.calls == 2);
    BOOST_TEST(usage.cache_read_tokens == 1000);
    BOOST_TEST(usage.unpriced_calls == 1);
}

BOOST_AUTO_TEST_CASE(a_state_from_before_usage_reads_as_none_used) {
    auto before = R"({"version":4,"retries":0,"active_ms":12})";
    auto state = parse_state(before);
    BOOST_TEST_REQUIRE(state.has_value());
    BOOST_TEST(state->usage.calls == 0);
    BOOST_TEST(usage_of(before).usd_nano == 0);
    BOOST_TEST(usage_of("").calls == 0);
    // Nothing used is not written at all.
    BOOST_TEST(serialize_state(*state).find("usage") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_first_releases_state_reads_with_defaults) {
    // As the version 1 engine stored it: no version, a workflow at a tool step, a pending call.
    auto v1 = R"({"failed":[],"retries":0,"workflow":{"id":"explain_file","parameters":
        {"path":"README.md","audience":"a beginner"},"next":0,"phase":"tool","outputs":{}},
        "pending":{"call_id":"call_7","tool":"read_file","parameters":{"path":"README.md"},
        "terminate":false,"asked":false,"workflow_step":"read"},"active_ms":12})";
    auto s = parse_state(v1);
    BOOST_TEST_REQUIRE(s.has_value());
    BOOST_TEST(s->version == run_state::current_version);
    BOOST_TEST((s->workflow->phase == workflow_phase::tool));
    BOOST_TEST(s->pending->workflow_step == "read");
    BOOST_TEST(!s->pending->executing.has_value());
    BOOST_TEST(!s->turns.has_value());
    BOOST_TEST(s->active_ms == 12);
    // A chat run's state at its start, and none at all.
    BOOST_TEST(parse_state(R"({"turns":1})").has_value());
    BOOST_TEST(parse_state("").has_value());
    BOOST_TEST(parse_state("{}").has_value());
}

BOOST_AUTO_TEST_CASE(a_version_3_state_reads_its_failed_attempts_as_typed_messages) {
    auto v3 = R"({"version":3,"failed":[{"role":"assistant","content":"{\"tool\": oops"},
        {"role":"user","content":"Reply with one JSON object."}],"retries":1})";
    auto s = parse_state(v3);
    BOOST_TEST_REQUIRE(s.has_value());
    BOOST_TEST_REQUIRE(s->failed.size() == 2u);
    BOOST_TEST((s->failed[0].who == gateway::providers::role::assistant));
    BOOST_TEST(s->failed[0].text() == "{\"tool\": oops");
    BOOST_TEST(s->failed[1].text() == "Reply with one JSON object.");
    // Stored again, it is this version's form.
    auto again = boost::json::parse(serialize_state(*s));
    BOOST_TEST(again.at("version").as_int64() == run_state::current_version);
    BOOST_TEST(again.at("failed").at(1).at("parts").at(0).at("text").as_string() ==
               "Reply with one JSON object.");
}

BOOST_AUTO_TEST_CASE(unreadable_states_are_errors_not_zeros) {
    for (auto bad :
         {R"({"retries":"three"})", R"({"pending":{"tool":"x"}})",
          R"({"workflow":{"id":"w","phase":"dancing"}})", R"({"segment_start":-1})",
          R"({"failed":[{"content":"no role"}]})", R"({"failed":[{"role":"user","parts":[1]}]})",
          R"({"failed":[{"role":"robot","content":"x"}]})", R"({"failed":{}})", R"([1,2])",
          R"({"version":99})", R"({"usage":{"usd_nano":-5}})", R"({"usage":{"calls":"two"}})",
          R"({"usage":[]})", "{not json"}) {
        BOOST_TEST(!parse_state(bad).has_value(), bad);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_run_state_test
