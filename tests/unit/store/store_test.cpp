#include "gateway/store/store.hpp"

#include <boost/test/unit_test.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace gateway::store;

namespace {

struct temp_database {
    fs::path dir;
    std::string path;
    temp_database() {
        char pattern[] = "/tmp/contextgate-store-XXXXXX";
        dir = ::mkdtemp(pattern);
        path = (dir / "contextgate.db").string();
    }
    ~temp_database() { fs::remove_all(dir); }
    std::unique_ptr<store> open() {
        auto s = store::open(path);
        BOOST_TEST_REQUIRE(static_cast<bool>(s), s.error);
        return std::move(*s.value);
    }
};

chat_record a_chat(const std::string& id) {
    return {id, store::now_ms(), "coding", "gpt-test", "/srv/projects/app", "editor"};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(store_suite)

BOOST_AUTO_TEST_CASE(migrates_once_and_survives_reopening) {
    temp_database db;
    {
        auto s = db.open();
        BOOST_TEST(s->schema_version() == 3);
        s->insert_chat(a_chat("c1"));
        s->add_message({0, "c1", "r1", "user", "fix the typo", 0});
        run_record run{"r1", "c1", "awaiting_approval",       2, 10,
                       "",   "",   R"({"pending":"call-1"})", 0, 0};
        s->save_run(run);
        s->append_event("r1", "run.started", "{}");
    }  // closed like a process exit; WAL content must be there on reopen
    auto s = db.open();
    BOOST_TEST(s->schema_version() == 3);
    BOOST_TEST_REQUIRE(s->chat("c1").has_value());
    BOOST_TEST(s->chat("c1")->workspace == "/srv/projects/app");
    BOOST_TEST(s->messages("c1").size() == 1u);
    auto waiting = s->runs_with_status("awaiting_approval");
    BOOST_TEST_REQUIRE(waiting.size() == 1u);
    BOOST_TEST(waiting[0].state == R"({"pending":"call-1"})");
    BOOST_TEST(waiting[0].step == 2);
    BOOST_TEST(s->events_after("r1", 0).size() == 1u);
}

BOOST_AUTO_TEST_CASE(events_are_numbered_per_run_and_replayable) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    for (auto id : {"r1", "r2"}) s->save_run({id, "c1", "running", 0, 10, "", "", "{}", 0, 0});
    BOOST_TEST(s->append_event("r1", "run.started", R"({"n":1})") == 1);
    BOOST_TEST(s->append_event("r1", "tool.call", R"({"n":2})") == 2);
    BOOST_TEST(s->append_event("r2", "run.started", "{}") == 1);
    BOOST_TEST(s->append_event("r1", "run.completed", R"({"n":3})") == 3);
    auto missed = s->events_after("r1", 1);
    BOOST_TEST_REQUIRE(missed.size() == 2u);
    BOOST_TEST(missed[0].seq == 2);
    BOOST_TEST(missed[0].type == "tool.call");
    BOOST_TEST(missed[1].data == R"({"n":3})");
    BOOST_TEST(s->events_after("r1", 3).empty());
}

BOOST_AUTO_TEST_CASE(deleting_a_chat_deletes_everything_it_owns) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->insert_chat(a_chat("c2"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->append_event("r1", "run.started", "{}");
    s->save_tool_call({"call-1", "r1", 1, "edit_file", "{}", "awaiting_approval", "", 0});
    s->save_approval({"call-1", "r1", "approve", "", "", "once", 0});
    s->put_document("c1", "a.md", "text");
    BOOST_TEST(s->delete_chat("c1"));
    BOOST_TEST(!s->delete_chat("c1"));
    BOOST_TEST(!s->run("r1"));
    BOOST_TEST(s->events_after("r1", 0).empty());
    BOOST_TEST(!s->tool_call("call-1"));
    BOOST_TEST(!s->approval("call-1"));
    BOOST_TEST(!s->document("c1"));
    BOOST_TEST(s->chats().size() == 1u);
}

BOOST_AUTO_TEST_CASE(tool_calls_approvals_and_documents) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->save_tool_call(
        {"call-1", "r1", 1, "edit_file", R"({"path":"a"})", "awaiting_approval", "", 0});
    auto call = *s->tool_call("call-1");
    call.status = "done";
    call.result = R"({"ok":true})";
    s->save_tool_call(call);
    BOOST_TEST(s->tool_calls("r1").size() == 1u);
    BOOST_TEST(s->tool_call("call-1")->status == "done");
    s->save_approval({"call-1", "r1", "reject", "", "use a smaller edit", "once", 0});
    BOOST_TEST(s->approval("call-1")->feedback == "use a smaller edit");
    BOOST_TEST(s->put_document("c1", "essay.md", "v1") == 1);
    BOOST_TEST(s->put_document("c1", "essay.md", "v2") == 2);
    BOOST_TEST(s->document("c1")->content == "v2");
    BOOST_TEST(s->document("c1")->version == 2);
}

BOOST_AUTO_TEST_CASE(saving_a_run_or_call_again_keeps_what_hangs_off_it) {
    // A run is saved at every step; its events, calls and approvals must stay.
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->append_event("r1", "run.started", "{}");
    s->save_tool_call({"call-1", "r1", 1, "edit_file", "{}", "awaiting_approval", "", 0});
    s->save_approval({"call-1", "r1", "approve", "", "", "once", 0});
    s->save_run({"r1", "c1", "completed", 1, 10, "done", "", "{}", 0, 0});
    s->save_tool_call({"call-1", "r1", 1, "edit_file", "{}", "done", "{}", 0});
    BOOST_TEST(s->events_after("r1", 0).size() == 1u);
    BOOST_TEST(s->tool_calls("r1").size() == 1u);
    BOOST_TEST(s->approval("call-1").has_value());
    BOOST_TEST(s->run("r1")->status == "completed");
    BOOST_TEST(s->tool_call("call-1")->status == "done");
}

BOOST_AUTO_TEST_CASE(run_messages_are_appended_in_order_and_go_with_the_run) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->append_run_message("r1", 0, "user", "fix it");
    s->append_run_message("r1", 1, "assistant", R"({"tool":"read_file"})");
    BOOST_TEST(s->run_status("r1").value_or("") == "running");
    BOOST_TEST(!s->run_status("r2"));
    auto messages = s->run_messages("r1");
    BOOST_TEST_REQUIRE(messages.size() == 2u);
    BOOST_TEST(messages[0].second == "fix it");
    BOOST_TEST(messages[1].first == "assistant");
    BOOST_CHECK_THROW(s->append_run_message("r1", 1, "user", "again"), store_error);
    s->delete_chat("c1");
    BOOST_TEST(s->run_messages("r1").empty());
}

BOOST_AUTO_TEST_CASE(a_version_1_database_is_migrated) {
    temp_database db;
    {
        auto s = db.open();
        s->insert_chat(a_chat("c1"));
    }
    {
        sqlite3* raw = nullptr;
        BOOST_TEST_REQUIRE(sqlite3_open(db.path.c_str(), &raw) == SQLITE_OK);
        BOOST_TEST(sqlite3_exec(raw, "DROP TABLE run_messages; ALTER TABLE tool_calls DROP COLUMN preview; "
                                      "PRAGMA user_version=1;", nullptr,
                                nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(raw);
    }
    auto s = db.open();
    BOOST_TEST(s->schema_version() == 3);
    BOOST_TEST(s->chat("c1").has_value());
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->append_run_message("r1", 0, "user", "hello");
    BOOST_TEST(s->run_messages("r1").size() == 1u);
}

BOOST_AUTO_TEST_CASE(atomically_commits_all_or_nothing) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    BOOST_CHECK_THROW(s->atomically([&] {
        s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
        s->insert_chat(a_chat("c1"));  // duplicate key: the whole transaction rolls back
    }),
                      store_error);
    BOOST_TEST(!s->run("r1"));
    s->atomically([&] {
        s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
        s->append_event("r1", "run.started", "{}");  // nested: joins the transaction
    });
    BOOST_TEST(s->run("r1").has_value());
    BOOST_TEST(s->events_after("r1", 0).size() == 1u);
}

BOOST_AUTO_TEST_CASE(open_errors_name_the_file) {
    auto missing = store::open("/nonexistent-dir/contextgate.db");
    BOOST_TEST(!missing);
    BOOST_TEST(missing.error.find("/nonexistent-dir/contextgate.db: cannot open") == 0u,
               missing.error);
    temp_database db;
    {
        sqlite3* raw = nullptr;
        sqlite3_open(db.path.c_str(), &raw);
        sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
        sqlite3_close(raw);
    }
    auto newer = store::open(db.path);
    BOOST_TEST(!newer);
    BOOST_TEST(newer.error.find("schema version 99, newer than this contextgate") !=
               std::string::npos);
    fs::remove(db.path);
    {
        std::FILE* f = std::fopen(db.path.c_str(), "w");
        std::fputs("this is not a database, just some text long enough to be a header....", f);
        std::fclose(f);
    }
    auto garbage = store::open(db.path);
    BOOST_TEST(!garbage);
    BOOST_TEST(garbage.error.find(db.path) == 0u, garbage.error);
}

BOOST_AUTO_TEST_CASE(messages_come_in_pages_newest_first) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 7; ++i)
        ids.push_back(s->add_message({0, "c1", "r", i % 2 ? "assistant" : "user",
                                      "m" + std::to_string(i), 0}));
    bool older = false;
    auto newest = s->message_page("c1", 0, 3, older);
    BOOST_TEST_REQUIRE(newest.size() == 3u);
    BOOST_TEST(newest.front().content == "m4");  // oldest first within the page
    BOOST_TEST(newest.back().content == "m6");
    BOOST_TEST(older);
    auto next = s->message_page("c1", newest.front().id, 3, older);
    BOOST_TEST(next.front().content == "m1");
    BOOST_TEST(older);
    auto last = s->message_page("c1", next.front().id, 3, older);
    BOOST_TEST(last.size() == 1u);
    BOOST_TEST(last.front().content == "m0");
    BOOST_TEST(!older);
}

BOOST_AUTO_TEST_CASE(recent_messages_stop_at_the_byte_budget) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    for (int i = 0; i < 5; ++i) s->add_message({0, "c1", "r", "user", std::string(100, 'a' + i), 0});
    std::size_t left_out = 0;
    auto kept = s->recent_messages("c1", 250, left_out);
    BOOST_TEST_REQUIRE(kept.size() == 2u);
    BOOST_TEST(kept[0].content == std::string(100, 'd'));
    BOOST_TEST(kept[1].content == std::string(100, 'e'));
    BOOST_TEST(left_out == 3u);
    BOOST_TEST(s->recent_messages("c1", SIZE_MAX, left_out).size() == 5u);
    BOOST_TEST(left_out == 0u);
    BOOST_TEST(s->recent_messages("c1", 10, left_out).empty());
    BOOST_TEST(left_out == 5u);
}

BOOST_AUTO_TEST_CASE(events_are_read_in_bounded_pages) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    for (int i = 0; i < 10; ++i) s->append_event("r1", "e", std::string(100, 'x'));
    BOOST_TEST(s->events_after("r1", 0, 4).size() == 4u);
    BOOST_TEST(s->events_after("r1", 0, 100, 250).size() == 3u);  // stops once over 250 bytes
    BOOST_TEST(s->events_after("r1", 0, 100, 1).size() == 1u);    // never an empty page
    auto rest = s->events_after("r1", 8, 100);
    BOOST_TEST_REQUIRE(rest.size() == 2u);
    BOOST_TEST(rest[0].seq == 9);
}

BOOST_AUTO_TEST_CASE(a_call_keeps_its_preview_and_a_run_its_input) {
    temp_database db;
    auto s = db.open();
    s->insert_chat(a_chat("c1"));
    s->save_run({"r1", "c1", "running", 0, 10, "", "", "{}", 0, 0});
    s->add_message({0, "c1", "r1", "user", "fix it", 0});
    s->add_message({0, "c1", "r1", "assistant", "fixed", 0});
    tool_call_record call{"call-1", "r1", 1, "edit_file", "{}", "awaiting_approval", "", 0};
    call.preview = "--- a/x\n+++ b/x\n";
    s->save_tool_call(call);
    BOOST_TEST(s->tool_call("call-1")->preview == call.preview);
    BOOST_TEST(s->run_input("r1").value_or("") == "fix it");
    BOOST_TEST(!s->run_input("r2"));
}

BOOST_AUTO_TEST_SUITE_END()
