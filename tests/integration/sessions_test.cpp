// Review mode end to end through the HTTP API: the agent's writes are recorded in edit sessions
// (the disk and the document untouched), the agent reads its own edits, and the human accepts
// all, some hunks or a merged text — merged three ways with changes made meanwhile — or rejects.

#include "tests/integration/context_fixture.hpp"

namespace integration_sessions_test {

using namespace gateway::testing;

namespace {

// Twenty numbered lines: two changes far apart make two hunks.
std::string numbered() {
    std::string out;
    for (int i = 1; i <= 20; ++i) out += "line " + std::to_string(i) + "\n";
    return out;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
}

json::object str_replace(std::string_view path, std::string_view old_str,
                         std::string_view new_str) {
    return {{"command", "str_replace"}, {"path", path}, {"old_str", old_str}, {"new_str", new_str}};
}

// The chat's sessions by path (the document's under its name).
std::map<std::string, json::object> sessions_of(context_fixture& f, const std::string& chat) {
    auto [r, j] = f.send("GET", "/context/chats/" + chat + "/sessions");
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    std::map<std::string, json::object> out;
    for (const auto& s : j.at("data").as_array()) {
        const auto& o = s.as_object();
        auto key = o.contains("path") ? o.at("path").as_string() : o.at("document").as_string();
        out[std::string(key)] = o;
    }
    return out;
}

json::object session(context_fixture& f, const json::object& summary) {
    auto [r, j] = f.send("GET", "/context/sessions/" + std::string(summary.at("id").as_string()));
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    return j.as_object();
}

std::string id_of(const json::object& o) {
    return std::string(o.at("id").as_string());
}

std::vector<sse_event> of_type(const std::vector<sse_event>& all, std::string_view type) {
    std::vector<sse_event> out;
    for (const auto& e : all)
        if (e.type == type) out.push_back(e);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sessions_suite)

BOOST_AUTO_TEST_CASE(a_review_run_records_edits_and_leaves_disk_and_document_untouched) {
    context_fixture f([](gateway::config::gateway_config& c) { c.context.max_steps = 20; });
    auto chat = f.create_chat({{"edits", "review"}});
    auto [put, _] =
        f.send("PUT", "/context/chats/" + chat + "/document",
               json::object{{"name", "Chapter 5"}, {"content", "It was a dark night.\n"}});
    BOOST_TEST_REQUIRE(put.status == 200u, put.body);
    f.fake.script({
        {call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
        {call("doc_edit", str_replace("/README.md", "# Demo", "# Demo app"))},
        {call("create_file", {{"path", "notes/todo.md"}, {"content", "- ship it\n"}})},
        {call("doc_edit", {{"command", "str_replace"},
                           {"document", "Chapter 5"},
                           {"old_str", "dark"},
                           {"new_str", "stormy"}})},
        {call("read_file", {{"path", "README.md"}})},
        {call("doc_edit", {{"command", "view"}, {"document", "Chapter 5"}})},
        {call("list_files", {{"path", "notes"}})},
        {call("search_document", {{"query", "stormy"}})},
        {call("read_document", json::object{})},
        {call("get_document_info", json::object{})},
        {"Done: three suggestions await your review."},
    });
    auto run = f.start(chat, "tidy up");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed", json::serialize(all.back().data));
    BOOST_TEST(of_type(all, "approval.required").empty());
    auto updates = of_type(all, "session.updated");
    BOOST_TEST_REQUIRE(updates.size() == 4u);
    BOOST_TEST(updates[0].data.at("path").as_string() == "README.md");
    BOOST_TEST(std::string(updates[0].data.at("diff").as_string()).find("+This is the readme.") !=
               std::string::npos);
    BOOST_TEST(updates[0].data.at("session_id") == updates[1].data.at("session_id"));
    BOOST_TEST(updates[3].data.at("document").as_string() == "Chapter 5");
    // The tool said "recorded", with the session and edit.
    auto results = of_type(all, "tool.result");
    BOOST_TEST(results[0].data.at("ok").as_bool());
    BOOST_TEST(results[0].data.at("data").at("session_id") == updates[0].data.at("session_id"));
    BOOST_TEST(results[0].data.at("data").at("applied").as_bool() == false);

    // Nothing written: disk and document as they were.
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    BOOST_TEST(!fs::exists(f.workspace / "notes/todo.md"));
    auto [doc_r, doc] = f.send("GET", "/context/chats/" + chat + "/document");
    BOOST_TEST(doc.at("content").as_string() == "It was a dark night.\n");
    BOOST_TEST(doc.at("version").as_int64() == 1);

    // The agent read its own edits.
    BOOST_TEST(last_content(f.model_messages(5)).find("This is the readme.") != std::string::npos);
    BOOST_TEST(last_content(f.model_messages(5)).find("# Demo app") != std::string::npos);
    BOOST_TEST(last_content(f.model_messages(6)).find("stormy") != std::string::npos);
    BOOST_TEST(last_content(f.model_messages(7)).find("todo.md  (pending: created") !=
               std::string::npos);
    // The document tools too.
    BOOST_TEST(last_content(f.model_messages(8)).find("It was a stormy night.") !=
               std::string::npos);
    BOOST_TEST(last_content(f.model_messages(9)).find("stormy") != std::string::npos);
    BOOST_TEST(last_content(f.model_messages(10)).find("Characters: 23") != std::string::npos,
               last_content(f.model_messages(10)));

    auto sessions = sessions_of(f, chat);
    BOOST_TEST_REQUIRE(sessions.size() == 3u);
    BOOST_TEST(sessions.at("README.md").at("edit_count").as_int64() == 2);
    BOOST_TEST(sessions.at("README.md").at("status").as_string() == "open");
    BOOST_TEST(sessions.at("notes/todo.md").at("base_existed").as_bool() == false);
    auto readme = session(f, sessions.at("README.md"));
    BOOST_TEST(readme.at("base_snapshot").as_string() == "# Demo\n\nThis is teh readme.\n");
    BOOST_TEST(readme.at("ai_version").as_string() == "# Demo app\n\nThis is the readme.\n");
    BOOST_TEST(readme.at("changed_on_disk").as_bool() == false);
    BOOST_TEST(readme.at("edits").as_array().size() == 2u);
    BOOST_TEST(readme.at("edits").at(1).at("command").as_string() == "str_replace");
    BOOST_TEST(readme.at("edits").at(0).at("run_id").as_string() == run);
    BOOST_TEST(readme.at("hunks").as_array().size() == 1u);

    // Accepting the created file writes it; the document takes the frontend's merged text.
    auto [created, created_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("notes/todo.md")) + "/accept",
               json::object{});
    BOOST_TEST(created.status == 200u, created.body);
    BOOST_TEST(read_text(f.workspace / "notes/todo.md") == "- ship it\n");
    auto [merged_doc, merged_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("Chapter 5")) + "/accept",
               json::object{{"content", "It was a stormy night, she said.\n"}});
    BOOST_TEST(merged_doc.status == 200u, merged_doc.body);
    auto [doc2_r, doc2] = f.send("GET", "/context/chats/" + chat + "/document");
    BOOST_TEST(doc2.at("content").as_string() == "It was a stormy night, she said.\n");
    // Rejecting writes nothing.
    auto [rejected, rejected_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("README.md")) + "/reject");
    BOOST_TEST(rejected.status == 200u, rejected.body);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");
    auto after = sessions_of(f, chat);
    BOOST_TEST(after.at("README.md").at("status").as_string() == "rejected");
    BOOST_TEST(after.at("notes/todo.md").at("status").as_string() == "accepted");
    // Each resolution was announced on the run's stream.
    auto resolved = of_type(f.events(run, {}, all.back().id), "session.resolved");
    BOOST_TEST(resolved.size() == 3u);
}

BOOST_AUTO_TEST_CASE(accepting_one_hunk_writes_exactly_that_hunk) {
    context_fixture f;
    write_text(f.workspace / "list.txt", numbered());
    auto chat = f.create_chat({{"edits", "review"}});
    f.fake.script({{call("doc_edit", str_replace("list.txt", "line 2\n", "line two\n"))},
                   {call("doc_edit", str_replace("list.txt", "line 18\n", "line eighteen\n"))},
                   {"Two suggestions."}});
    auto run = f.start(chat, "spell out two numbers");
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    auto summary = sessions_of(f, chat).at("list.txt");
    auto s = session(f, summary);
    auto hunks = s.at("hunks").as_array();
    BOOST_TEST_REQUIRE(hunks.size() == 2u);
    auto first = std::string(hunks[0].at("id").as_string());
    auto second = std::string(hunks[1].at("id").as_string());

    auto [r, j] = f.send("POST", "/context/sessions/" + id_of(summary) + "/accept",
                         json::object{{"hunks", json::array{json::value(second)}}});
    BOOST_TEST_REQUIRE(r.status == 200u, r.body);
    BOOST_TEST(read_text(f.workspace / "list.txt") ==
               replaced(numbered(), "line 18\n", "line eighteen\n"));
    // The rest stays open for review, under the same id.
    BOOST_TEST(j.at("status").as_string() == "open");
    auto rest = session(f, summary).at("hunks").as_array();
    BOOST_TEST_REQUIRE(rest.size() == 1u);
    BOOST_TEST(rest[0].at("id").as_string() == first);
    // Unknown hunks are refused, naming the ones there are.
    auto [bad, bad_j] = f.send("POST", "/context/sessions/" + id_of(summary) + "/accept",
                               json::object{{"hunks", json::array{"h-nope"}}});
    BOOST_TEST(bad.status == 400u);
    BOOST_TEST(bad.body.find(first) != std::string::npos, bad.body);
    // Accepting the last hunk resolves the session.
    auto [last, last_j] = f.send("POST", "/context/sessions/" + id_of(summary) + "/accept",
                                 json::object{{"hunks", json::array{json::value(first)}}});
    BOOST_TEST(last.status == 200u, last.body);
    BOOST_TEST(last_j.at("status").as_string() == "accepted");
    BOOST_TEST(
        read_text(f.workspace / "list.txt") ==
        replaced(replaced(numbered(), "line 18\n", "line eighteen\n"), "line 2\n", "line two\n"));
    auto [again, again_j] = f.send("POST", "/context/sessions/" + id_of(summary) + "/accept");
    BOOST_TEST(again.status == 409u);
    BOOST_TEST(again_j.at("error").at("code").as_string() == "session_resolved");
}

BOOST_AUTO_TEST_CASE(changes_on_disk_merge_and_overlapping_ones_are_a_409_that_writes_nothing) {
    context_fixture f;
    write_text(f.workspace / "a.txt", numbered());
    write_text(f.workspace / "b.txt", numbered());
    auto chat = f.create_chat({{"edits", "review"}});
    f.fake.script({{call("doc_edit", str_replace("a.txt", "line 3\n", "line three\n"))},
                   {call("doc_edit", str_replace("b.txt", "line 3\n", "line three\n"))},
                   {"Suggested."}});
    auto run = f.start(chat, "spell out three");
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    auto sessions = sessions_of(f, chat);

    // a.txt: the user changed another part by hand meanwhile: both changes are kept.
    auto by_hand = replaced(numbered(), "line 19\n", "line 19 (by hand)\n");
    write_text(f.workspace / "a.txt", by_hand);
    BOOST_TEST(session(f, sessions.at("a.txt")).at("changed_on_disk").as_bool());
    auto [ok, ok_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("a.txt")) + "/accept");
    BOOST_TEST_REQUIRE(ok.status == 200u, ok.body);
    BOOST_TEST(ok_j.at("merged").as_bool());
    BOOST_TEST(read_text(f.workspace / "a.txt") == replaced(by_hand, "line 3\n", "line three\n"));

    // b.txt: the user changed the same line: 409 with the conflicting hunk, nothing written.
    auto clash = replaced(numbered(), "line 3\n", "line 3 (by hand)\n");
    write_text(f.workspace / "b.txt", clash);
    auto [conflict, conflict_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("b.txt")) + "/accept");
    BOOST_TEST(conflict.status == 409u, conflict.body);
    BOOST_TEST(conflict_j.at("error").at("code").as_string() == "merge_conflict");
    auto conflicts = conflict_j.at("error").at("conflicts").as_array();
    BOOST_TEST_REQUIRE(conflicts.size() == 1u);
    BOOST_TEST(std::string(conflicts[0].at("diff").as_string()).find("+line three") !=
               std::string::npos);
    BOOST_TEST(read_text(f.workspace / "b.txt") == clash);
    BOOST_TEST(session(f, sessions.at("b.txt")).at("status").as_string() == "open");
    // The frontend's merged text settles it.
    auto [settled, settled_j] = f.send(
        "POST", "/context/sessions/" + id_of(sessions.at("b.txt")) + "/accept",
        json::object{{"content", replaced(clash, "line 3 (by hand)\n", "line three (by hand)\n")}});
    BOOST_TEST(settled.status == 200u, settled.body);
    BOOST_TEST(read_text(f.workspace / "b.txt") ==
               replaced(clash, "line 3 (by hand)\n", "line three (by hand)\n"));
}

BOOST_AUTO_TEST_CASE(sessions_survive_a_restart_and_later_runs_reuse_them) {
    context_fixture f([](gateway::config::gateway_config& c) {
        // A read that asks first: a point where the run waits across the restart.
        c.context.approvals.push_back({"read_file", gateway::config::approval_policy::ask});
    });
    auto chat = f.create_chat({{"edits", "review"}});
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {call("read_file", {{"path", "README.md"}})},
         {"Fixed, pending review."},
         {call("doc_edit", str_replace("README.md", "# Demo", "# Demo app"))},
         {"Renamed, pending review."}});
    auto run = f.start(chat, "fix the typo");
    auto approval = f.wait_for(run, "approval.required");
    BOOST_TEST(approval.data.at("tool").as_string() == "read_file");
    f.gateway.reset();
    f.gateway.emplace(f.config);
    auto before = sessions_of(f, chat);
    BOOST_TEST_REQUIRE(before.size() == 1u);
    BOOST_TEST(session(f, before.at("README.md")).at("ai_version").as_string() ==
               "# Demo\n\nThis is the readme.\n");
    f.approve(run, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    BOOST_TEST(last_content(f.model_messages(2)).find("This is the readme.") != std::string::npos);
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is teh readme.\n");

    // A later run of the chat adds to the open session.
    auto second = f.start(chat, "rename the title");
    BOOST_TEST_REQUIRE(f.events(second).back().type == "run.completed");
    auto after = sessions_of(f, chat);
    BOOST_TEST_REQUIRE(after.size() == 1u);
    auto s = session(f, after.at("README.md"));
    BOOST_TEST(s.at("edit_count").as_int64() == 2);
    BOOST_TEST(s.at("ai_version").as_string() == "# Demo app\n\nThis is the readme.\n");
    BOOST_TEST(s.at("edits").at(1).at("run_id").as_string() == second);

    // Deleted with the chat.
    auto [del, del_j] = f.send("DELETE", "/context/chats/" + chat);
    BOOST_TEST(del.status == 200u, del.body);
    auto [gone, gone_j] = f.send("GET", "/context/sessions/" + id_of(after.at("README.md")));
    BOOST_TEST(gone.status == 404u);
    BOOST_TEST(gone_j.at("error").at("code").as_string() == "session_not_found");
}

BOOST_AUTO_TEST_CASE(edits_match_the_ai_version_and_errors_keep_their_codes) {
    context_fixture f;
    write_text(f.workspace / "dup.txt", "same\nsame\n");
    auto chat = f.create_chat({{"edits", "review"}});
    auto [put, _] = f.send("PUT", "/context/chats/" + chat + "/document",
                           json::object{{"name", "Notes"}, {"content", "draft\n"}});
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         // Still on disk, but no longer in the AI version.
         {call("doc_edit", str_replace("README.md", "teh", "thee"))},
         {call("doc_edit", str_replace("dup.txt", "same", "other"))},
         {call("edit_document", {{"find", "draft"}, {"replace", "final"}})},
         {call("doc_edit", {{"command", "view"}, {"document", "Nope"}})},
         {"Done."}});
    auto run = f.start(chat, "edit");
    auto all = f.events(run);
    BOOST_TEST_REQUIRE(all.back().type == "run.completed");
    auto results = of_type(all, "tool.result");
    BOOST_TEST_REQUIRE(results.size() == 5u);
    BOOST_TEST(results[1].data.at("error_code").as_string() == "NO_MATCH");
    BOOST_TEST(results[2].data.at("error_code").as_string() == "AMBIGUOUS_MATCH");
    BOOST_TEST(results[3].data.at("ok").as_bool());  // edit_document records into the session
    BOOST_TEST(results[4].data.at("error_code").as_string() == "DOC_NOT_FOUND");
    auto sessions = sessions_of(f, chat);
    BOOST_TEST(sessions.size() == 2u);
    BOOST_TEST(session(f, sessions.at("Notes")).at("ai_version").as_string() == "final\n");

    // The review API's own errors.
    auto [none, none_j] = f.send("GET", "/context/sessions/sess_nope");
    BOOST_TEST(none.status == 404u);
    BOOST_TEST(none_j.at("error").at("code").as_string() == "session_not_found");
    auto [bad, bad_j] =
        f.send("POST", "/context/sessions/" + id_of(sessions.at("Notes")) + "/accept",
               json::object{{"hunks", json::array{}}, {"content", "x"}});
    BOOST_TEST(bad.status == 400u);
    auto [patch, patch_j] =
        f.send("PATCH", "/context/chats/" + chat, json::object{{"edits", "sometimes"}});
    BOOST_TEST(patch.status == 400u);
    auto [model, model_j] = f.send("PATCH", "/context/chats/" + chat, json::object{{"model", "x"}});
    BOOST_TEST(model.status == 400u);
}

BOOST_AUTO_TEST_CASE(the_edit_mode_is_switched_with_patch) {
    context_fixture f;
    auto chat = f.create_chat();
    auto [got, got_j] = f.send("GET", "/context/chats/" + chat);
    BOOST_TEST(got_j.at("edits").as_string() == "approve");
    auto [patch, patch_j] =
        f.send("PATCH", "/context/chats/" + chat, json::object{{"edits", "review"}});
    BOOST_TEST_REQUIRE(patch.status == 200u, patch.body);
    BOOST_TEST(patch_j.at("edits").as_string() == "review");
    f.fake.script(
        {{call("replace_in_file", {{"path", "README.md"}, {"find", "teh"}, {"replace", "the"}})},
         {"Suggested."}});
    auto run = f.start(chat, "fix");
    BOOST_TEST_REQUIRE(f.events(run).back().type == "run.completed");
    BOOST_TEST(sessions_of(f, chat).size() == 1u);
    // Back to approvals: the next write waits for the human and goes to disk.
    f.send("PATCH", "/context/chats/" + chat, json::object{{"edits", "approve"}});
    f.fake.script({{call("create_file", {{"path", "new.txt"}, {"content", "x\n"}})}, {"Made."}});
    auto second = f.start(chat, "make a file");
    auto approval = f.wait_for(second, "approval.required");
    f.approve(second, std::string(approval.data.at("call_id").as_string()));
    BOOST_TEST_REQUIRE(f.events(second).back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "new.txt") == "x\n");
    auto [missing, missing_j] =
        f.send("PATCH", "/context/chats/chat_nope", json::object{{"edits", "review"}});
    BOOST_TEST(missing.status == 404u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_sessions_test
