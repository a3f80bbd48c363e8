// The Context API end to end in-process: the real gateway, its SQLite store on disk, real tools on
// a temporary workspace, and the scripted fake upstream as the model.
#include "tests/integration/context_fixture.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace integration_context_test {

using namespace gateway::testing;
namespace json = boost::json;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(context_api)

BOOST_AUTO_TEST_CASE(typo_scenario_search_read_edit_approved_summary) {
    context_fixture f;
    f.fake.script(
        {{call("search_files", {{"pattern", "teh"}})},
         {call("read_file", {{"path", "README.md"}})},
         {call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Fixed the typo `teh` in README.md (line 3)."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "fix the typo 'teh' in README.md");
    auto approval = f.wait_for(run, "approval.required");
    BOOST_TEST(approval.data.at("tool").as_string() == "replace_in_file");
    BOOST_TEST(approval.data.at("step").as_int64() == 3);
    BOOST_TEST(approval.data.at("max_steps").as_int64() == 10);
    auto preview = std::string(approval.data.at("preview").as_string());
    BOOST_TEST(preview.find("-This is teh readme.") != std::string::npos, preview);
    BOOST_TEST(preview.find("+This is the readme.") != std::string::npos, preview);
    // Nothing is written before the human says so.
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    BOOST_TEST(f.run_state(run).at("status").as_string() == "awaiting_approval");

    auto call_id = std::string(approval.data.at("call_id").as_string());
    auto decided = f.approve(run, call_id);
    BOOST_TEST(decided.status == 200u, decided.body);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");

    auto types = types_of(all);
    std::vector<std::string> expected{"run.started",       "model.requested",   "model.replied",
                                      "tool.call",         "tool.result",       "model.requested",
                                      "model.replied",     "tool.call",         "tool.result",
                                      "model.requested",   "model.replied",     "tool.call",
                                      "approval.required", "approval.resolved", "tool.result",
                                      "model.requested",   "message.delta",     "message.delta",
                                      "model.replied",     "message",           "run.completed"};
    BOOST_TEST(types == expected, boost::test_tools::per_element());
    // The answer streamed as it was generated, then came whole; calls never streamed.
    BOOST_TEST(std::string(all[16].data.at("text").as_string()) +
                   std::string(all[17].data.at("text").as_string()) ==
               all[19].data.at("content").as_string());
    for (std::size_t i = 0; i < all.size(); ++i) {
        BOOST_TEST(all[i].id == static_cast<std::int64_t>(i + 1));
        BOOST_TEST(all[i].data.at("run_id").as_string() == run);
        BOOST_TEST(all[i].data.contains("step"));
        BOOST_TEST(all[i].data.at("max_steps").as_int64() == 10);
    }
    auto state = f.run_state(run);
    BOOST_TEST(state.at("status").as_string() == "completed");
    BOOST_TEST(state.at("output").as_string() == "Fixed the typo `teh` in README.md (line 3).");
    BOOST_TEST(state.at("tool_calls").as_array().size() == 3u);

    // What the model was sent: the enhanced prompt, then each result in turn.
    BOOST_TEST(f.fake.scripted_requests().size() == 4u);
    auto first = f.model_messages(0);
    BOOST_TEST(first[0].at("role").as_string() == "system");
    BOOST_TEST(std::string_view(first[0].at("content").as_string()).find("## Tools") !=
               std::string_view::npos);
    BOOST_TEST(last_content(first) == "fix the typo 'teh' in README.md");
    BOOST_TEST(last_content(f.model_messages(1)).find("README.md:3:") != std::string::npos);
    BOOST_TEST(last_content(f.model_messages(3)).find("Result of `replace_in_file`") == 0u);

    // The chat keeps the conversation: the user's message and the final answer.
    auto [r, j] = f.send("GET", "/context/chats/" + chat);
    auto messages = j.at("messages").as_array();
    BOOST_TEST(messages.size() == 2u);
    BOOST_TEST(messages[1].at("content").as_string() ==
               "Fixed the typo `teh` in README.md (line 3).");
}

BOOST_AUTO_TEST_CASE(document_scenario_edit_arrives_as_an_event) {
    context_fixture f;
    auto chat = f.create_chat({{"system_prompt", "writing"}});
    auto [put, put_json] =
        f.send("PUT", "/context/chats/" + chat + "/document",
               json::object{{"name", "essay.md"}, {"content", "Intro.\n\nThe end is neigh.\n"}});
    BOOST_TEST_REQUIRE(put.status == 200u, put.body);
    BOOST_TEST(put_json.at("version").as_int64() == 1);
    f.fake.script({{call("edit_document", {{"find", "neigh"}, {"replace", "nigh"}})},
                   {"Corrected \"neigh\" to \"nigh\"."}});
    auto run = f.start(chat, "fix the homophone");
    auto approval = f.wait_for(run, "approval.required");
    BOOST_TEST(std::string(approval.data.at("preview").as_string()).find("+The end is nigh.") !=
               std::string::npos);
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    const sse_event* update = nullptr;
    for (const auto& e : all)
        if (e.type == "document.updated") update = &e;
    BOOST_TEST_REQUIRE(update);
    BOOST_TEST(update->data.at("content").as_string() == "Intro.\n\nThe end is nigh.\n");
    BOOST_TEST(update->data.at("version").as_int64() == 2);
    BOOST_TEST(std::string(update->data.at("diff").as_string()).find("-The end is neigh.") !=
               std::string::npos);
    auto [got, doc] = f.send("GET", "/context/chats/" + chat + "/document");
    BOOST_TEST(doc.at("content").as_string() == "Intro.\n\nThe end is nigh.\n");
    BOOST_TEST(doc.at("version").as_int64() == 2);
}

BOOST_AUTO_TEST_CASE(every_malformed_class_is_retried_with_its_reason_then_recovers) {
    struct bad {
        scripted_reply reply;
        std::string reason;
    };
    std::vector<bad> cases{
        {{R"(I will call {"tool": "read_file", "parameters": {"path": "README.md"})"},
         "INVALID_JSON"},
        {{R"({"tool": "read_file", "parameters": {"path": "a"}} {"tool": "read_file", "parameters": {"path": "b"}})"},
         "MULTIPLE_CALLS"},
        {{call("rm_rf", {{"path", "/"}})}, "UNKNOWN_TOOL"},
        {{call("read_file", {{"start_line", 1}})}, "SCHEMA_VIOLATION"},
        {{R"({"tool": "read_file", "parameters": {"path": "REA)", "length"}, "TRUNCATED"},
        {{R"(Let me look: read_file(path="README.md"))"}, "NO_JSON"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.reason) {
            context_fixture f;
            f.fake.script({c.reply, {call("read_file", {{"path", "README.md"}})}, {"Done."}});
            auto run = f.start(f.create_chat(), "read the readme");
            auto all = f.events(run);
            BOOST_TEST(all.back().type == "run.completed");
            const sse_event* retry = nullptr;
            for (const auto& e : all)
                if (e.type == "model.retry") retry = &e;
            BOOST_TEST_REQUIRE(retry);
            BOOST_TEST(retry->data.at("reason").as_string() == c.reason);
            BOOST_TEST(!retry->data.at("message").as_string().empty());
            // The re-ask carried the feedback after the bad reply...
            auto reask = f.model_messages(1);
            BOOST_TEST(last_content(reask) == std::string(retry->data.at("message").as_string()));
            // ...and once the model recovered, the failed attempt left the history.
            auto after = f.model_messages(2);
            BOOST_TEST(!mentions(after, std::string(retry->data.at("message").as_string())));
            BOOST_TEST(after.size() == reask.size());  // bad + feedback out, call + result in
        }
    }
}

BOOST_AUTO_TEST_CASE(fourth_malformed_reply_in_a_row_fails_the_run_with_that_error) {
    context_fixture f;
    f.fake.script({{"{\"tool\": \"read_file\", \"parameters\": {"},
                   {"{\"tool\": \"read_file\", \"parameters\": {"},
                   {"{\"tool\": \"read_file\", \"parameters\": {"},
                   {"{\"tool\": \"read_file\", \"parameters\": {"}});
    auto run = f.start(f.create_chat(), "read");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    auto error = std::string(all.back().data.at("error").as_string());
    BOOST_TEST(error.find("4 times in a row") != std::string::npos, error);
    BOOST_TEST(error.find("INVALID_JSON") != std::string::npos, error);
    BOOST_TEST(f.fake.scripted_requests().size() == 4u);
    BOOST_TEST(f.run_state(run).at("error").as_string() == error);
}

BOOST_AUTO_TEST_CASE(the_next_message_is_taken_as_soon_as_the_end_is_heard) {
    // A watcher may read the run's end from the store a moment before the run lets go of its
    // chat; the next message then waits for that moment instead of being refused with 409.
    // (A race: before the fix about one ending in ten was refused here.)
    context_fixture f;
    auto chat = f.create_chat();
    for (int i = 0; i < 40; ++i) {
        f.fake.script({{"answer " + std::to_string(i)}});
        auto run = f.start(chat, "turn " + std::to_string(i));
        BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    }
}

BOOST_AUTO_TEST_CASE(direct_answer_without_a_tool_call) {
    context_fixture f;
    f.fake.script({{"Paris is the capital of France."}});
    auto run = f.start(f.create_chat(), "capital of France?");
    auto all = f.events(run);
    auto types = types_of(all);
    std::vector<std::string> expected{"run.started",   "model.requested", "message.delta",
                                      "message.delta", "model.replied",   "message",
                                      "run.completed"};
    BOOST_TEST(types == expected, boost::test_tools::per_element());
    BOOST_TEST(all[5].data.at("content").as_string() == "Paris is the capital of France.");
    BOOST_TEST(f.run_state(run).at("output").as_string() == "Paris is the capital of France.");
}

BOOST_AUTO_TEST_CASE(reject_with_feedback_tells_the_model_and_changes_nothing) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "gone"}})},
                   {"Understood, I left the file alone."}});
    auto run = f.start(f.create_chat(), "rewrite the readme");
    auto approval = f.wait_for(run, "approval.required");
    auto r = f.approve(run, std::string(approval.data.at("call_id").as_string()),
                       {{"decision", "reject"}, {"feedback", "keep the title"}});
    BOOST_TEST(r.status == 200u, r.body);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    auto told = last_content(f.model_messages(1));
    BOOST_TEST(told == "The user denied this operation. Their feedback: keep the title");
    auto calls = f.run_state(run).at("tool_calls").as_array();
    BOOST_TEST(calls[0].at("status").as_string() == "rejected");
}

BOOST_AUTO_TEST_CASE(approve_with_scope_run_skips_later_approvals_of_that_tool) {
    context_fixture f;
    f.fake.script({{call("append_file", {{"path", "notes.txt"}, {"content", "one"}})},
                   {call("append_file", {{"path", "notes.txt"}, {"content", "two"}})},
                   {call("create_file", {{"path", "other.txt"}, {"content", "x"}})},
                   {"Done."}});
    auto run = f.start(f.create_chat(), "take notes");
    auto first = f.wait_for(run, "approval.required");
    f.approve(run, std::string(first.data.at("call_id").as_string()),
              {{"decision", "approve"}, {"scope", "run"}});
    // The second append runs without asking; create_file still asks.
    auto second = f.events(
        run, [](const sse_event& e) { return e.type == "approval.required" && e.id > 0; },
        first.id);
    BOOST_TEST_REQUIRE(second.back().type == "approval.required");
    BOOST_TEST(second.back().data.at("tool").as_string() == "create_file");
    BOOST_TEST(read_text(f.workspace / "notes.txt") == "one\ntwo");
    f.approve(run, std::string(second.back().data.at("call_id").as_string()));
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "other.txt") == "x");
}

BOOST_AUTO_TEST_CASE(edited_parameters_are_validated_and_used) {
    context_fixture f;
    f.fake.script(
        {{call("create_file", {{"path", "a.txt"}, {"content", "model text"}})}, {"Created."}});
    auto run = f.start(f.create_chat(), "create a file");
    auto approval = f.wait_for(run, "approval.required");
    auto id = std::string(approval.data.at("call_id").as_string());
    auto bad = f.approve(run, id, {{"decision", "approve"}, {"parameters", {{"path", 7}}}});
    BOOST_TEST(bad.status == 400u);
    BOOST_TEST(bad.body.find("/path") != std::string::npos, bad.body);
    auto wrong_call = f.approve(run, "call_nope");
    BOOST_TEST(wrong_call.status == 404u, wrong_call.body);
    auto invalid = f.approve(run, id, {{"decision", "maybe"}});
    BOOST_TEST(invalid.status == 400u);
    auto ok = f.approve(
        run, id,
        {{"decision", "approve"}, {"parameters", {{"path", "a.txt"}, {"content", "human text"}}}});
    BOOST_TEST(ok.status == 200u, ok.body);
    BOOST_TEST(f.events(run).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "a.txt") == "human text");
    auto again = f.approve(run, id);
    BOOST_TEST(again.status == 409u, again.body);
}

// Read-your-writes: once the decision is answered 200, the next read of the run shows the call
// decided; a client polling the run never finds it still awaiting approval and decides twice.
BOOST_AUTO_TEST_CASE(a_decision_answered_is_what_the_next_read_of_the_run_shows) {
    context_fixture f;
    constexpr int calls = 8;  // within the default 10 steps
    std::vector<scripted_reply> script;
    for (int i = 0; i < calls; ++i)
        script.push_back(
            {call("append_file", {{"path", "notes.txt"}, {"content", std::to_string(i)}})});
    script.push_back({"Done."});
    f.fake.script(script);
    auto run = f.start(f.create_chat(), "take notes");
    std::int64_t seen = 0;
    for (int i = 0; i < calls; ++i) {
        auto asked = f.events(
            run, [](const sse_event& e) { return e.type == "approval.required"; }, seen);
        BOOST_TEST_REQUIRE(asked.back().type == "approval.required");
        seen = asked.back().id;
        auto call_id = std::string(asked.back().data.at("call_id").as_string());
        auto decided = f.approve(run, call_id,
                                 {{"decision", i % 2 ? "reject" : "approve"}, {"scope", "once"}});
        BOOST_TEST_REQUIRE(decided.status == 200u, decided.body);
        auto state = f.run_state(run);
        const auto& pending = state.at("pending_approval");
        BOOST_TEST((pending.is_null() || pending.at("id").as_string() != call_id),
                   "call " << i << " still pending: " << json::serialize(state));
        for (const auto& c : state.at("tool_calls").as_array())
            if (c.at("id").as_string() == call_id)
                BOOST_TEST(c.at("status").as_string() != "awaiting_approval",
                           "call " << i << ": " << json::serialize(c));
        // Not the status it had while asking, unless the run already asks about the next call.
        if (pending.is_null()) BOOST_TEST(state.at("status").as_string() != "awaiting_approval");
    }
    BOOST_TEST(f.events(run).back().type == "run.completed");
}

BOOST_AUTO_TEST_CASE(per_tool_policies_always_and_never) {
    using gateway::config::approval_policy;
    context_fixture f([](auto& c) {
        c.context.approvals = {{"append_file", approval_policy::always},
                               {"delete_file", approval_policy::never}};
    });
    f.fake.script({{call("append_file", {{"path", "log.txt"}, {"content", "entry"}})},
                   {call("delete_file", {{"path", "README.md"}})},
                   {"Appended; deleting is switched off."}});
    auto run = f.start(f.create_chat(), "log and clean up");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    for (const auto& e : all) BOOST_TEST(e.type != "approval.required");
    BOOST_TEST(read_text(f.workspace / "log.txt") == "entry");
    BOOST_TEST(fs::exists(f.workspace / "README.md"));
    BOOST_TEST(last_content(f.model_messages(2)).find("PERMISSION_DENIED") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_approval_policy_for_an_unknown_tool_stops_the_start) {
    fake_upstream fake;
    auto config = make_config(fake);
    config.context.approvals = {{"edit_fiel", gateway::config::approval_policy::always}};
    gateway::app::server server(config);
    auto error = server.start();
    BOOST_TEST(error.find("unknown tool `edit_fiel`") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(approval_timeout_fails_the_run_cleanly) {
    context_fixture f([](auto& c) { c.context.approval_timeout = 300ms; });
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}});
    auto run = f.start(f.create_chat(), "edit");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("No decision") == 0u);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    BOOST_TEST(f.run_state(run).at("tool_calls").as_array()[0].at("status").as_string() ==
               "expired");
}

BOOST_AUTO_TEST_CASE(step_cap_asks_once_for_a_final_answer) {
    context_fixture f([](auto& c) { c.context.max_steps = 2; });
    f.fake.script({{call("read_file", {{"path", "README.md"}})},
                   {call("read_file", {{"path", "src/app.py"}})},
                   {"I read both files; nothing else was done."}});
    auto run = f.start(f.create_chat(), "look around");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(f.fake.scripted_requests().size() == 3u);
    BOOST_TEST(last_content(f.model_messages(2)).find("limit of 2 tool steps") !=
               std::string::npos);
    BOOST_TEST(all.back().data.at("step").as_int64() == 2);
}

BOOST_AUTO_TEST_CASE(step_cap_without_a_final_answer_fails) {
    context_fixture f([](auto& c) { c.context.max_steps = 1; });
    f.fake.script({{call("read_file", {{"path", "README.md"}})},
                   {call("read_file", {{"path", "src/app.py"}})}});
    auto run = f.start(f.create_chat(), "look around");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("limit of 1 steps") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(wall_time_cap_cuts_a_slow_model_call) {
    context_fixture f([](auto& c) { c.context.max_wall_time = 300ms; });
    f.fake.script({{"too late", "stop", 200, "", 5000}});
    auto started = clock::now();
    auto run = f.start(f.create_chat(), "hello");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("wall-time") !=
               std::string::npos);
    BOOST_TEST((clock::now() - started < 4s));
}

BOOST_AUTO_TEST_CASE(identical_calls_are_warned_then_stopped) {
    context_fixture f([](auto& c) {
        c.context.identical_call_warn = 2;
        c.context.identical_call_stop = 3;
    });
    auto same = call("read_file", {{"path", "README.md"}});
    f.fake.script({{same}, {same}, {same}});
    auto run = f.start(f.create_chat(), "read");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("3 times in a row") !=
               std::string::npos);
    BOOST_TEST(last_content(f.model_messages(1)).find("Note: this is call number") ==
               std::string::npos);
    BOOST_TEST(last_content(f.model_messages(2)).find("Note: this is call number 2") !=
               std::string::npos);
}

BOOST_AUTO_TEST_CASE(consecutive_tool_errors_stop_the_run) {
    context_fixture f;
    f.fake.script({{call("read_file", {{"path", "missing1"}})},
                   {call("read_file", {{"path", "missing2"}})},
                   {call("read_file", {{"path", "../../etc/passwd"}})}});
    auto run = f.start(f.create_chat(), "read");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    auto error = std::string(all.back().data.at("error").as_string());
    BOOST_TEST(error.find("3 tool calls failed in a row") == 0u, error);
    BOOST_TEST(error.find("PATH_OUTSIDE_WORKSPACE") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(cancel_mid_model_call_closes_the_upstream_request) {
    context_fixture f;
    f.fake.script({{"slow", "stop", 200, "", 10000}});
    auto run = f.start(f.create_chat(), "hello");
    BOOST_TEST_REQUIRE(f.fake.wait_requests(1, 5s));
    auto started = clock::now();
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(r.status == 200u, r.body);
    BOOST_TEST(j.at("status").as_string() == "cancelled");
    BOOST_TEST((clock::now() - started < 3s));
    BOOST_TEST(f.fake.wait_connections_open(0, 5s));
    BOOST_TEST(f.events(run).back().type == "run.cancelled");
    auto [again, j2] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(again.status == 409u);
}

BOOST_AUTO_TEST_CASE(cancel_while_awaiting_approval) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}});
    auto run = f.start(f.create_chat(), "edit");
    auto approval = f.wait_for(run, "approval.required");
    auto [r, j] = f.send("POST", "/context/runs/" + run + "/cancel");
    BOOST_TEST(j.at("status").as_string() == "cancelled");
    auto late = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(late.status == 409u);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
}

BOOST_AUTO_TEST_CASE(last_event_id_replays_and_two_watchers_see_the_same_run) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "new"}})}, {"Done."}});
    auto run = f.start(f.create_chat(), "edit");
    std::vector<sse_event> a, b;
    std::thread watcher_a([&] { a = f.events(run); });
    std::thread watcher_b([&] { b = f.events(run); });
    auto approval = f.wait_for(run, "approval.required");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    watcher_a.join();
    watcher_b.join();
    BOOST_TEST_REQUIRE(a.size() > 5u);
    BOOST_TEST(a.back().type == "run.completed");
    BOOST_TEST(types_of(a) == types_of(b), boost::test_tools::per_element());
    // Resuming after event 3 gives exactly the rest, ids included.
    auto rest = f.events(run, {}, 3);
    BOOST_TEST_REQUIRE(rest.size() == a.size() - 3);
    for (std::size_t i = 0; i < rest.size(); ++i) {
        BOOST_TEST(rest[i].id == a[i + 3].id);
        BOOST_TEST(rest[i].type == a[i + 3].type);
    }
}

BOOST_AUTO_TEST_CASE(draining_ends_open_event_streams_cleanly) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}});
    auto run = f.start(f.create_chat(), "edit");
    f.wait_for(run, "approval.required");
    client c(f.port());
    c.send(make_request("GET", "/context/runs/" + run + "/events"));
    response r;
    BOOST_TEST_REQUIRE(c.read_header(r));
    std::string replay;  // up to and including approval.required
    while (replay.find("event: approval.required") == std::string::npos ||
           !replay.ends_with("\n\n")) {
        auto piece = c.read_piece(r);
        BOOST_TEST_REQUIRE(piece.has_value());
        replay += *piece;
    }
    std::string body;
    f.gateway->server().stop();
    while (auto piece = c.read_piece(r)) body += *piece;
    // Ended by the gateway with its last chunk, not cut by the drain deadline.
    BOOST_TEST(r.complete);
    BOOST_TEST(body.find("event:") == std::string::npos);
    f.gateway.reset();
    f.gateway.emplace(f.config);
    BOOST_TEST(f.run_state(run).at("status").as_string() == "awaiting_approval");
}

BOOST_AUTO_TEST_CASE(messages_stream_when_asked_for_event_stream) {
    context_fixture f;
    f.fake.script({{"Hi."}});
    auto chat = f.create_chat();
    client c(f.port());
    c.send(make_request("POST", "/context/chats/" + chat + "/messages", R"({"content":"hello"})",
                        "Accept: text/event-stream\r\nContent-Type: application/json\r\n"));
    auto r = c.read_response();
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.header("content-type") == "text/event-stream");
    BOOST_TEST(r.body.find("event: run.started") == r.body.find("event: "));
    BOOST_TEST(r.body.find("event: run.completed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(model_429_is_retried_after_retry_after) {
    context_fixture f;
    f.fake.script({{"slow down", "stop", 429, "0", 0}, {"Fine."}});
    auto run = f.start(f.create_chat(), "hello");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    bool retried = false;
    for (const auto& e : all)
        retried = retried ||
                  (e.type == "model.retry" && e.data.at("reason").as_string() == "UPSTREAM_ERROR");
    BOOST_TEST(retried);
    BOOST_TEST(f.fake.scripted_requests().size() == 2u);
}

BOOST_AUTO_TEST_CASE(model_400_fails_the_run_with_the_upstream_message) {
    context_fixture f;
    f.fake.script({{"model not found", "stop", 404, "", 0}});
    auto run = f.start(f.create_chat(), "hello");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.failed");
    BOOST_TEST(std::string(all.back().data.at("error").as_string()).find("model not found") !=
               std::string::npos);
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(json_schema_upstream_gets_a_one_of_over_the_tools) {
    context_fixture f([](auto& c) { c.upstreams[0].json_schema = true; });
    f.fake.script({{call("read_file", {{"path", "README.md"}})}, {R"({"answer": "Read it."})"}});
    auto run = f.start(f.create_chat({{"role", "reader"}}), "read");
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(all.back().data.at("output").as_string() == "Read it.");
    auto body = json::parse(f.fake.scripted_requests()[0]).as_object();
    auto& format = body.at("response_format").as_object();
    BOOST_TEST(format.at("type").as_string() == "json_schema");
    auto& branches = format.at("json_schema").at("schema").at("oneOf").as_array();
    BOOST_TEST(branches.size() == 10u);  // the reader's 9 tools and the answer
    BOOST_TEST(branches[0].at("properties").at("tool").at("const").as_string() == "list_files");
}

BOOST_AUTO_TEST_CASE(one_run_per_chat_at_a_time) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "edit");
    f.wait_for(run, "approval.required");
    auto [r, j] =
        f.send("POST", "/context/chats/" + chat + "/messages", json::object{{"content", "again"}});
    BOOST_TEST(r.status == 409u, r.body);
    // The chat list says which run each chat has in progress, and that it waits for approval.
    auto idle = f.create_chat();
    auto listed = f.send("GET", "/context/chats").second.at("data").as_array();
    for (const auto& c : listed) {
        const auto& live = c.at("live_run");
        if (c.at("id").as_string() == chat) {
            BOOST_TEST(live.at("id").as_string() == run);
            BOOST_TEST(live.at("status") == "awaiting_approval");
        } else {
            BOOST_TEST(c.at("id").as_string() == idle);
            BOOST_TEST(live.is_null());
        }
    }
    BOOST_TEST(listed.size() == 2u);
    auto [d, dj] = f.send("DELETE", "/context/chats/" + chat);
    BOOST_TEST(d.status == 409u);
    f.send("POST", "/context/runs/" + run + "/cancel");
    auto [d2, dj2] = f.send("DELETE", "/context/chats/" + chat);
    BOOST_TEST(d2.status == 200u);
    auto [gone, gj] = f.send("GET", "/context/runs/" + run);
    BOOST_TEST(gone.status == 404u);
}

BOOST_AUTO_TEST_CASE(chat_creation_is_validated) {
    context_fixture f;
    auto outside = temporary_folder();
    auto [r1, j1] =
        f.send("POST", "/context/chats", json::object{{"model", "m"}, {"workspace", outside}});
    BOOST_TEST(r1.status == 400u);
    BOOST_TEST(j1.at("error").at("message").as_string().find("outside the configured") !=
               std::string::npos);
    auto [r2, j2] =
        f.send("POST", "/context/chats",
               json::object{{"model", "m"}, {"workspace", (f.workspace / "..").string()}});
    BOOST_TEST(r2.status == 400u);
    auto [r3, j3] = f.send("POST", "/context/chats", json::object{{"model", "m"}, {"role", "god"}});
    BOOST_TEST(r3.status == 400u);
    auto [r4, j4] =
        f.send("POST", "/context/chats", json::object{{"workspace", f.workspace.string()}});
    BOOST_TEST(r4.status == 400u);
    client c(f.port());
    auto r5 = c.request(
        make_request("POST", "/context/chats", "{not json", "Content-Type: application/json\r\n"));
    BOOST_TEST(r5.status == 400u);
    auto [r6, j6] =
        f.send("POST", "/context/chats",
               json::object{{"model", "m"}, {"workspace", (f.workspace / "src").string()}});
    BOOST_TEST(r6.status == 201u, r6.body);
    auto [r7, j7] = f.send("GET", "/context/chats/chat_nope");
    BOOST_TEST(r7.status == 404u);
    // A misspelt member is refused by name, not ignored (a chat without its workspace).
    auto chats_before = f.send("GET", "/context/chats").second.at("data").as_array().size();
    auto [r8, j8] = f.send("POST", "/context/chats",
                           json::object{{"model", "m"}, {"workspce", f.workspace.string()}});
    BOOST_TEST(r8.status == 400u);
    BOOST_TEST(j8.at("error").at("message") ==
               "Unknown member `workspce`; did you mean `workspace`?");
    BOOST_TEST(f.send("GET", "/context/chats").second.at("data").as_array().size() == chats_before);
    BOOST_TEST(j7.at("error").at("code").as_string() == "not_found");
}

BOOST_AUTO_TEST_CASE(api_keys_guard_the_context_api) {
    context_fixture f([](auto& c) {
        c.context.api_keys = {"plain-key-0123456789",
                              gateway::config::hashed_key("hashed-key-0123456789")};
    });
    auto [none, j1] = f.send("GET", "/context/chats");
    BOOST_TEST(none.status == 401u);
    BOOST_TEST(j1.at("error").at("type").as_string() == "authentication_error");
    auto [wrong, j2] = f.send("GET", "/context/chats", nullptr, "Authorization: Bearer nope\r\n");
    BOOST_TEST(wrong.status == 401u);
    // The stored hash itself is not a key.
    auto [hash, j3] = f.send(
        "GET", "/context/chats", nullptr,
        "Authorization: Bearer " + gateway::config::hashed_key("hashed-key-0123456789") + "\r\n");
    BOOST_TEST(hash.status == 401u);
    auto [plain, j4] =
        f.send("GET", "/context/chats", nullptr, "Authorization: Bearer plain-key-0123456789\r\n");
    BOOST_TEST(plain.status == 200u);
    auto [hashed, j5] =
        f.send("GET", "/context/chats", nullptr, "Authorization: Bearer hashed-key-0123456789\r\n");
    BOOST_TEST(hashed.status == 200u);
    // The passthrough keeps its own auth: the client's key goes upstream untouched.
    client c(f.port());
    auto forwarded = c.request(make_request("GET", "/v1/models", {}, "x-fake-mode: echo\r\n"));
    BOOST_TEST(forwarded.status == 200u);
}

BOOST_AUTO_TEST_CASE(system_prompts_list_get_and_enhanced) {
    context_fixture f;
    auto [list, lj] = f.send("GET", "/v1/system-prompts");
    BOOST_TEST(list.status == 200u);
    std::vector<std::string> ids;
    for (const auto& p : lj.at("data").as_array()) ids.emplace_back(p.at("id").as_string());
    BOOST_TEST((ids == std::vector<std::string>{"coding", "writing"}));
    auto [one, oj] = f.send("GET", "/v1/system-prompts/coding");
    BOOST_TEST(!oj.at("content").as_string().empty());
    auto [reader, rj] = f.send("GET", "/v1/system-prompts/coding/enhanced?role=reader");
    auto [editor, ej] = f.send("GET", "/v1/system-prompts/coding/enhanced?role=editor");
    auto reader_text = std::string(rj.at("content").as_string());
    auto editor_text = std::string(ej.at("content").as_string());
    BOOST_TEST(reader_text.find("`read_file`") != std::string::npos);
    BOOST_TEST(reader_text.find("`edit_file`") == std::string::npos);
    BOOST_TEST(editor_text.find("`edit_file`") != std::string::npos);
    auto [bad_role, bj] = f.send("GET", "/v1/system-prompts/coding/enhanced?role=admin");
    BOOST_TEST(bad_role.status == 400u);
    auto [missing, mj] = f.send("GET", "/v1/system-prompts/nope");
    BOOST_TEST(missing.status == 404u);
    auto [post, pj] = f.send("POST", "/v1/system-prompts", json::object{});
    BOOST_TEST(post.status == 405u);
    BOOST_TEST(f.fake.requests().empty());  // never forwarded
}

BOOST_AUTO_TEST_CASE(passthrough_is_unchanged_while_a_run_is_live) {
    context_fixture f;
    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}});
    auto run = f.start(f.create_chat(), "edit");
    f.wait_for(run, "approval.required");
    std::string body = R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})";
    client c(f.port());
    auto r = c.request(make_request("POST", "/v1/chat/completions", body,
                                    "x-fake-mode: echo\r\nAuthorization: Bearer sk-client\r\n"));
    BOOST_TEST(r.status == 200u);
    BOOST_TEST(r.body.find("Authorization: Bearer sk-client\r\n") != std::string::npos);
    BOOST_TEST(r.body.substr(r.body.size() - body.size()) == body);
    auto canned =
        c.request(make_request("POST", "/v1/chat/completions", body, "x-fake-delay-ms: 0\r\n"));
    BOOST_TEST(canned.body == fake_upstream::chat_completion_json("gpt-x", false));
    BOOST_TEST(f.fake.scripted_requests().size() == 1u);  // only the agent's call
}

BOOST_AUTO_TEST_CASE(a_run_awaiting_approval_survives_a_restart) {
    context_fixture f;
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Fixed."}});
    auto run = f.start(f.create_chat(), "fix the typo");
    auto approval = f.wait_for(run, "approval.required");
    f.gateway.reset();  // stopped: the run stays as stored
    f.gateway.emplace(f.config);
    BOOST_TEST(f.run_state(run).at("status").as_string() == "awaiting_approval");
    auto r = f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(r.status == 200u, r.body);
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");
    // Event ids continue where they were.
    for (std::size_t i = 0; i < all.size(); ++i)
        BOOST_TEST(all[i].id == static_cast<std::int64_t>(i + 1));
}

BOOST_AUTO_TEST_SUITE_END()

// What a browser client needs around a chat: the workspaces to choose from, a title (given or
// from the first message, changeable), and the live run of a chat it reopens.
BOOST_AUTO_TEST_SUITE(chat_titles_and_live_runs)

BOOST_AUTO_TEST_CASE(titles_workspaces_and_the_live_run) {
    context_fixture f;
    auto [roots, listed] = f.send("GET", "/context/workspaces");
    BOOST_TEST(roots.status == 200u);
    BOOST_TEST(listed.at("data").as_array().size() == 1u);
    BOOST_TEST(listed.at("data").at(0).at("path").as_string() == f.workspace.string());

    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Done."}});
    auto chat = f.create_chat();
    auto run =
        f.start(chat,
                "  Fix the\n typo in README.md, and make sure nothing else changes in a file "
                "at all — not even a single character of it");
    f.wait_for(run, "approval.required");
    auto [r, shown] = f.send("GET", "/context/chats/" + chat);
    BOOST_TEST(r.status == 200u);
    // One line, whitespace collapsed, at most 80 bytes, cut on a character boundary.
    auto title = std::string(shown.at("title").as_string());
    BOOST_TEST(title.starts_with("Fix the typo in README.md, and make sure"), title);
    BOOST_TEST(title.size() <= 80u);
    BOOST_TEST(!title.ends_with(' '));
    // No sequence cut in two: every lead byte has its continuation bytes.
    for (std::size_t at = 0; at < title.size();) {
        auto lead = static_cast<unsigned char>(title[at]);
        std::size_t width = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        BOOST_TEST_REQUIRE(at + width <= title.size(), title);
        at += width;
    }
    BOOST_TEST(shown.at("live_run").as_string() == run);

    auto [renamed, chat_view] =
        f.send("PATCH", "/context/chats/" + chat, json::object{{"title", "Typo hunt"}});
    BOOST_TEST(renamed.status == 200u, renamed.body);
    BOOST_TEST(chat_view.at("title").as_string() == "Typo hunt");
    BOOST_TEST(chat_view.at("edits").as_string() == "approve");
    auto [bad, _] =
        f.send("PATCH", "/context/chats/" + chat, json::object{{"title", "two\nlines"}});
    BOOST_TEST(bad.status == 400u);
    auto [empty, __] = f.send("PATCH", "/context/chats/" + chat, json::object{});
    BOOST_TEST(empty.status == 400u);

    auto approval = f.wait_for(run, "approval.required");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST(f.events(run).back().type == "run.completed");
    auto [after, ended] = f.send("GET", "/context/chats/" + chat);
    BOOST_TEST(ended.at("live_run").is_null());
    // A later message does not rename a named chat.
    BOOST_TEST(ended.at("title").as_string() == "Typo hunt");
}

// A NUL in a stored text: 400 on both stores, where PostgreSQL used to keep `scrip` of
// `scrip\u0000ted` and answer 201.
BOOST_AUTO_TEST_CASE(a_nul_in_a_text_to_store_is_400_and_nothing_is_cut) {
    context_fixture f;
    std::string nul("scrip\0ted", 9);
    auto [made, jm] = f.send("POST", "/context/chats",
                             json::object{{"model", nul}, {"workspace", f.workspace.string()}});
    BOOST_TEST(made.status == 400u, made.body);
    BOOST_TEST(std::string(jm.at("error").at("message").as_string()).find("NUL") !=
               std::string::npos);
    auto chat = f.create_chat();
    auto [renamed, jr] = f.send("PATCH", "/context/chats/" + chat, json::object{{"title", nul}});
    BOOST_TEST(renamed.status == 400u, renamed.body);
    auto [got, jg] = f.send("GET", "/context/chats/" + chat);
    BOOST_TEST(jg.at("model").as_string() == "fake-model");
    BOOST_TEST(json::serialize(jg).find("\\u0000") == std::string::npos, got.body);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_context_test
