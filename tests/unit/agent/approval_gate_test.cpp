#include "gateway/agent/approval_gate.hpp"

#include "engine_fixture.hpp"

#include "gateway/ids.hpp"
#include "gateway/tools/digest.hpp"

namespace agent_approval_gate_test {

using namespace engine_test;

namespace {

// Puts a pending call on the run, as the loop would.
void pend(engine_fixture& f, agent::live_run& run, std::string tool, json::object parameters) {
    agent::pending_call p;
    p.call_id = gateway::new_id("call");
    p.tool = std::move(tool);
    p.parameters = std::move(parameters);
    run.call = store::tool_call_record{p.call_id,
                                       run.record.id,
                                       1,
                                       p.tool,
                                       json::serialize(p.parameters),
                                       gateway::tool_call_status::pending,
                                       "",
                                       1};
    run.state.pending = p;
    auto b = f.journal->begin(run);
    b.call();
    f.wait(f.journal->checkpoint(run, std::move(b)));
}

// Settles the run's pending call; `decide` is called once, when the run awaits approval.
std::optional<gateway::tools::tool_result> settle(engine_fixture& f, agent::live_run& run,
                                                  std::function<void()> decide = {}) {
    auto done = net::co_spawn(f.io, f.gate->settle(run), net::use_future);
    f.io.restart();
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        f.io.run_one();
        if (decide && run.record.status == gateway::run_status::awaiting_approval &&
            run.state.pending && run.state.pending->asked) {
            auto once = std::move(decide);
            decide = nullptr;
            once();
        }
    }
    return done.get();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(approval_gate_suite)

BOOST_AUTO_TEST_CASE(a_write_waits_for_approval_and_runs_once_approved) {
    engine_fixture f;
    auto run = f.new_run();
    pend(f, *run, "append_file", {{"path", "log.txt"}, {"content", "entry\n"}});
    auto call_id = run->state.pending->call_id;
    auto result = settle(f, *run, [&] {
        auto refused = f.wait(f.gate->decide(*run, call_id, {true, {}, "", false}));
        BOOST_TEST(!refused.has_value());
    });
    BOOST_TEST_REQUIRE(result.has_value());
    BOOST_TEST(result->ok, result->text);
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\nentry\n");
    auto types = f.types(run->record.id);
    std::vector<std::string> expected{"run.started", "approval.required", "approval.resolved"};
    BOOST_TEST(types == expected, boost::test_tools::per_element());
    auto asked = f.events(run->record.id)[1];
    BOOST_TEST(std::string(asked.at("preview").as_string()).find("+entry") != std::string::npos);
    // The approval is stored, and the write's backup with it.
    BOOST_TEST(f.wait(f.store->approval(call_id))->decision == "approve");
    auto backup = f.wait(f.store->last_backup(run->record.id));
    BOOST_TEST_REQUIRE(backup.has_value());
    BOOST_TEST(backup->content == "start\n");
    BOOST_TEST(backup->after_sha256 == gateway::tools::sha256_hex("start\nentry\n"));
}

BOOST_AUTO_TEST_CASE(a_rejection_tells_the_model_and_writes_nothing) {
    engine_fixture f;
    auto run = f.new_run();
    pend(f, *run, "append_file", {{"path", "log.txt"}, {"content", "entry\n"}});
    auto call_id = run->state.pending->call_id;
    auto result = settle(f, *run, [&] {
        f.wait(f.gate->decide(*run, call_id, {false, {}, "not today", false}));
    });
    BOOST_TEST_REQUIRE(result.has_value());
    BOOST_TEST(result->error_code == "DENIED_BY_USER");
    BOOST_TEST(result->text == "The user denied this operation. Their feedback: not today");
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\n");
}

BOOST_AUTO_TEST_CASE(decisions_are_checked) {
    engine_fixture f;
    auto run = f.new_run();
    pend(f, *run, "append_file", {{"path", "log.txt"}, {"content", "x"}});
    auto call_id = run->state.pending->call_id;
    // Not asked yet: nothing is awaited.
    auto early = f.wait(f.gate->decide(*run, call_id, {true, {}, "", false}));
    BOOST_TEST_REQUIRE(early.has_value());
    BOOST_TEST((early->code == gateway::errc::call_not_pending));
    auto result = settle(f, *run, [&] {
        auto wrong = f.wait(f.gate->decide(*run, "call_other", {true, {}, "", false}));
        BOOST_TEST((wrong && wrong->code == gateway::errc::call_not_pending));
        auto invalid =
            f.wait(f.gate->decide(*run, call_id, {true, json::object{{"path", 7}}, "", false}));
        BOOST_TEST_REQUIRE(invalid.has_value());
        BOOST_TEST((invalid->code == gateway::errc::invalid_parameters));
        BOOST_TEST(invalid->message.find("/path") != std::string::npos, invalid->message);
        auto edited = json::object{{"path", "log.txt"}, {"content", "edited\n"}};
        BOOST_TEST(!f.wait(f.gate->decide(*run, call_id, {true, edited, "", false})));
        // Decided already: refused, whether the run has taken the decision up yet or not.
        auto twice = f.wait(f.gate->decide(*run, call_id, {false, {}, "", false}));
        BOOST_TEST_REQUIRE(twice.has_value());
        BOOST_TEST((twice->code == gateway::errc::conflict ||
                    twice->code == gateway::errc::call_not_pending));
    });
    BOOST_TEST(result->ok);
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\nedited\n");  // the edited parameters
}

BOOST_AUTO_TEST_CASE(no_decision_within_the_timeout_fails_the_run) {
    engine_fixture f;
    f.limits.approval_timeout = std::chrono::milliseconds(50);
    auto run = f.new_run();
    pend(f, *run, "append_file", {{"path", "log.txt"}, {"content", "x"}});
    auto result = settle(f, *run);
    BOOST_TEST(!result.has_value());
    BOOST_TEST_REQUIRE(run->ended.has_value());
    BOOST_TEST((run->ended->status == gateway::run_status::failed));
    BOOST_TEST((run->call->status == gateway::tool_call_status::expired));
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\n");
}

BOOST_AUTO_TEST_CASE(policies_never_and_always_and_reads_ask_nobody) {
    engine_fixture f;
    f.limits.approvals = {{"delete_file", config::approval_policy::never},
                          {"append_file", config::approval_policy::always}};
    auto run = f.new_run();
    pend(f, *run, "delete_file", {{"path", "log.txt"}});
    auto never = settle(f, *run);
    BOOST_TEST(never->error_code == "PERMISSION_DENIED");
    pend(f, *run, "append_file", {{"path", "log.txt"}, {"content", "x\n"}});
    auto always = settle(f, *run);
    BOOST_TEST(always->ok);
    pend(f, *run, "read_file", {{"path", "log.txt"}});
    auto read = settle(f, *run);
    BOOST_TEST(read->ok);
    for (const auto& type : f.types(run->record.id)) BOOST_TEST(type != "approval.required");
}

BOOST_AUTO_TEST_CASE(an_interrupted_write_is_judged_from_its_target) {
    auto interrupted = [](engine_fixture& f, agent::live_run& run, std::string now) {
        pend(f, run, "append_file", {{"path", "log.txt"}, {"content", "entry\n"}});
        auto& p = *run.state.pending;
        p.asked = true;
        run.decided = agent::decision{true, {}, "", false};
        p.executing = agent::write_intent{"log.txt", true, gateway::tools::sha256_hex("start\n"),
                                          gateway::tools::sha256_hex("start\nentry\n")};
        write(f.workspace / "log.txt", now);
    };
    {  // happened: recorded, not done again
        engine_fixture f;
        auto run = f.new_run();
        interrupted(f, *run, "start\nentry\n");
        auto result = settle(f, *run);
        BOOST_TEST(result->ok);
        BOOST_TEST(result->data.at("interrupted").as_bool());
        BOOST_TEST(text_of(f.workspace / "log.txt") == "start\nentry\n");
    }
    {  // not happened: done once
        engine_fixture f;
        auto run = f.new_run();
        interrupted(f, *run, "start\n");
        auto result = settle(f, *run);
        BOOST_TEST(result->ok);
        BOOST_TEST(!result->data.contains("interrupted"));
        BOOST_TEST(text_of(f.workspace / "log.txt") == "start\nentry\n");
    }
    {  // neither: asked again, with the reason
        engine_fixture f;
        auto run = f.new_run();
        interrupted(f, *run, "start\nsomething else\n");
        auto call_id = run->state.pending->call_id;
        auto result = settle(f, *run, [&] {
            f.wait(f.gate->decide(*run, call_id, {false, {}, "", false}));
        });
        BOOST_TEST(result->error_code == "DENIED_BY_USER");
        auto asked = f.events(run->record.id).back();
        for (const auto& e : f.events(run->record.id))
            if (e.at("type").as_string() == "approval.required") asked = e;
        BOOST_TEST(asked.at("reason").as_string() == "interrupted");
        BOOST_TEST(text_of(f.workspace / "log.txt") == "start\nsomething else\n");
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_approval_gate_test
