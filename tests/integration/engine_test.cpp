// The run engine's guarantees beyond the loop itself, through the API: no lost document edits
// (versions on both sides), undo of a run's writes from the copies kept when they were made.
#include "tests/integration/context_fixture.hpp"

#include <boost/test/unit_test.hpp>

namespace integration_engine_test {

using namespace gateway::testing;

BOOST_AUTO_TEST_SUITE(engine)

BOOST_AUTO_TEST_CASE(a_stale_document_write_is_409_with_the_current_version) {
    context_fixture f;
    auto chat = f.create_chat();
    auto path = "/context/chats/" + chat + "/document";
    auto [first, j1] = f.send("PUT", path, json::object{{"name", "a.md"}, {"content", "one"}});
    BOOST_TEST_REQUIRE(first.status == 200u, first.body);
    BOOST_TEST(first.header("ETag") == "\"1\"");
    // Based on version 1: written.
    auto [second, j2] = f.send("PUT", path, json::object{{"content", "two"}, {"base_version", 1}});
    BOOST_TEST(second.status == 200u, second.body);
    BOOST_TEST(j2.at("version").as_int64() == 2);
    // Based on version 1 again: someone wrote meanwhile, nothing is lost.
    auto [stale, j3] = f.send("PUT", path, json::object{{"content", "lost"}, {"base_version", 1}});
    BOOST_TEST(stale.status == 409u, stale.body);
    BOOST_TEST(j3.at("error").at("code").as_string() == "version_conflict");
    BOOST_TEST(stale.header("ETag") == "\"2\"");
    // The same with If-Match.
    auto [matched, j4] =
        f.send("PUT", path, json::object{{"content", "three"}}, "If-Match: \"2\"\r\n");
    BOOST_TEST(matched.status == 200u, matched.body);
    auto [mismatched, j5] =
        f.send("PUT", path, json::object{{"content", "x"}}, "If-Match: \"2\"\r\n");
    BOOST_TEST(mismatched.status == 409u);
    auto [bad, j6] = f.send("PUT", path, json::object{{"content", "x"}}, "If-Match: nonsense\r\n");
    BOOST_TEST(bad.status == 400u);
    auto [got, doc] = f.send("GET", path);
    BOOST_TEST(doc.at("content").as_string() == "three");
    BOOST_TEST(got.header("ETag") == "\"3\"");
}

BOOST_AUTO_TEST_CASE(an_agent_edit_to_a_document_changed_meanwhile_fails_and_overwrites_nothing) {
    context_fixture f;
    auto chat = f.create_chat({{"system_prompt", "writing"}});
    auto path = "/context/chats/" + chat + "/document";
    f.send("PUT", path, json::object{{"name", "essay.md"}, {"content", "The end is neigh.\n"}});
    f.fake.script({{call("edit_document", {{"find", "neigh"}, {"replace", "nigh"}})},
                   {"I could not edit it."}});
    auto run = f.start(chat, "fix the homophone");
    auto approval = f.wait_for(run, "approval.required");
    // The human edits the document in the editor while the agent's edit awaits approval.
    auto [put, j] =
        f.send("PUT", path,
               json::object{{"content", "The end is neigh, said she.\n"}, {"base_version", 1}});
    BOOST_TEST_REQUIRE(put.status == 200u, put.body);
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    auto all = f.events(run);
    BOOST_TEST(all.back().type == "run.completed");
    const sse_event* result = nullptr;
    for (const auto& e : all)
        if (e.type == "tool.result") result = &e;
    BOOST_TEST_REQUIRE(result);
    BOOST_TEST(result->data.at("error_code").as_string() == "DOCUMENT_CHANGED");
    auto [got, doc] = f.send("GET", path);
    BOOST_TEST(doc.at("content").as_string() == "The end is neigh, said she.\n");
    BOOST_TEST(doc.at("version").as_int64() == 2);
    // The model was told, in words it can act on.
    BOOST_TEST(mentions(f.model_messages(1), "changed in the editor"));
}

BOOST_AUTO_TEST_CASE(undo_reverts_the_runs_writes_newest_first) {
    context_fixture f([](auto& c) {
        c.context.approvals = {{"create_file", gateway::config::approval_policy::always},
                               {"replace_in_file", gateway::config::approval_policy::always}};
    });
    f.fake.script(
        {{call("create_file", {{"path", "new.txt"}, {"content", "fresh\n"}})},
         {call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Created new.txt and fixed the typo."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "do two things");
    auto ran = f.events(run);
    BOOST_TEST_REQUIRE(ran.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");

    auto [u1, j1] = f.send("POST", "/context/runs/" + run + "/undo");
    BOOST_TEST_REQUIRE(u1.status == 200u, u1.body);
    BOOST_TEST(j1.at("path").as_string() == "README.md");
    BOOST_TEST(std::string(j1.at("diff").as_string()).find("+This is teh readme.") !=
               std::string::npos);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");

    auto [u2, j2] = f.send("POST", "/context/runs/" + run + "/undo");
    BOOST_TEST_REQUIRE(u2.status == 200u, u2.body);
    BOOST_TEST(j2.at("path").as_string() == "new.txt");
    BOOST_TEST(!fs::exists(f.workspace / "new.txt"));  // it was created: undone, it is gone

    auto [u3, j3] = f.send("POST", "/context/runs/" + run + "/undo");
    BOOST_TEST(u3.status == 409u);
    BOOST_TEST(j3.at("error").at("code").as_string() == "nothing_to_undo");

    // Watchers learn of it: write.undone follows the run's end in its events.
    auto all = f.events(run, {}, ran.back().id);
    std::vector<std::string> undone;
    for (const auto& e : all)
        if (e.type == "write.undone") undone.emplace_back(e.data.at("path").as_string());
    std::vector<std::string> expected{"README.md", "new.txt"};
    BOOST_TEST(undone == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(undo_leaves_a_file_changed_since_and_waits_for_a_live_run) {
    context_fixture f([](auto& c) {
        c.context.approvals = {{"append_file", gateway::config::approval_policy::always}};
    });
    f.fake.script(
        {{call("append_file", {{"path", "log.txt"}, {"content", "agent\n"}})}, {"Appended."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "log");
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    write_text(f.workspace / "log.txt", "agent\nhuman\n");  // edited after the run
    auto [u, j] = f.send("POST", "/context/runs/" + run + "/undo");
    BOOST_TEST(u.status == 409u, u.body);
    BOOST_TEST(j.at("error").at("message").as_string().find("changed since the write") !=
               std::string::npos);
    BOOST_TEST(read_text(f.workspace / "log.txt") == "agent\nhuman\n");

    f.fake.script({{call("edit_file", {{"path", "README.md"}, {"content", "x"}})}, {"Done."}});
    auto live = f.start(chat, "edit");
    f.wait_for(live, "approval.required");
    auto [busy, jb] = f.send("POST", "/context/runs/" + live + "/undo");
    BOOST_TEST(busy.status == 409u);
    BOOST_TEST(jb.at("error").at("code").as_string() == "run_in_progress");
    BOOST_TEST(f.send("POST", "/context/runs/run_nope/undo").first.status == 404u);
}

// The file a run wrote was swapped for a link out of the workspace: undo answers 409 with the
// reason, and writes nothing on either side of the link.
BOOST_AUTO_TEST_CASE(undo_through_a_swapped_symlink_is_409_and_writes_nothing) {
    context_fixture f([](auto& c) {
        c.context.approvals = {{"replace_in_file", gateway::config::approval_policy::always}};
    });
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Fixed."}});
    auto chat = f.create_chat();
    auto run = f.start(chat, "fix the typo");
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    auto outside = fs::path(temporary_folder()) / "secret.txt";
    write_text(outside, "# Demo\n\nThis is the readme.\n");  // what the undo expects to find
    fs::remove(f.workspace / "README.md");
    fs::create_symlink(outside, f.workspace / "README.md");
    auto [u, j] = f.send("POST", "/context/runs/" + run + "/undo");
    BOOST_TEST(u.status == 409u, u.body);
    BOOST_TEST(j.at("error").at("message").as_string().find("left as it is") != std::string::npos,
               u.body);
    BOOST_TEST(read_text(outside) == "# Demo\n\nThis is the readme.\n");
    BOOST_TEST(fs::is_symlink(f.workspace / "README.md"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_engine_test
