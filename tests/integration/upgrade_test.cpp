// A database written by the first release (tests/data/upgrade/v1.db, made by
// make-v1-database.sh with that release: schema 2, unversioned run state) is migrated at start,
// and its runs that were awaiting approval resume: they are approved and complete, and their
// event ids go on from where the first release left them.
#include "gateway/store/schema.hpp"
#include "tests/integration/context_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <sqlite3.h>

namespace integration_upgrade_test {

using namespace gateway::testing;

namespace {

// Runs `sql` on the database file (before the gateway opens it); returns the first column of
// each row.
std::vector<std::string> sql(const std::string& path, const std::string& statement) {
    sqlite3* db = nullptr;
    BOOST_TEST_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    std::vector<std::string> rows;
    auto collect = [](void* out, int, char** values, char**) {
        static_cast<std::vector<std::string>*>(out)->emplace_back(values[0] ? values[0] : "");
        return 0;
    };
    char* error = nullptr;
    auto rc = sqlite3_exec(db, statement.c_str(), collect, &rows, &error);
    std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    BOOST_TEST_REQUIRE(rc == SQLITE_OK, message);
    return rows;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upgrade)

BOOST_AUTO_TEST_CASE(a_first_release_database_resumes_its_runs_after_the_upgrade) {
    std::string db_path;
    std::vector<std::string> runs;
    std::string old_events;
    context_fixture f([&](auto& c) {
        // The fixture's approvals were requested when it was made: they must not expire on the
        // way (a pending approval older than the timeout fails the run when it is resumed).
        c.context.approval_timeout = std::chrono::hours(24 * 365 * 100);
        db_path = c.context.data_dir + "/contextgate.db";
        fs::copy_file(CONTEXTGATE_TEST_DATA "/upgrade/v1.db", db_path);
        BOOST_TEST(sql(db_path, "PRAGMA user_version") == std::vector<std::string>{"2"});
        auto workspace = c.context.workspaces.front();
        sql(db_path, "UPDATE chats SET workspace = '" + workspace + "'");
        runs = sql(db_path, "SELECT id FROM runs ORDER BY created_at");
        old_events = sql(db_path,
                         "SELECT COUNT(*) FROM events WHERE run_id = (SELECT id FROM runs "
                         "ORDER BY created_at LIMIT 1)")[0];
    });
    BOOST_TEST_REQUIRE(runs.size() == 2u);
    const auto& typo = runs[0];
    const auto& header = runs[1];

    // The chat run: stopped awaiting approval of replace_in_file by the first release.
    auto waiting = f.run_state(typo);
    BOOST_TEST(waiting.at("status").as_string() == "awaiting_approval");
    BOOST_TEST_REQUIRE(waiting.at("pending_approval").is_object());
    auto call_id = std::string(waiting.at("pending_approval").at("id").as_string());
    BOOST_TEST(waiting.at("pending_approval").at("tool").as_string() == "replace_in_file");
    f.fake.script({{"Fixed the typo in README.md."}});
    BOOST_TEST(f.approve(typo, call_id).status == 200u);
    auto after = f.events(typo, {}, std::stoll(old_events));
    BOOST_TEST_REQUIRE(!after.empty());
    BOOST_TEST(after.front().id == std::stoll(old_events) + 1);  // ids go on
    BOOST_TEST(after.front().type == "approval.resolved");
    BOOST_TEST(after.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "README.md") == "# Demo\n\nThis is the readme.\n");
    // The model was sent the conversation the first release stored.
    auto sent = f.model_messages(0);
    BOOST_TEST(mentions(sent, "fix the typo teh in README.md"));
    BOOST_TEST(mentions(sent, "Result of `read_file`"));

    // The workflow run: stopped at its edit_lines step, awaiting approval.
    auto step = f.run_state(header);
    BOOST_TEST(step.at("status").as_string() == "awaiting_approval");
    auto step_call = std::string(step.at("pending_approval").at("id").as_string());
    BOOST_TEST(f.approve(header, step_call).status == 200u);
    auto done = f.events(header);
    BOOST_TEST(done.back().type == "run.completed");
    BOOST_TEST(read_text(f.workspace / "src/app.py").starts_with("# Prints a greeting.\n"));
    BOOST_TEST(sql(db_path, "PRAGMA user_version") ==
               std::vector<std::string>{std::to_string(gateway::store::latest_schema_version())});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace integration_upgrade_test
