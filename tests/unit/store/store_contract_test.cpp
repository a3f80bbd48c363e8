// The store contract: every behaviour of state_store, run against the one SQL store on both
// databases. `unit` runs it on SQLite; ctest's `store_contract_postgres` runs this suite again
// with CONTEXTGATE_TEST_STORE=postgres, each test in a fresh schema of the test cluster
// (tests/support/postgres.sh). The few tests that reach into one database's files or catalog
// say so and run on that database only.
#include "gateway/observability/metrics.hpp"
#include "gateway/store/pg_database.hpp"
#include "gateway/store/pg_store.hpp"
#include "gateway/store/schema.hpp"
#include "gateway/store/sqlite_database.hpp"
#include "gateway/store/sqlite_store.hpp"
#include "tests/support/test_postgres.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <string_view>
#include <thread>

namespace store_store_contract_test {

namespace fs = std::filesystem;
namespace net = boost::asio;
using namespace gateway::store;
using gateway::edit_session_status;
using gateway::now_ms;
using gateway::run_status;
using gateway::tool_call_status;

namespace {

bool on_postgres() {
    const char* store = std::getenv("CONTEXTGATE_TEST_STORE");
    return store && std::string_view(store) == "postgres";
}

// Preconditions of the tests that reach into one database directly.
struct sqlite_only {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result on(!on_postgres());
        on.message() << "reaches into SQLite's file";
        return on;
    }
};
struct postgres_only {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result on(on_postgres());
        on.message() << "reaches into PostgreSQL's catalog (store_contract_postgres runs it)";
        return on;
    }
};

// A fresh database (a temporary SQLite file, or a new schema of the test cluster), and a
// caller's event loop to await the store's answers on.
struct temp_store {
    fs::path dir;
    std::string path;  // the SQLite file, or the PostgreSQL URL with its schema
    net::io_context io;
    std::unique_ptr<sql_store> s;

    temp_store() {
        if (on_postgres()) {
            path = gateway::testing::fresh_postgres_schema();
        } else {
            char pattern[] = "/tmp/contextgate-store-XXXXXX";
            dir = ::mkdtemp(pattern);
            path = (dir / "contextgate.db").string();
        }
        reopen();
    }
    ~temp_store() {
        s.reset();
        if (!dir.empty()) fs::remove_all(dir);
    }
    void reopen() {
        s.reset();
        if (on_postgres()) {
            gateway::config::store_config config;
            config.type = gateway::config::store_type::postgres;
            config.dsn = path;
            auto opened = pg_store::open(config);
            BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
            s = std::move(*opened.value);
        } else {
            auto opened = sqlite_store::open(path);
            BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
            s = std::move(*opened.value);
        }
    }
    // A connection of its own to the same database, through the store's driver.
    std::unique_ptr<sql_connection> raw() {
        if (on_postgres()) {
            auto db = pg_database::open(path);
            BOOST_TEST_REQUIRE(static_cast<bool>(db), db.error);
            return std::move(*db.value);
        }
        auto db = sqlite_database::open(path, sqlite_database::access::read_write);
        BOOST_TEST_REQUIRE(static_cast<bool>(db), db.error);
        return std::move(*db.value);
    }
    // Runs one store call to its end on the caller's loop and returns its result.
    template <class T>
    T wait(net::awaitable<T> call) {
        auto done = net::co_spawn(io, std::move(call), net::use_future);
        io.restart();
        io.run();
        return done.get();
    }
    void commit(write_batch b) { wait(s->commit(std::move(b))); }
    void chat(const std::string& id) {
        wait(s->insert_chat({id, now_ms(), "coding", "gpt-test", "/srv/projects/app", "editor"}));
    }
    void run(const std::string& id, const std::string& chat,
             run_status status = run_status::running) {
        write_batch b;
        b.runs.push_back({id, chat, status, 0, 10, "", "", "{}", 0, 0});
        commit(std::move(b));
    }
    void event(const std::string& run, std::int64_t seq, const std::string& type,
               const std::string& data = "{}") {
        write_batch b;
        b.events.push_back({run, seq, type, data, 0});
        commit(std::move(b));
    }
    std::int64_t message(const std::string& chat, const std::string& run, const std::string& role,
                         const std::string& content) {
        write_batch b;
        b.messages.push_back({0, chat, run, role, content, 0});
        commit(std::move(b));
        auto page = wait(s->messages(chat, 0, 1));
        return page.messages.back().id;
    }
};

// Undoes what the steps after schema version 10 added, for the tests that make a database as an
// older contextgate left it (a new step adds its undoing here).
const std::string undo_steps_after_10 =
    "ALTER TABLE chats DROP COLUMN owner_user; "
    "DROP TABLE teams; DROP TABLE audit_log; "
    "DROP TABLE sessions; DROP TABLE login_states; DROP TABLE users; "
    "ALTER TABLE virtual_keys DROP COLUMN team; ALTER TABLE virtual_keys DROP COLUMN owner_user; "
    "ALTER TABLE usage_daily DROP COLUMN cache_read_tokens; "
    "ALTER TABLE usage_daily DROP COLUMN cache_write_tokens; "
    "ALTER TABLE usage_daily DROP COLUMN reasoning_tokens; "
    "ALTER TABLE usage_daily DROP COLUMN usd_nano; "
    "ALTER TABLE usage_daily DROP COLUMN unpriced_requests; "
    "ALTER TABLE usage_daily DROP COLUMN estimated_requests; "
    "ALTER TABLE usage_daily DROP COLUMN cache_hits; "
    "ALTER TABLE usage_daily DROP COLUMN saved_usd_nano; "
    "ALTER TABLE virtual_keys DROP COLUMN budget_usd_nano; ";

}  // namespace

BOOST_AUTO_TEST_SUITE(store_contract)

// The stores' one text rule: a NUL is refused (PostgreSQL cannot keep it, tests/integration
// replicas), never stored by one store and cut by the other.
BOOST_AUTO_TEST_CASE(a_text_holding_a_nul_is_refused) {
    temp_store t;
    std::string cut("scrip\0ted", 9);
    BOOST_CHECK_THROW(t.wait(t.s->insert_chat({"c1", 1, "coding", cut, "/w", "editor"})),
                      text_holds_nul);
    BOOST_TEST(!t.wait(t.s->chat("c1")).has_value());
    t.chat("c2");
    BOOST_CHECK_THROW(t.message("c2", "", "user", cut), text_holds_nul);
}

BOOST_AUTO_TEST_CASE(migrates_once_and_survives_reopening) {
    temp_store t;
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    t.chat("c1");
    t.message("c1", "r1", "user", "fix the typo");
    write_batch b;
    b.runs.push_back(
        {"r1", "c1", run_status::awaiting_approval, 2, 10, "", "", R"({"pending":1})", 0, 0});
    b.events.push_back({"r1", 1, "run.started", "{}", 0});
    t.commit(std::move(b));
    t.reopen();  // like a process exit: what was committed is there
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    BOOST_TEST(t.wait(t.s->chat("c1"))->workspace == "/srv/projects/app");
    BOOST_TEST(t.wait(t.s->messages("c1", 0, 10)).messages.size() == 1u);
    auto unfinished = t.wait(t.s->unfinished_runs());
    BOOST_TEST_REQUIRE(unfinished.size() == 1u);
    BOOST_TEST(unfinished[0].state == R"({"pending":1})");
    BOOST_TEST(unfinished[0].step == 2);
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, SIZE_MAX)).size() == 1u);
    BOOST_TEST(t.wait(t.s->last_event("r1")) == 1);
    BOOST_TEST(t.wait(t.s->last_event("r2")) == 0);
}

BOOST_AUTO_TEST_CASE(a_batch_commits_all_or_nothing) {
    temp_store t;
    t.chat("c1");
    write_batch bad;
    bad.runs.push_back({"r1", "c1", run_status::running, 0, 10, "", "", "{}", 0, 0});
    bad.events.push_back({"r1", 1, "run.started", "{}", 0});
    bad.events.push_back({"r1", 1, "duplicate", "{}", 0});  // the same (run, seq): fails
    BOOST_CHECK_THROW(t.commit(std::move(bad)), store_error);
    BOOST_TEST(!t.wait(t.s->run("r1")));
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, SIZE_MAX)).empty());
    // The store still works after a failed transaction.
    t.run("r1", "c1");
    BOOST_TEST((t.wait(t.s->run_status("r1")) == run_status::running));
}

// Statuses are stored by name; a row holding a name that is none of them is corrupt (or a newer
// build's), and reading it is an error rather than a guess.
BOOST_AUTO_TEST_CASE(a_stored_status_of_no_known_name_is_refused) {
    temp_store t;
    t.chat("c1");
    write_batch b;
    b.runs.push_back({"r1", "c1", run_status::running, 0, 10, "", "", "{}", 0, 0});
    b.tool_calls.push_back(
        {"call-1", "r1", 1, "edit_file", "{}", tool_call_status::pending, "", 0, ""});
    t.commit(std::move(b));
    BOOST_TEST((t.wait(t.s->tool_call("call-1"))->status == tool_call_status::pending));
    t.raw()->execute("UPDATE runs SET status = 'paused' WHERE id = 'r1'");
    t.raw()->execute("UPDATE tool_calls SET status = 'Done' WHERE id = 'call-1'");
    BOOST_CHECK_THROW(t.wait(t.s->run("r1")), store_error);
    BOOST_CHECK_THROW(t.wait(t.s->run_status("r1")), store_error);
    BOOST_CHECK_THROW(t.wait(t.s->runs_of_chat("c1")), store_error);
    BOOST_CHECK_THROW(t.wait(t.s->tool_call("call-1")), store_error);
}

BOOST_AUTO_TEST_CASE(a_chat_has_one_unfinished_run_at_most) {
    temp_store t;
    t.chat("c1");
    t.chat("c2");
    t.run("r1", "c1");
    BOOST_CHECK_THROW(t.run("r2", "c1"), live_run_exists);
    BOOST_CHECK_THROW(t.run("r2", "c1", run_status::awaiting_approval), live_run_exists);
    BOOST_TEST(!t.wait(t.s->run("r2")).has_value());  // nothing of the refused batch was kept
    t.run("r3", "c2");                                // other chats are not concerned
    t.run("r4", "c1", run_status::completed);         // ended runs are not counted
    t.run("r1", "c1", run_status::completed);
    t.run("r2", "c1");  // free again once it ended
    BOOST_TEST((t.wait(t.s->run_status("r2")) == run_status::running));
}

BOOST_AUTO_TEST_CASE(events_are_read_in_bounded_pages) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    t.run("r2", "c1", run_status::completed);
    write_batch b;
    for (int i = 1; i <= 10; ++i) b.events.push_back({"r1", i, "e", std::string(100, 'x'), 0});
    b.events.push_back({"r2", 1, "other", "{}", 0});
    t.commit(std::move(b));
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 4, SIZE_MAX)).size() == 4u);
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, 250)).size() == 3u);  // over 250 bytes
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, 1)).size() == 1u);    // never empty
    auto rest = t.wait(t.s->events_after("r1", 8, 100, SIZE_MAX));
    BOOST_TEST_REQUIRE(rest.size() == 2u);
    BOOST_TEST(rest[0].seq == 9);
    BOOST_TEST(t.wait(t.s->last_event("r1")) == 10);
}

BOOST_AUTO_TEST_CASE(deleting_a_chat_deletes_everything_it_owns) {
    temp_store t;
    t.chat("c1");
    t.chat("c2");
    write_batch b;
    b.runs.push_back({"r1", "c1", run_status::running, 0, 10, "", "", "{}", 0, 0});
    b.run_messages.push_back({"r1", 0, "user", "hi", 1});
    b.tool_calls.push_back(
        {"call-1", "r1", 1, "edit_file", "{}", tool_call_status::awaiting_approval, "", 0, ""});
    b.approvals.push_back({"call-1", "r1", "approve", "", "", "once", 0});
    b.backups.push_back({"call-1", "r1", "a.txt", true, "old", "abc", 0, 0});
    b.events.push_back({"r1", 1, "run.started", "{}", 0});
    t.commit(std::move(b));
    t.wait(t.s->put_document("c1", "a.md", "text", std::nullopt));
    BOOST_TEST(t.wait(t.s->delete_chat("c1")));
    BOOST_TEST(!t.wait(t.s->delete_chat("c1")));
    BOOST_TEST(!t.wait(t.s->run("r1")));
    BOOST_TEST(t.wait(t.s->run_messages("r1")).empty());
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, SIZE_MAX)).empty());
    BOOST_TEST(!t.wait(t.s->tool_call("call-1")));
    BOOST_TEST(!t.wait(t.s->approval("call-1")));
    BOOST_TEST(!t.wait(t.s->last_backup("r1")));
    BOOST_TEST(!t.wait(t.s->document("c1")));
    BOOST_TEST(t.wait(t.s->chats()).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_chat_keeps_the_user_who_made_it) {
    temp_store t;
    chat_record mine{"c1", 1, "coding", "gpt-test", "/w", "editor"};
    mine.user = "user_0123";
    t.wait(t.s->insert_chat(mine));
    t.chat("c2");  // made with a key: nobody's
    BOOST_TEST(t.wait(t.s->chat("c1"))->user == "user_0123");
    BOOST_TEST(t.wait(t.s->chat("c2"))->user.empty());
    auto all = t.wait(t.s->chats());
    BOOST_TEST_REQUIRE(all.size() == 2u);
    BOOST_TEST(all[0].user == "user_0123");
    BOOST_TEST(all[1].user.empty());
}

BOOST_AUTO_TEST_CASE(saving_a_run_or_call_again_keeps_what_hangs_off_it) {
    // A run is saved at every step; its events, calls and approvals must stay.
    temp_store t;
    t.chat("c1");
    write_batch b;
    b.runs.push_back({"r1", "c1", run_status::running, 0, 10, "", "", "{}", 0, 0});
    b.tool_calls.push_back({"call-1", "r1", 1, "edit_file", "{}",
                            tool_call_status::awaiting_approval, "", 0, "--- a/x"});
    b.approvals.push_back({"call-1", "r1", "approve", "", "", "once", 0});
    b.events.push_back({"r1", 1, "run.started", "{}", 0});
    t.commit(std::move(b));
    write_batch again;
    again.runs.push_back({"r1", "c1", run_status::completed, 1, 10, "done", "", "{}", 0, 0});
    again.tool_calls.push_back(
        {"call-1", "r1", 1, "edit_file", "{}", tool_call_status::done, "{}", 0, "--- a/x"});
    t.commit(std::move(again));
    BOOST_TEST(t.wait(t.s->events_after("r1", 0, 100, SIZE_MAX)).size() == 1u);
    BOOST_TEST(t.wait(t.s->tool_calls("r1")).size() == 1u);
    BOOST_TEST(t.wait(t.s->approval("call-1")).has_value());
    BOOST_TEST((t.wait(t.s->run("r1"))->status == run_status::completed));
    BOOST_TEST((t.wait(t.s->tool_call("call-1"))->status == tool_call_status::done));
    BOOST_TEST(t.wait(t.s->tool_call("call-1"))->preview == "--- a/x");
    BOOST_TEST(t.wait(t.s->unfinished_runs()).empty());
}

BOOST_AUTO_TEST_CASE(run_messages_are_appended_once_in_order) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    write_batch b;
    b.run_messages.push_back({"r1", 0, "user", "fix it", 1});
    b.run_messages.push_back(
        {"r1", 1, "assistant", R"({"role":"assistant","parts":[{"type":"text","text":"ok"}]})", 2});
    t.commit(std::move(b));
    auto messages = t.wait(t.s->run_messages("r1"));
    BOOST_TEST_REQUIRE(messages.size() == 2u);
    BOOST_TEST(messages[0].content == "fix it");
    BOOST_TEST(messages[0].format == 1);  // how the engine wrote each is kept with it
    BOOST_TEST(messages[1].role == "assistant");
    BOOST_TEST(messages[1].format == 2);
    write_batch twice;
    twice.run_messages.push_back({"r1", 1, "user", "again"});
    BOOST_CHECK_THROW(t.commit(std::move(twice)), store_error);
}

BOOST_AUTO_TEST_CASE(messages_come_in_pages_and_recent_ones_within_a_budget) {
    temp_store t;
    t.chat("c1");
    for (int i = 0; i < 7; ++i)
        t.message("c1", "r", i % 2 ? "assistant" : "user", "m" + std::to_string(i));
    auto newest = t.wait(t.s->messages("c1", 0, 3));
    BOOST_TEST_REQUIRE(newest.messages.size() == 3u);
    BOOST_TEST(newest.messages.front().content == "m4");  // oldest first within the page
    BOOST_TEST(newest.older);
    auto next = t.wait(t.s->messages("c1", newest.messages.front().id, 3));
    BOOST_TEST(next.messages.front().content == "m1");
    auto last = t.wait(t.s->messages("c1", next.messages.front().id, 3));
    BOOST_TEST(last.messages.size() == 1u);
    BOOST_TEST(!last.older);

    auto recent = t.wait(t.s->recent_messages("c1", 5));
    BOOST_TEST_REQUIRE(recent.messages.size() == 2u);  // "m5" and "m6", 2 bytes each
    BOOST_TEST(recent.messages[0].content == "m5");
    BOOST_TEST(recent.left_out == 5u);
    BOOST_TEST(t.wait(t.s->recent_messages("c1", SIZE_MAX)).messages.size() == 7u);
    BOOST_TEST(t.wait(t.s->recent_messages("c1", 1)).left_out == 7u);
}

BOOST_AUTO_TEST_CASE(a_run_knows_its_input) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    t.message("c1", "r1", "user", "fix it");
    t.message("c1", "r1", "assistant", "fixed");
    BOOST_TEST(t.wait(t.s->run_input("r1")).value_or("") == "fix it");
    BOOST_TEST(!t.wait(t.s->run_input("r2")));
}

BOOST_AUTO_TEST_CASE(documents_are_written_only_on_the_version_they_were_based_on) {
    temp_store t;
    t.chat("c1");
    auto first = t.wait(t.s->put_document("c1", "essay.md", "v1", 0));
    BOOST_TEST(first.version == 1);
    BOOST_TEST(!first.conflict);
    auto second = t.wait(t.s->put_document("c1", "essay.md", "v2", 1));
    BOOST_TEST(second.version == 2);
    auto stale = t.wait(t.s->put_document("c1", "essay.md", "lost", 1));
    BOOST_TEST(stale.conflict);
    BOOST_TEST(stale.version == 2);
    BOOST_TEST(t.wait(t.s->document("c1"))->content == "v2");
    auto forced = t.wait(t.s->put_document("c1", "essay.md", "v3", std::nullopt));
    BOOST_TEST(forced.version == 3);
    BOOST_TEST(!t.wait(t.s->document("c2")));
}

BOOST_AUTO_TEST_CASE(backups_give_the_last_write_not_undone) {
    temp_store t;
    t.chat("c1");
    write_batch b;
    b.runs.push_back({"r1", "c1", run_status::completed, 0, 10, "", "", "{}", 0, 0});
    for (auto id : {"call-1", "call-2"})
        b.tool_calls.push_back(
            {id, "r1", 1, "edit_file", "{}", tool_call_status::done, "{}", 0, ""});
    b.backups.push_back({"call-1", "r1", "a.txt", true, "a0", "h1", 0, 1000});
    b.backups.push_back({"call-2", "r1", "b.txt", false, "", "h2", 0, 2000});
    t.commit(std::move(b));
    auto last = t.wait(t.s->last_backup("r1"));
    BOOST_TEST_REQUIRE(last.has_value());
    BOOST_TEST(last->call_id == "call-2");
    BOOST_TEST(!last->existed);
    write_batch undone;
    last->undone_at = 3000;
    undone.backups.push_back(*last);
    t.commit(std::move(undone));
    BOOST_TEST(t.wait(t.s->last_backup("r1"))->call_id == "call-1");
}

BOOST_AUTO_TEST_CASE(a_large_read_does_not_wait_for_the_writer) {
    // Reads go to their own connection and thread: a read issued while the writer is busy with a
    // long transaction completes without waiting for it.
    temp_store t;
    t.chat("c1");
    auto other = t.raw();
    // Another connection holds the write lock (SQLite: the file's; PostgreSQL: the table's,
    // which inserts wait for and reads do not) ...
    other->execute(on_postgres() ? "BEGIN; LOCK TABLE chats IN SHARE ROW EXCLUSIVE MODE"
                                 : "BEGIN IMMEDIATE");
    // ... so a commit now waits ...
    auto blocked =
        net::co_spawn(t.io, t.s->insert_chat({"c2", 0, "p", "m", "", "editor"}), net::use_future);
    t.io.restart();
    std::thread runner([&] { t.io.run(); });
    // ... while reads answer at once.
    net::io_context reader_io;
    auto read = net::co_spawn(reader_io, t.s->chats(), net::use_future);
    reader_io.run();
    BOOST_TEST(read.get().size() == 1u);
    other->execute("COMMIT");
    blocked.get();
    runner.join();
    BOOST_TEST(t.wait(t.s->chats()).size() == 2u);
}

BOOST_AUTO_TEST_CASE(edit_sessions_are_written_only_on_the_revision_they_read) {
    temp_store t;
    t.chat("c1");
    BOOST_TEST(t.wait(t.s->update_chat("c1", {.edits = gateway::edit_mode::review})));
    BOOST_TEST((t.wait(t.s->chat("c1"))->edits == gateway::edit_mode::review));
    BOOST_TEST(!t.wait(t.s->update_chat("nope", {.edits = gateway::edit_mode::review})));

    edit_session_record s{"s1", "c1",    "file", "a.txt", "a.txt", edit_session_status::open,
                          true, "one\n", true,   "two\n", 0,       1,
                          0,    0,       0};
    session_edit_record e{"e1", "s1", 1, "edit_file", "", "{}", "r1", "call_1", "diff", "{}", 0};
    BOOST_TEST(t.wait(t.s->save_edit_session(s, 0, e)));
    // A second open session for the same target is refused; a new id cannot reuse expected 0.
    auto twin = s;
    twin.id = "s2";
    BOOST_TEST(!t.wait(t.s->save_edit_session(twin, 0, std::nullopt)));
    BOOST_TEST(!t.wait(t.s->save_edit_session(s, 0, std::nullopt)));

    auto stored = t.wait(t.s->edit_session("s1"));
    BOOST_TEST_REQUIRE(stored.has_value());
    BOOST_TEST(stored->revision == 1);
    BOOST_TEST(stored->ai_version == "two\n");
    BOOST_TEST(t.wait(t.s->session_edit_of_call("call_1"))->id == "e1");

    // Resolved at revision 1: a writer that read revision 1 before is refused afterwards.
    auto resolved = *stored;
    resolved.status = edit_session_status::accepted;
    BOOST_TEST(t.wait(t.s->save_edit_session(resolved, 1, std::nullopt)));
    auto late = *stored;
    late.ai_version = "three\n";
    BOOST_TEST(!t.wait(t.s->save_edit_session(late, 1, std::nullopt)));
    BOOST_TEST(t.wait(t.s->edit_sessions("c1", true)).empty());
    BOOST_TEST(t.wait(t.s->edit_sessions("c1", false)).size() == 1u);
    // With the first resolved, the target can have a new open session.
    BOOST_TEST(t.wait(t.s->save_edit_session(twin, 0, std::nullopt)));
    BOOST_TEST(t.wait(t.s->edit_sessions("c1", true)).size() == 1u);

    // Deleted with their chat.
    BOOST_TEST(t.wait(t.s->delete_chat("c1")));
    BOOST_TEST(!t.wait(t.s->edit_session("s1")).has_value());
    BOOST_TEST(t.wait(t.s->session_edits("s1")).empty());
}

BOOST_AUTO_TEST_CASE(a_version_1_sqlite_database_is_migrated,
                     *boost::unit_test::precondition(sqlite_only())) {
    temp_store t;
    t.chat("c1");
    t.s.reset();
    {
        sqlite3* raw = nullptr;
        BOOST_TEST_REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
        BOOST_TEST(sqlite3_exec(raw,
                                "DROP TABLE run_messages; DROP TABLE write_backups; "
                                "ALTER TABLE tool_calls DROP COLUMN preview; "
                                "DROP TABLE session_edits; DROP TABLE edit_sessions; "
                                "ALTER TABLE chats DROP COLUMN edits; "
                                "ALTER TABLE chats DROP COLUMN title; "
                                "ALTER TABLE chats DROP COLUMN owner_user; "
                                "DROP TABLE usage_daily; DROP TABLE virtual_keys; "
                                "DROP TABLE teams; DROP TABLE audit_log; "
                                "DROP TABLE sessions; DROP TABLE login_states; "
                                "DROP TABLE users; "
                                "DROP INDEX one_live_run_per_chat; "
                                "ALTER TABLE runs DROP COLUMN owner; "
                                "ALTER TABLE runs DROP COLUMN lease_expires; "
                                "INSERT INTO messages (chat_id, run_id, role, content, created_at) "
                                "VALUES ('c1', '', 'user', 'Rename\nthe module', 1), "
                                "('c1', '', 'user', 'Second', 2); "
                                "PRAGMA user_version=1;",
                                nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(raw);
    }
    t.reopen();
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    auto migrated = t.wait(t.s->chat("c1"));
    BOOST_TEST_REQUIRE(migrated.has_value());
    BOOST_TEST((migrated->edits ==
                gateway::edit_mode::approve));  // chats from before review mode keep approvals
    BOOST_TEST(migrated->title == "Rename the module");  // named after their first message
    t.run("r1", "c1");
    write_batch b;
    b.run_messages.push_back({"r1", 0, "user", "hello", 1});
    t.commit(std::move(b));
    BOOST_TEST(t.wait(t.s->run_messages("r1")).size() == 1u);
}

BOOST_AUTO_TEST_CASE(conversation_rows_from_before_the_typed_conversation_keep_format_1,
                     *boost::unit_test::precondition(sqlite_only())) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    t.s.reset();
    {
        sqlite3* raw = nullptr;
        BOOST_TEST_REQUIRE(sqlite3_open(t.path.c_str(), &raw) == SQLITE_OK);
        BOOST_TEST(sqlite3_exec(raw,
                                (undo_steps_after_10 +
                                 "ALTER TABLE run_messages DROP COLUMN format; "
                                 "INSERT INTO run_messages (run_id, seq, role, content) "
                                 "VALUES ('r1', 0, 'assistant_calls', '{\"calls\":[]}'); "
                                 "PRAGMA user_version=9;")
                                    .c_str(),
                                nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(raw);
    }
    t.reopen();
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    auto messages = t.wait(t.s->run_messages("r1"));
    BOOST_TEST_REQUIRE(messages.size() == 1u);
    BOOST_TEST(messages[0].format == 1);
    BOOST_TEST(messages[0].role == "assistant_calls");
}

BOOST_AUTO_TEST_CASE(virtual_keys_are_saved_updated_and_revoked) {
    temp_store t;
    gateway::config::virtual_key k;
    k.id = "key_1";
    k.name = "ci";
    k.digest = "sha256:" + std::string(64, 'a');
    k.models = {"gpt-*"};
    k.rpm = 5;
    k.budget_tokens = 1000;
    k.budget_usd_nano = 25'000'000'001;
    k.budget_period = gateway::config::budget_period::week;
    k.team = "platform";
    t.wait(t.s->save_key(k));
    k.rpm = 7;
    k.name = "ci-2";
    t.wait(t.s->save_key(k));
    auto keys = t.wait(t.s->keys());
    BOOST_TEST_REQUIRE(keys.size() == 1u);
    BOOST_TEST(keys[0].revoked_at == 0);
    BOOST_TEST(keys[0].key.name == "ci-2");
    BOOST_TEST(keys[0].key.rpm == 7u);
    BOOST_TEST((keys[0].key.models == std::vector<std::string>{"gpt-*"}));
    BOOST_TEST((keys[0].key.budget_period == gateway::config::budget_period::week));
    BOOST_TEST(keys[0].key.budget_usd_nano == 25'000'000'001u);
    BOOST_TEST(keys[0].key.team == "platform");
    BOOST_TEST(keys[0].key.created_at > 0);
    BOOST_TEST(t.wait(t.s->revoke_key("key_1")));
    BOOST_TEST(!t.wait(t.s->revoke_key("key_1")));  // already revoked
    BOOST_TEST(t.wait(t.s->keys()).at(0).revoked_at > 0);
    // The digest stays taken: a revoked key's secret cannot be registered again.
    k.id = "key_2";
    BOOST_CHECK_THROW(t.wait(t.s->save_key(k)), store_error);
    // Models the row holds as something else than a JSON list are a corrupt row, never read as
    // "every model".
    t.raw()->execute("UPDATE virtual_keys SET models = '{\"gpt-*\": 1}' WHERE id = 'key_1'");
    BOOST_CHECK_THROW(t.wait(t.s->keys()), store_error);
}

BOOST_AUTO_TEST_CASE(usage_adds_up_per_day_key_and_model) {
    temp_store t;
    std::vector<usage_row> rows{{"2026-11-22", "k1", "gpt-a", "up", 2, 10, 20},
                                {"2026-11-23", "k1", "gpt-a", "up", 1, 5, 5},
                                {"2026-11-23", "k1", "gpt-a", "other", 1, 1, 1},
                                {"2026-11-23", "k2", "gpt-b", "up", 3, 30, 30}};
    t.wait(t.s->add_usage(rows));
    t.wait(t.s->add_usage({{"2026-11-23", "k1", "gpt-a", "up", 1, 100, 0}}));
    usage_query totals;
    auto all = t.wait(t.s->usage(totals));
    BOOST_TEST_REQUIRE(all.size() == 2u);
    BOOST_TEST(all[0].key_id == "k1");
    BOOST_TEST(all[0].requests == 5);
    BOOST_TEST(all[0].input_tokens == 116);
    BOOST_TEST(all[0].output_tokens == 26);
    BOOST_TEST(all[0].day.empty());
    usage_query daily;
    daily.key_id = "k1";
    daily.from_day = "2026-11-23";
    daily.by_day = true;
    auto days = t.wait(t.s->usage(daily));
    BOOST_TEST_REQUIRE(days.size() == 1u);
    BOOST_TEST(days[0].day == "2026-11-23");
    BOOST_TEST(days[0].requests == 3);  // both upstreams, one row
    BOOST_TEST(days[0].input_tokens == 106);
    usage_query by_model;
    by_model.model = "gpt-b";
    BOOST_TEST(t.wait(t.s->usage(by_model)).at(0).requests == 3);
}

// Every money column is added on conflict and summed; a report is per exactly the dimensions it
// asks for, in one row per group, and may be filtered by upstream.
BOOST_AUTO_TEST_CASE(usage_money_adds_up_and_is_grouped_as_asked) {
    temp_store t;
    std::vector<usage_row> rows{{.day = "2026-11-22",
                                 .key_id = "k1",
                                 .model = "gpt-a",
                                 .upstream = "up",
                                 .requests = 2,
                                 .input_tokens = 10,
                                 .output_tokens = 20,
                                 .cache_read_tokens = 4,
                                 .cache_write_tokens = 1,
                                 .reasoning_tokens = 3,
                                 .usd_nano = 1500,
                                 .estimated_requests = 1},
                                {.day = "2026-11-23",
                                 .key_id = "k1",
                                 .model = "gpt-a",
                                 .upstream = "up",
                                 .requests = 1,
                                 .input_tokens = 5,
                                 .output_tokens = 5,
                                 .usd_nano = 250},
                                // A response-cache hit: no upstream, no tokens, what it saved.
                                {.day = "2026-11-23",
                                 .key_id = "k1",
                                 .model = "gpt-a",
                                 .requests = 1,
                                 .cache_hits = 1,
                                 .saved_usd_nano = 700},
                                {.day = "2026-11-23",
                                 .key_id = "k2",
                                 .model = "house",
                                 .upstream = "other",
                                 .requests = 3,
                                 .input_tokens = 30,
                                 .output_tokens = 30,
                                 .unpriced_requests = 3}};
    t.wait(t.s->add_usage(rows));
    // Added to the day's row, every column.
    t.wait(t.s->add_usage({{.day = "2026-11-22",
                            .key_id = "k1",
                            .model = "gpt-a",
                            .upstream = "up",
                            .requests = 1,
                            .input_tokens = 1,
                            .output_tokens = 1,
                            .cache_read_tokens = 1,
                            .cache_write_tokens = 1,
                            .reasoning_tokens = 1,
                            .usd_nano = 1,
                            .unpriced_requests = 1,
                            .estimated_requests = 1,
                            .cache_hits = 1,
                            .saved_usd_nano = 1}}));

    auto totals = t.wait(t.s->usage(usage_query{}));  // per key and model
    BOOST_TEST_REQUIRE(totals.size() == 2u);
    const auto& a = totals[0];
    BOOST_TEST((a.key_id == "k1" && a.model == "gpt-a" && a.day.empty() && a.upstream.empty()));
    BOOST_TEST(a.requests == 5);
    BOOST_TEST(a.input_tokens == 16);
    BOOST_TEST(a.output_tokens == 26);
    BOOST_TEST(a.cache_read_tokens == 5);
    BOOST_TEST(a.cache_write_tokens == 2);
    BOOST_TEST(a.reasoning_tokens == 4);
    BOOST_TEST(a.usd_nano == 1751);
    BOOST_TEST(a.unpriced_requests == 1);
    BOOST_TEST(a.estimated_requests == 2);
    BOOST_TEST(a.cache_hits == 2);
    BOOST_TEST(a.saved_usd_nano == 701);
    BOOST_TEST(totals[1].unpriced_requests == 3);

    usage_query by_upstream;
    by_upstream.by_key = by_upstream.by_model = false;
    by_upstream.by_upstream = true;
    auto ups = t.wait(t.s->usage(by_upstream));
    BOOST_TEST_REQUIRE(ups.size() == 3u);  // the cache's "", other, up
    BOOST_TEST((ups[0].upstream.empty() && ups[0].cache_hits == 1 && ups[0].key_id.empty()));
    BOOST_TEST((ups[1].upstream == "other" && ups[1].requests == 3));
    BOOST_TEST((ups[2].upstream == "up" && ups[2].requests == 4 && ups[2].usd_nano == 1751));

    usage_query by_day;
    by_day.by_key = by_day.by_model = false;
    by_day.by_day = true;
    auto days = t.wait(t.s->usage(by_day));
    BOOST_TEST_REQUIRE(days.size() == 2u);
    BOOST_TEST((days[0].day == "2026-11-22" && days[0].requests == 3 && days[0].model.empty()));
    BOOST_TEST((days[1].day == "2026-11-23" && days[1].requests == 5));

    usage_query everything;
    everything.by_key = everything.by_model = false;
    auto all = t.wait(t.s->usage(everything));
    BOOST_TEST_REQUIRE(all.size() == 1u);
    BOOST_TEST(all[0].requests == 8);
    BOOST_TEST(all[0].usd_nano == 1751);

    usage_query each;
    each.by_day = each.by_upstream = true;
    BOOST_TEST(t.wait(t.s->usage(each)).size() == 4u);  // the rows as written

    usage_query other;
    other.upstream = "other";
    auto filtered = t.wait(t.s->usage(other));
    BOOST_TEST_REQUIRE(filtered.size() == 1u);
    BOOST_TEST(filtered[0].key_id == "k2");
}

// A database from before usage was priced keeps its usage rows through the step that adds the
// money columns; their requests count as unpriced (no cost was recorded for them), never as $0.
BOOST_AUTO_TEST_CASE(usage_from_before_prices_is_kept_and_counted_unpriced) {
    temp_store t;
    t.s.reset();
    {
        auto db = t.raw();
        db->execute(undo_steps_after_10.c_str());
        db->execute(
            "INSERT INTO usage_daily (day, key_id, model, upstream, requests, input_tokens, "
            "output_tokens) VALUES ('2026-11-20', 'k1', 'gpt-a', 'up', 4, 40, 8)");
        db->set_schema_version(10);
    }
    t.reopen();
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    t.wait(t.s->add_usage({{.day = "2026-11-20",
                            .key_id = "k1",
                            .model = "gpt-a",
                            .upstream = "up",
                            .requests = 1,
                            .input_tokens = 10,
                            .output_tokens = 2,
                            .usd_nano = 3000}}));
    auto rows = t.wait(t.s->usage(usage_query{}));
    BOOST_TEST_REQUIRE(rows.size() == 1u);
    BOOST_TEST(rows[0].requests == 5);
    BOOST_TEST(rows[0].input_tokens == 50);
    BOOST_TEST(rows[0].output_tokens == 10);
    BOOST_TEST(rows[0].unpriced_requests == 4);
    BOOST_TEST(rows[0].usd_nano == 3000);
}

BOOST_AUTO_TEST_CASE(sqlite_open_errors_name_the_file,
                     *boost::unit_test::precondition(sqlite_only())) {
    auto missing = sqlite_store::open("/nonexistent-dir/contextgate.db");
    BOOST_TEST(!missing);
    BOOST_TEST(missing.error.find("/nonexistent-dir/contextgate.db: cannot open") == 0u,
               missing.error);
    char pattern[] = "/tmp/contextgate-store-XXXXXX";
    fs::path dir = ::mkdtemp(pattern);
    auto path = (dir / "contextgate.db").string();
    {
        sqlite3* raw = nullptr;
        sqlite3_open(path.c_str(), &raw);
        sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
        sqlite3_close(raw);
    }
    auto newer = sqlite_store::open(path);
    BOOST_TEST(!newer);
    BOOST_TEST(newer.error.find("schema version 99, newer than this contextgate") !=
               std::string::npos);
    fs::remove(path);
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        std::fputs("this is not a database, just some text long enough to be a header....", f);
        std::fclose(f);
    }
    auto garbage = sqlite_store::open(path);
    BOOST_TEST(!garbage);
    BOOST_TEST(garbage.error.find(path) == 0u, garbage.error);
    fs::remove_all(dir);
}

// Commits that arrive while the writer is busy share one transaction; when one of them fails
// (here a duplicate event number), it fails alone and the others land. The writer is held busy
// by an update (not a commit) that waits for another connection's lock, so that every commit is
// queued before it is free.
BOOST_AUTO_TEST_CASE(commits_that_arrive_together_share_a_transaction_and_fail_alone) {
    temp_store t;
    for (const char* c : {"c1", "c2", "c3"}) t.chat(c);
    t.run("r1", "c1");
    t.run("r2", "c2");
    t.run("r3", "c3");
    t.event("r2", 1, "run.started");
    auto& transactions = gateway::observability::metrics().store_transactions.with();
    auto batch = [](const std::string& run, std::int64_t seq) {
        write_batch b;
        b.runs.push_back({run, "c" + run.substr(1), run_status::running, static_cast<int>(seq), 10,
                          "", "", "{}", 0, 0});
        b.events.push_back({run, seq, "tool.call", "{}", 0});
        return b;
    };
    // Three commits of three runs at once, behind a writer held by an update of chat c1.
    auto together = [&](const std::string& title, std::int64_t seq1, std::int64_t seq2,
                        std::int64_t seq3) {
        auto holder = t.raw();
        holder->execute(on_postgres() ? "BEGIN; LOCK TABLE chats IN EXCLUSIVE MODE"
                                      : "BEGIN IMMEDIATE");
        chat_changes retitled{std::nullopt, title};
        auto busy = net::co_spawn(t.io, t.s->update_chat("c1", retitled), net::use_future);
        std::vector<std::future<void>> commits;
        commits.push_back(net::co_spawn(t.io, t.s->commit(batch("r1", seq1)), net::use_future));
        commits.push_back(net::co_spawn(t.io, t.s->commit(batch("r2", seq2)), net::use_future));
        commits.push_back(net::co_spawn(t.io, t.s->commit(batch("r3", seq3)), net::use_future));
        t.io.restart();
        t.io.poll();  // each commit is queued now; the writer still waits on the update
        holder->execute("COMMIT");
        t.io.run();
        BOOST_TEST(busy.get());
        return commits;
    };

    double before = transactions.value();
    for (auto& done : together("first", 1, 2, 1)) BOOST_CHECK_NO_THROW(done.get());
    BOOST_TEST(transactions.value() - before == 1.0);  // the three commits in one

    auto second = together("second", 2, 2, 2);  // r2's event 2 exists: its batch fails
    BOOST_CHECK_NO_THROW(second[0].get());
    BOOST_CHECK_THROW(second[1].get(), store_error);
    BOOST_CHECK_NO_THROW(second[2].get());
    BOOST_TEST(t.wait(t.s->last_event("r1")) == 2);
    BOOST_TEST(t.wait(t.s->last_event("r3")) == 2);
    auto r2 = t.wait(t.s->events_after("r2", 0, 10, SIZE_MAX));
    BOOST_TEST_REQUIRE(r2.size() == 2u);
    BOOST_TEST(r2[1].type == "tool.call");
    BOOST_TEST(t.wait(t.s->run("r2"))->step == 2);  // the first batch's state, not a third
}

// Every write of a run is fenced by its lease: once another replica holds the run (its row names
// another owner), this store writes nothing more of it. On SQLite no other owner ever appears,
// but the rule is the same statement.
BOOST_AUTO_TEST_CASE(a_run_another_replica_holds_is_not_written) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    t.raw()->execute("UPDATE runs SET owner = 'elsewhere' WHERE id = 'r1'");
    write_batch b;
    b.runs.push_back({"r1", "c1", run_status::completed, 3, 10, "done", "", "{}", 0, 0});
    b.events.push_back({"r1", 1, "run.succeeded", "{}", 0});
    BOOST_CHECK_THROW(t.commit(std::move(b)), lease_lost);
    BOOST_TEST((t.wait(t.s->run_status("r1")) == run_status::running));
    BOOST_TEST(t.wait(t.s->last_event("r1")) == 0);  // the batch's other writes went with it
}

// Both databases migrate by one list; a PostgreSQL database made before the lists merged is at
// its own version 1 (the first list's only step) and moves on from there with its rows, and one
// newer than this build is refused by name.
BOOST_AUTO_TEST_CASE(a_postgres_database_from_before_the_lists_merged_is_migrated,
                     *boost::unit_test::precondition(postgres_only())) {
    temp_store t;
    t.chat("c1");
    t.run("r1", "c1");
    t.s.reset();
    // As such a database is: without what later steps added.
    t.raw()->execute((undo_steps_after_10 + "ALTER TABLE run_messages DROP COLUMN format; "
                                            "UPDATE contextgate_schema SET version = 1")
                         .c_str());
    t.reopen();
    BOOST_TEST(t.s->schema_version() == latest_schema_version());
    BOOST_TEST(t.wait(t.s->chat("c1")).has_value());
    BOOST_TEST((t.wait(t.s->run_status("r1")) == run_status::running));
    t.s.reset();
    t.raw()->execute("UPDATE contextgate_schema SET version = 99");
    gateway::config::store_config config;
    config.type = gateway::config::store_type::postgres;
    config.dsn = t.path;
    auto newer = pg_store::open(config);
    BOOST_TEST(!newer);
    BOOST_TEST(
        newer.error.find("schema version 99, newer than this contextgate") != std::string::npos,
        newer.error);
}

BOOST_AUTO_TEST_CASE(a_postgres_server_that_is_not_there_is_named,
                     *boost::unit_test::precondition(postgres_only())) {
    gateway::config::store_config config;
    config.type = gateway::config::store_type::postgres;
    config.dsn = "postgresql://127.0.0.1:1/none?connect_timeout=2";
    auto opened = pg_store::open(config);
    BOOST_TEST(!opened);
    BOOST_TEST(opened.error.find("cannot connect to PostgreSQL (context.store.dsn)") == 0u,
               opened.error);
}

// Users: made at their first sign-in, found again by issuer and subject; an admin's change of
// role or team stays until a claim says otherwise.
BOOST_AUTO_TEST_CASE(a_user_is_made_at_first_sign_in_and_keeps_what_an_admin_set) {
    temp_store t;
    user_sign_in ada{"https://idp.test", "sub-1",      "ada@example.com", "Ada",
                     std::nullopt,       std::nullopt, "member"};
    auto first = t.wait(t.s->sign_in_user(ada));
    BOOST_TEST(first.id.starts_with("user_"));
    BOOST_TEST(first.role == "member");
    BOOST_TEST(first.team == "");
    BOOST_TEST(first.created_at > 0);
    BOOST_TEST(t.wait(t.s->update_user(first.id, std::string("team_admin"), std::string("ml"))));
    BOOST_TEST(!t.wait(t.s->update_user("user_none", std::string("viewer"), std::nullopt)));

    ada.email = "ada@new.example.com";
    auto again = t.wait(t.s->sign_in_user(ada));
    BOOST_TEST(again.id == first.id);
    BOOST_TEST(again.email == "ada@new.example.com");
    BOOST_TEST(again.role == "team_admin");  // no claim said a role: the admin's stays
    BOOST_TEST(again.team == "ml");
    ada.role = "admin";
    ada.team = "platform";
    auto mapped = t.wait(t.s->sign_in_user(ada));
    BOOST_TEST(mapped.role == "admin");
    BOOST_TEST(mapped.team == "platform");

    // The same subject at another issuer is another person.
    ada.issuer = "https://other.test";
    auto other = t.wait(t.s->sign_in_user(ada));
    BOOST_TEST(other.id != first.id);
    BOOST_TEST(t.wait(t.s->users()).size() == 2u);
    BOOST_TEST(t.wait(t.s->user(first.id))->email == "ada@new.example.com");
    BOOST_TEST(!t.wait(t.s->user("user_none")));
}

BOOST_AUTO_TEST_CASE(a_user_session_ends_when_idle_past_its_end_or_ended) {
    temp_store t;
    auto user = t.wait(t.s->sign_in_user({"https://idp.test", "sub-1", "ada@example.com", "Ada",
                                          std::nullopt, std::nullopt, "viewer"}));
    auto now = now_ms();
    const std::int64_t hour = 3'600'000;
    t.wait(t.s->start_user_session({"sha256:one", user.id, "csrf-1", now, now, now + 24 * hour}));
    auto found = t.wait(t.s->user_session("sha256:one", now + hour, 2 * hour));
    BOOST_TEST_REQUIRE(found.has_value());
    BOOST_TEST(found->user.id == user.id);
    BOOST_TEST(found->user.role == "viewer");
    BOOST_TEST(found->session.csrf == "csrf-1");
    BOOST_TEST(found->session.seen_at == now + hour);  // used: the idle clock starts again
    BOOST_TEST(t.wait(t.s->user_session("sha256:one", now + 2 * hour + 1, 2 * hour)).has_value());
    // Unused longer than the idle lifetime.
    BOOST_TEST(!t.wait(t.s->user_session("sha256:one", now + 5 * hour, 2 * hour)));
    // Past the absolute end, however recently used.
    t.wait(t.s->start_user_session({"sha256:two", user.id, "csrf-2", now, now, now + hour}));
    BOOST_TEST(t.wait(t.s->user_session("sha256:two", now + hour - 1, hour)).has_value());
    BOOST_TEST(!t.wait(t.s->user_session("sha256:two", now + hour, hour)));
    BOOST_TEST(!t.wait(t.s->user_session("sha256:none", now, hour)));
    // Ended by logout.
    t.wait(t.s->start_user_session({"sha256:three", user.id, "csrf-3", now, now, now + hour}));
    BOOST_TEST(t.wait(t.s->end_user_session("sha256:three")));
    BOOST_TEST(!t.wait(t.s->end_user_session("sha256:three")));
    BOOST_TEST(!t.wait(t.s->user_session("sha256:three", now, hour)));
}

BOOST_AUTO_TEST_CASE(a_pending_login_is_taken_once_and_not_after_it_expired) {
    temp_store t;
    auto now = now_ms();
    t.wait(t.s->save_login({"state-1", "nonce-1", "verifier-1", "/console/", now + 60'000}));
    t.wait(t.s->save_login({"state-2", "nonce-2", "verifier-2", "/console/", now + 60'000}));
    auto taken = t.wait(t.s->take_login("state-1", now));
    BOOST_TEST_REQUIRE(taken.has_value());
    BOOST_TEST(taken->nonce == "nonce-1");
    BOOST_TEST(taken->verifier == "verifier-1");
    BOOST_TEST(taken->return_to == "/console/");
    BOOST_TEST(!t.wait(t.s->take_login("state-1", now)));           // once
    BOOST_TEST(!t.wait(t.s->take_login("state-2", now + 60'000)));  // expired
    BOOST_TEST(!t.wait(t.s->take_login("state-2", now)));           // and gone
}

BOOST_AUTO_TEST_CASE(teams_are_kept_by_name_and_the_audit_log_read_newest_first) {
    temp_store t;
    gateway::config::team_config team;
    team.name = "platform";
    team.budget_usd_nano = 500'000'000'000;
    team.models = {"gpt-*", "claude-*"};
    t.wait(t.s->save_team({team, 5}));
    team.budget_period = gateway::config::budget_period::day;
    t.wait(t.s->save_team({team, 9}));  // an update keeps when it was made
    auto teams = t.wait(t.s->teams());
    BOOST_TEST_REQUIRE(teams.size() == 1u);
    BOOST_TEST(teams[0].created_at == 5);
    BOOST_TEST((teams[0].team.budget_period == gateway::config::budget_period::day));
    BOOST_TEST((teams[0].team.models == std::vector<std::string>{"gpt-*", "claude-*"}));
    BOOST_TEST(t.wait(t.s->delete_team("platform")));
    BOOST_TEST(!t.wait(t.s->delete_team("platform")));

    for (int i = 1; i <= 3; ++i)
        t.wait(t.s->append_audit({0, i * 1000, i == 2 ? "api-key" : "user_1", "admin",
                                  i == 3 ? "team.create" : "key.create", "t" + std::to_string(i),
                                  i == 1 ? "red" : "", R"({"rpm":5})", "127.0.0.1"}));
    auto all = t.wait(t.s->audit({}));
    BOOST_TEST_REQUIRE(all.size() == 3u);
    BOOST_TEST(all[0].target == "t3");
    BOOST_TEST(all[2].detail == R"({"rpm":5})");
    BOOST_TEST(t.wait(t.s->audit({"api-key", "", "", "", 0, 0, 100})).size() == 1u);
    BOOST_TEST(t.wait(t.s->audit({"", "key.create", "", "", 0, 0, 100})).size() == 2u);
    BOOST_TEST(t.wait(t.s->audit({"", "", "", "red", 0, 0, 100})).size() == 1u);
    BOOST_TEST(t.wait(t.s->audit({"", "", "", "", 1500, 2500, 100})).size() == 1u);
    BOOST_TEST(t.wait(t.s->audit({"", "", "", "", 0, 0, 1})).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace store_store_contract_test
