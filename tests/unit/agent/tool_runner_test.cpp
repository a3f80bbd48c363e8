#include "gateway/agent/tool_runner.hpp"

#include "engine_fixture.hpp"

#include "gateway/tools/digest.hpp"

#include <functional>
#include <utility>

namespace agent_tool_runner_test {

using namespace engine_test;
using verdict = agent::tool_runner::verdict;

namespace {

namespace store = gateway::store;
using store::net::awaitable;

// The real store, with a hook that runs right after the open edit sessions were read: what a
// human's accept arriving while the agent's edit is being made looks like, made deterministic.
class interleaving_store final : public store::state_store {
public:
    explicit interleaving_store(store::state_store& real) : real_(real) {}
    std::function<awaitable<void>()> after_open_sessions_read;

    awaitable<std::vector<store::edit_session_record>> edit_sessions(std::string chat,
                                                                     bool open_only) override {
        auto found = co_await real_.edit_sessions(chat, open_only);
        if (open_only && after_open_sessions_read) {
            auto hook = std::exchange(after_open_sessions_read, nullptr);
            co_await hook();
        }
        co_return found;
    }

    // Everything else goes to the real store as it is.
    awaitable<void> insert_chat(store::chat_record c) override { return real_.insert_chat(c); }
    awaitable<std::optional<store::chat_record>> chat(std::string id) override {
        return real_.chat(id);
    }
    awaitable<std::vector<store::chat_record>> chats() override { return real_.chats(); }
    awaitable<bool> delete_chat(std::string id) override { return real_.delete_chat(id); }
    awaitable<store::message_page> messages(std::string c, std::int64_t b, std::size_t l) override {
        return real_.messages(c, b, l);
    }
    awaitable<store::recent_history> recent_messages(std::string c, std::size_t m) override {
        return real_.recent_messages(c, m);
    }
    awaitable<std::optional<store::run_record>> run(std::string id) override {
        return real_.run(id);
    }
    awaitable<std::optional<gateway::run_status>> run_status(std::string id) override {
        return real_.run_status(id);
    }
    awaitable<std::vector<store::run_record>> runs_of_chat(std::string c) override {
        return real_.runs_of_chat(c);
    }
    awaitable<std::vector<store::run_record>> unfinished_runs() override {
        return real_.unfinished_runs();
    }
    awaitable<std::vector<store::run_message_record>> run_messages(std::string r) override {
        return real_.run_messages(r);
    }
    awaitable<std::optional<std::string>> run_input(std::string r) override {
        return real_.run_input(r);
    }
    awaitable<std::vector<store::event_record>> events_after(std::string r, std::int64_t a,
                                                             std::size_t e,
                                                             std::size_t b) override {
        return real_.events_after(r, a, e, b);
    }
    awaitable<std::int64_t> last_event(std::string r) override { return real_.last_event(r); }
    awaitable<std::optional<store::tool_call_record>> tool_call(std::string id) override {
        return real_.tool_call(id);
    }
    awaitable<std::vector<store::tool_call_record>> tool_calls(std::string r) override {
        return real_.tool_calls(r);
    }
    awaitable<std::optional<store::approval_record>> approval(std::string c) override {
        return real_.approval(c);
    }
    awaitable<std::optional<store::document_record>> document(std::string c) override {
        return real_.document(c);
    }
    awaitable<store::document_write> put_document(std::string c, std::string n, std::string t,
                                                  std::optional<std::int64_t> b) override {
        return real_.put_document(c, n, t, b);
    }
    awaitable<bool> update_chat(std::string c, store::chat_changes changes) override {
        return real_.update_chat(c, changes);
    }
    awaitable<std::optional<store::edit_session_record>> edit_session(std::string id) override {
        return real_.edit_session(id);
    }
    awaitable<std::vector<store::session_edit_record>> session_edits(std::string s) override {
        return real_.session_edits(s);
    }
    awaitable<std::optional<store::session_edit_record>> session_edit_of_call(
        std::string c) override {
        return real_.session_edit_of_call(c);
    }
    awaitable<bool> save_edit_session(store::edit_session_record s, std::int64_t r,
                                      std::optional<store::session_edit_record> e) override {
        return real_.save_edit_session(s, r, e);
    }
    awaitable<std::optional<store::backup_record>> last_backup(std::string r) override {
        return real_.last_backup(r);
    }
    awaitable<void> commit(store::write_batch b) override { return real_.commit(b); }
    awaitable<void> save_key(gateway::config::virtual_key k) override { return real_.save_key(k); }
    awaitable<std::vector<store::key_record>> keys() override { return real_.keys(); }
    awaitable<bool> revoke_key(std::string id) override { return real_.revoke_key(id); }
    awaitable<void> add_usage(std::vector<store::usage_row> r) override {
        return real_.add_usage(r);
    }
    awaitable<std::vector<store::usage_row>> usage(store::usage_query q) override {
        return real_.usage(q);
    }
    awaitable<store::user_record> sign_in_user(store::user_sign_in w) override {
        return real_.sign_in_user(w);
    }
    awaitable<std::optional<store::user_record>> user(std::string id) override {
        return real_.user(id);
    }
    awaitable<std::vector<store::user_record>> users() override { return real_.users(); }
    awaitable<bool> update_user(std::string id, std::optional<std::string> role,
                                std::optional<std::string> team) override {
        return real_.update_user(id, role, team);
    }
    awaitable<void> start_user_session(store::user_session_record s) override {
        return real_.start_user_session(s);
    }
    awaitable<std::optional<store::signed_in_user>> user_session(std::string d, std::int64_t now,
                                                                 std::int64_t idle) override {
        return real_.user_session(d, now, idle);
    }
    awaitable<bool> end_user_session(std::string d) override { return real_.end_user_session(d); }
    awaitable<void> save_login(store::pending_login l) override { return real_.save_login(l); }
    awaitable<std::optional<store::pending_login>> take_login(std::string s,
                                                              std::int64_t now) override {
        return real_.take_login(s, now);
    }
    awaitable<void> save_team(store::team_record t) override { return real_.save_team(t); }
    awaitable<std::vector<store::team_record>> teams() override { return real_.teams(); }
    awaitable<bool> delete_team(std::string name) override { return real_.delete_team(name); }
    awaitable<void> append_audit(store::audit_record r) override { return real_.append_audit(r); }
    awaitable<std::vector<store::audit_record>> audit(store::audit_query q) override {
        return real_.audit(q);
    }

private:
    store::state_store& real_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tool_runner_suite)

BOOST_AUTO_TEST_CASE(an_edit_to_a_session_resolved_meanwhile_is_session_not_found) {
    engine_fixture f;
    interleaving_store racing(*f.store);
    agent::tool_runner runner(f.tools, *f.roots, racing, *f.journal);
    auto run = f.new_run();
    run->chat.edits = gateway::edit_mode::review;
    BOOST_TEST_REQUIRE(!runner.open_workspace(*run));
    json::object append{{"path", "log.txt"}, {"content", "one\n"}};
    auto first = f.wait(runner.run(*run, "append_file", append, gateway::tools::mode::execute));
    BOOST_TEST_REQUIRE(first.ok, first.text);
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\n");  // recorded, not written
    auto id = std::string(first.data.at("session_id").as_string());

    // The human rejects the session after the agent read it and before its edit is recorded.
    racing.after_open_sessions_read = [&]() -> awaitable<void> {
        auto s = co_await f.store->edit_session(id);
        auto revision = s->revision;
        s->status = gateway::edit_session_status::rejected;
        co_await f.store->save_edit_session(*s, revision, std::nullopt);
    };
    auto second = f.wait(runner.run(*run, "append_file", append, gateway::tools::mode::execute));
    BOOST_TEST(second.error_code == "SESSION_NOT_FOUND", second.text);
    auto s = f.wait(f.store->edit_session(id));
    BOOST_TEST((s->status == gateway::edit_session_status::rejected));
    BOOST_TEST(s->ai_version == "start\none\n");  // the late edit left no trace
    BOOST_TEST(f.wait(f.store->session_edits(id)).size() == 1u);
    // The next edit opens a new session on the target as it is.
    auto third = f.wait(runner.run(*run, "append_file", append, gateway::tools::mode::execute));
    BOOST_TEST_REQUIRE(third.ok, third.text);
    BOOST_TEST(third.data.at("session_id").as_string() != id);
    runner.stop();
}

BOOST_AUTO_TEST_CASE(the_workspace_is_opened_for_each_run_and_a_swapped_folder_refused) {
    engine_fixture f;
    auto run = f.new_run();
    // A chat whose folder lies beneath the configured root (which is itself pinned at start).
    write(f.workspace / "proj/notes.md", "notes");
    run->chat.workspace = (f.workspace / "proj").string();
    BOOST_TEST(!f.runner->open_workspace(*run));
    auto first = run->files;
    BOOST_TEST_REQUIRE(first != nullptr);
    BOOST_TEST(!f.runner->open_workspace(*run));
    BOOST_TEST(run->files == first);  // the same folder: the same warm workspace
    auto elsewhere = f.base / "elsewhere";
    fs::create_directories(elsewhere);
    fs::rename(f.workspace / "proj", f.workspace / "proj.old");
    fs::create_directory_symlink(elsewhere, f.workspace / "proj");
    auto refused = f.runner->open_workspace(*run);
    BOOST_TEST_REQUIRE(refused.has_value());
    BOOST_TEST(refused->find("symbolic link") != std::string::npos, *refused);
    BOOST_TEST(run->files == nullptr);
}

BOOST_AUTO_TEST_CASE(a_document_edit_is_stored_only_on_the_version_it_read) {
    engine_fixture f;
    auto run = f.new_run();
    f.wait(f.store->put_document("chat_1", "a.md", "The end is neigh.\n", std::nullopt));
    json::object edit{{"find", "neigh"}, {"replace", "nigh"}};
    std::optional<std::int64_t> read;
    auto preview = f.wait(
        f.runner->run(*run, "edit_document", edit, gateway::tools::mode::preview, {}, &read));
    BOOST_TEST(preview.ok);
    BOOST_TEST(read.value_or(0) == 1);
    // The editor moves on (version 2): an edit approved on version 1 writes nothing.
    f.wait(f.store->put_document("chat_1", "a.md", "The end is neigh, he said.\n", 1));
    auto stale =
        f.wait(f.runner->run(*run, "edit_document", edit, gateway::tools::mode::execute, read));
    BOOST_TEST(stale.error_code == "DOCUMENT_CHANGED");
    BOOST_TEST(f.wait(f.store->document("chat_1"))->content == "The end is neigh, he said.\n");
    // On the current version it is stored and announced.
    auto done =
        f.wait(f.runner->run(*run, "edit_document", edit, gateway::tools::mode::execute, 2));
    BOOST_TEST(done.ok, done.text);
    BOOST_TEST(f.wait(f.store->document("chat_1"))->content == "The end is nigh, he said.\n");
    BOOST_TEST(f.types(run->record.id).back() == "document.updated");
}

BOOST_AUTO_TEST_CASE(a_write_plan_holds_digests_and_the_previous_content) {
    engine_fixture f;
    auto run = f.new_run();
    json::object append{{"path", "log.txt"}, {"content", "entry\n"}};
    auto preview =
        f.wait(f.runner->run(*run, "append_file", append, gateway::tools::mode::preview));
    auto plan = f.wait(f.runner->plan_write(*run, "append_file", append, preview));
    BOOST_TEST_REQUIRE(plan.has_value());
    BOOST_TEST(plan->intent.path == "log.txt");
    BOOST_TEST(plan->intent.existed);
    BOOST_TEST(plan->intent.before_sha256 == gateway::tools::sha256_hex("start\n"));
    BOOST_TEST(plan->intent.after_sha256 == gateway::tools::sha256_hex("start\nentry\n"));
    BOOST_TEST(plan->previous == "start\n");
    BOOST_TEST((f.wait(f.runner->judge(*run, plan->intent)) == verdict::not_happened));
    f.wait(f.runner->run(*run, "append_file", append, gateway::tools::mode::execute));
    BOOST_TEST((f.wait(f.runner->judge(*run, plan->intent)) == verdict::happened));
    write(f.workspace / "log.txt", "other\n");
    BOOST_TEST((f.wait(f.runner->judge(*run, plan->intent)) == verdict::unknown));
    // Reads write nothing: no plan.
    json::object read{{"path", "log.txt"}};
    auto result = f.wait(f.runner->run(*run, "read_file", read, gateway::tools::mode::execute));
    BOOST_TEST(!f.wait(f.runner->plan_write(*run, "read_file", read, result)));
}

BOOST_AUTO_TEST_CASE(a_write_waits_for_the_runs_commits_and_is_not_made_when_one_failed) {
    engine_fixture f;
    auto run = f.new_run();
    run->last_event = 0;  // the announcement below takes run.started's number: refused
    auto announced = f.journal->begin(*run);
    announced.event("tool.call", {});
    f.wait(f.journal->send(*run, std::move(announced), true));
    json::object append{{"path", "log.txt"}, {"content", "entry\n"}};
    BOOST_CHECK_THROW(
        f.wait(f.runner->run(*run, "append_file", append, gateway::tools::mode::execute)),
        store::store_error);
    BOOST_TEST(text_of(f.workspace / "log.txt") == "start\n");
}

BOOST_AUTO_TEST_CASE(a_created_file_is_judged_by_its_absence_and_restored_by_deleting_it) {
    engine_fixture f;
    auto run = f.new_run();
    json::object create{{"path", "new.txt"}, {"content", "fresh\n"}};
    auto preview =
        f.wait(f.runner->run(*run, "create_file", create, gateway::tools::mode::preview));
    auto plan = f.wait(f.runner->plan_write(*run, "create_file", create, preview));
    BOOST_TEST_REQUIRE(plan.has_value());
    BOOST_TEST(!plan->intent.existed);
    BOOST_TEST((f.wait(f.runner->judge(*run, plan->intent)) == verdict::not_happened));
    f.wait(f.runner->run(*run, "create_file", create, gateway::tools::mode::execute));
    BOOST_TEST((f.wait(f.runner->judge(*run, plan->intent)) == verdict::happened));
    store::backup_record backup{
        "call_1", run->record.id, "new.txt", false, "", plan->intent.after_sha256, 0, 0};
    auto restored = f.wait(f.runner->restore(*run, backup));
    BOOST_TEST(restored.ok, restored.text);
    BOOST_TEST(!fs::exists(f.workspace / "new.txt"));
    // Restoring again finds the file not as the write left it: refused, nothing touched.
    write(f.workspace / "new.txt", "someone else's\n");
    auto refused = f.wait(f.runner->restore(*run, backup));
    BOOST_TEST(refused.error_code == "NOTHING_TO_UNDO");
    BOOST_TEST(text_of(f.workspace / "new.txt") == "someone else's\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_tool_runner_test
