#include "gateway/agent/agent_loop.hpp"

#include "engine_fixture.hpp"

namespace agent_agent_loop_test {

using namespace engine_test;

BOOST_AUTO_TEST_SUITE(agent_loop_suite)

BOOST_AUTO_TEST_CASE(a_final_answer_ends_the_segment) {
    engine_fixture f;
    f.model.replies = {{"Paris."}};
    auto run = f.new_run("capital of France?");
    f.run_loop(*run);
    BOOST_TEST_REQUIRE(run->ended.has_value());
    BOOST_TEST((run->ended->status == gateway::run_status::completed));
    BOOST_TEST(run->ended->output == "Paris.");
    BOOST_TEST(run->conversation.back().text() == "Paris.");
    std::vector<std::string> expected{"run.started", "model.requested"};
    BOOST_TEST(f.types(run->record.id) == expected, boost::test_tools::per_element());
    // The request: the system prompt, then the conversation.
    auto sent = f.model.messages(0);
    BOOST_TEST(sent[0].at("role").as_string() == "system");
    BOOST_TEST(sent[1].at("content").as_string() == "capital of France?");
}

BOOST_AUTO_TEST_CASE(a_read_call_is_settled_and_its_result_goes_back) {
    engine_fixture f;
    f.model.replies = {{call("read_file", {{"path", "README.md"}})}, {"It has a typo."}};
    auto run = f.new_run("read the readme");
    f.run_loop(*run);
    BOOST_TEST((run->ended->status == gateway::run_status::completed));
    // The last call's model.replied goes out with the run's end, which the loop leaves to its
    // driver.
    std::vector<std::string> expected{"run.started", "model.requested", "model.replied",
                                      "tool.call",   "tool.result",     "model.requested"};
    BOOST_TEST(f.types(run->record.id) == expected, boost::test_tools::per_element());
    auto second = f.model.messages(1);
    auto result = std::string(second.back().at("content").as_string());
    BOOST_TEST(result.find("Result of `read_file`") == 0u, result);
    BOOST_TEST(result.find("teh readme") != std::string::npos);
    BOOST_TEST(run->record.step == 2);
    auto calls = f.wait(f.store->tool_calls(run->record.id));
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    BOOST_TEST((calls[0].status == gateway::tool_call_status::done));
}

BOOST_AUTO_TEST_CASE(a_malformed_reply_is_re_asked_and_leaves_the_history_once_recovered) {
    engine_fixture f;
    f.model.replies = {{R"({"tool": "read_file", "parameters": {"path": )"},
                       {call("read_file", {{"path", "README.md"}})},
                       {"Done."}};
    auto run = f.new_run("read");
    f.run_loop(*run);
    BOOST_TEST((run->ended->status == gateway::run_status::completed));
    auto events = f.events(run->record.id);
    // run.started, model.requested, model.replied (what the malformed reply cost), model.retry
    BOOST_TEST(events[3].at("type").as_string() == "model.retry");
    BOOST_TEST(events[3].at("reason").as_string() == "INVALID_JSON");
    auto reask = f.model.messages(1);
    BOOST_TEST(reask.back().at("content").as_string() == events[3].at("message").as_string());
    auto recovered = f.model.messages(2);
    BOOST_TEST(recovered.size() == reask.size());  // bad reply + feedback out, call + result in
    BOOST_TEST(run->state.failed.empty());
}

BOOST_AUTO_TEST_CASE(limits_steps_identical_calls_and_tool_errors) {
    {
        engine_fixture f;
        f.limits.max_steps = 1;  // read by reference: applies to this fixture's loop
        f.model.replies = {{call("read_file", {{"path", "README.md"}})}, {"Summary so far."}};
        auto run = f.new_run("read");
        run->record.max_steps = 1;
        f.run_loop(*run);
        BOOST_TEST((run->ended->status == gateway::run_status::completed));
        BOOST_TEST(f.model.messages(1).back().at("content").as_string().find(
                       "reached the limit of 1 tool steps") != std::string::npos);
    }
    {
        engine_fixture f;
        for (int i = 0; i < 5; ++i) f.model.replies.push_back({call("list_files", {})});
        auto run = f.new_run("list");
        f.run_loop(*run);
        BOOST_TEST((run->ended->status == gateway::run_status::failed));
        BOOST_TEST(run->ended->error.find("same call to `list_files` 5 times") != std::string::npos,
                   run->ended->error);
        // From the third identical call on, the result carries a warning.
        BOOST_TEST(f.model.messages(3).back().at("content").as_string().find("call number 3") !=
                   std::string::npos);
    }
    {
        engine_fixture f;
        for (auto path : {"a", "b", "c"})
            f.model.replies.push_back({call("read_file", {{"path", path}})});
        auto run = f.new_run("read missing files");
        f.run_loop(*run);
        BOOST_TEST((run->ended->status == gateway::run_status::failed));
        BOOST_TEST(run->ended->error.find("3 tool calls failed in a row") == 0u);
    }
}

BOOST_AUTO_TEST_CASE(upstream_retries_are_announced_and_a_cancel_cuts_the_model_call) {
    engine_fixture f;
    f.model.replies = {{"", "stop", "", true, false}};
    auto run = f.new_run("wait");
    auto done = net::co_spawn(f.io, f.drive_loop(*run), net::use_future);
    f.io.restart();
    while (f.model.bodies.empty()) f.io.run_one();
    run->cancel_requested = true;
    run->canceller.cancel();
    f.io.run();
    done.get();
    BOOST_TEST((run->ended->status == gateway::run_status::cancelled));

    engine_fixture g;
    g.model.replies = {{"Fine.", "stop", "", false, true}};
    auto retried = g.new_run("go");
    g.run_loop(*retried);
    auto events = g.events(retried->record.id);
    BOOST_TEST(events[2].at("type").as_string() == "model.retry");
    BOOST_TEST(events[2].at("reason").as_string() == "UPSTREAM_ERROR");
}

BOOST_AUTO_TEST_CASE(requests_keep_within_the_context_budget_leaving_out_old_turns) {
    engine_fixture f;
    auto run = f.new_run("old question 1");
    run->conversation = {agent::user_text(std::string(400, 'a')), agent::assistant_text("answer 1"),
                         agent::user_text(std::string(400, 'b')), agent::assistant_text("answer 2"),
                         agent::user_text("the current question")};
    run->state.turn_start = 4;
    run->system_prompt = "system";
    f.model.upstream.context_budget = 150;  // 600 bytes: the system prompt, turn 2 and now
    auto request = f.loop->build_request(*run);
    auto messages = json::parse(f.body_of(request.model)).at("messages").as_array();
    BOOST_TEST(messages.size() == 4u);
    BOOST_TEST(messages[1].at("content").as_string() == std::string(400, 'b'));
    BOOST_TEST(messages.back().at("content").as_string() == "the current question");
    BOOST_TEST_REQUIRE(request.trimmed.has_value());
    BOOST_TEST(request.trimmed->at("left_out_messages").to_number<std::int64_t>() == 2);
    // Nothing more left out: nothing more announced.
    BOOST_TEST(!f.loop->build_request(*run).trimmed.has_value());
    // The current turn is never cut, even alone over the budget.
    run->conversation.push_back(agent::assistant_text(std::string(2000, 'c')));
    auto over = json::parse(f.body_of(f.loop->build_request(*run).model)).at("messages").as_array();
    BOOST_TEST(over.size() == 3u);
    BOOST_TEST(over[1].at("content").as_string() == "the current question");
}

// The conversation is typed: calls and results are parts, whichever protocol made them, and each
// request says them in the upstream's protocol, so a chat whose upstream changed mode goes on.
BOOST_AUTO_TEST_CASE(one_conversation_is_said_in_either_tool_protocol) {
    namespace pv = gateway::providers;
    engine_fixture f;
    auto run = f.new_run("read it");
    run->conversation.push_back(
        {pv::role::assistant,
         {pv::part::of_call(agent::protocol_call("call_1", "read_file", {{"path", "a"}}, false))}});
    run->conversation.push_back(
        {pv::role::tool, {pv::part::of_result({"call_1", "read_file", "# A", false})}});
    agent::message turn{pv::role::assistant, {pv::part::of_text("Two more.")}};
    turn.parts.push_back(pv::part::of_call({"toolu_b", "read_file", {{"path", "b"}}, {}}));
    turn.parts.push_back(pv::part::of_call({"toolu_c", "list_files", {}, {}}));
    run->conversation.push_back(turn);
    run->conversation.push_back(
        {pv::role::tool,
         {pv::part::of_result({"toolu_b", "read_file", "`read_file` failed", true})}});
    run->conversation.push_back(
        {pv::role::tool, {pv::part::of_result({"toolu_c", "list_files", "a\nb", false})}});

    f.model.upstream.tool_calling = config::tool_calling_mode::json;
    auto said = json::parse(f.body_of(f.loop->build_request(*run).model)).as_object();
    BOOST_TEST(!said.contains("tools"));
    auto m = said.at("messages").as_array();
    BOOST_TEST_REQUIRE(m.size() == 7u);
    BOOST_TEST(json::parse(m[2].at("content").as_string()).at("tool").as_string() == "read_file");
    BOOST_TEST(m[3].at("role").as_string() == "user");
    BOOST_TEST(m[3].at("content").as_string() == "Result of `read_file`:\n# A");
    BOOST_TEST(json::parse(m[4].at("content").as_string()).at("parameters").at("path") == "b");
    BOOST_TEST(m[5].at("content").as_string() == "`read_file` failed");
    BOOST_TEST(m[6].at("content").as_string() == "Result of `list_files`:\na\nb");

    f.model.upstream.tool_calling = config::tool_calling_mode::native;
    auto native = json::parse(f.body_of(f.loop->build_request(*run).model)).as_object();
    BOOST_TEST(native.at("tools").as_array().size() > 0u);
    auto n = native.at("messages").as_array();
    BOOST_TEST_REQUIRE(n.size() == 7u);
    // The JSON protocol's call goes as a native call under its own id, and its result names it.
    BOOST_TEST(n[2].at("tool_calls").at(0).at("id").as_string() == "call_1");
    BOOST_TEST(n[3].at("role").as_string() == "tool");
    BOOST_TEST(n[3].at("tool_call_id").as_string() == "call_1");
    BOOST_TEST(n[3].at("content").as_string() == "# A");
    BOOST_TEST(n[4].at("content").as_string() == "Two more.");
    BOOST_TEST(n[4].at("tool_calls").as_array().size() == 2u);
    BOOST_TEST(n[6].at("tool_call_id").as_string() == "toolu_c");
}

BOOST_AUTO_TEST_CASE(each_answered_call_is_announced_with_its_cost_and_summed_into_the_run) {
    engine_fixture f;
    f.model.upstream.name = "up0";
    gateway::providers::usage first;
    first.known = true;
    first.input = 1200;
    first.output = 80;
    first.cache_read = 1000;
    first.reasoning = 30;
    gateway::providers::usage second;
    second.known = true;
    second.input = 1400;
    second.output = 20;
    f.model.replies = {{call("read_file", {{"path", "README.md"}})}, {"It has a typo."}};
    f.model.replies[0].used = first;
    f.model.replies[0].cost = {0.0004567891, true, false};
    f.model.replies[1].used = second;  // unpriced, on an estimate
    f.model.replies[1].cost = {0, false, true};
    auto run = f.new_run("read the readme");
    f.run_loop(*run);
    BOOST_TEST_REQUIRE(run->ended.has_value());
    // The last call's event goes out with the run's end.
    f.wait(f.journal->finish(*run, {}));
    std::vector<json::object> replied;
    for (auto& e : f.events(run->record.id))
        if (e.at("type").as_string() == "model.replied") replied.push_back(e);
    BOOST_TEST_REQUIRE(replied.size() == 2u);
    BOOST_TEST(replied[0].at("step").as_int64() == 1);
    BOOST_TEST(replied[0].at("upstream").as_string() == "up0");
    BOOST_TEST(replied[0].at("cost").as_string() == "priced");
    BOOST_TEST(replied[0].at("cost_usd").as_double() == 0.000456789);
    BOOST_TEST(replied[0].at("usage").at("cache_read_tokens").as_int64() == 1000);
    BOOST_TEST(replied[0].at("usage").at("reasoning_tokens").as_int64() == 30);
    BOOST_TEST(replied[1].at("cost").as_string() == "unpriced");
    BOOST_TEST(!replied[1].contains("cost_usd"));
    BOOST_TEST(replied[1].at("usage").at("input_tokens").as_int64() == 1400);
    // The totals, as the run holds them and as its stored state has them.
    for (const auto& totals :
         {run->state.usage, agent::usage_of(f.wait(f.store->run(run->record.id))->state)}) {
        BOOST_TEST(totals.calls == 2);
        BOOST_TEST(totals.input_tokens == 2600);
        BOOST_TEST(totals.output_tokens == 100);
        BOOST_TEST(totals.usd_nano == 456'789);
        BOOST_TEST(totals.unpriced_calls == 1);
        BOOST_TEST(totals.estimated_calls == 1);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_agent_loop_test
