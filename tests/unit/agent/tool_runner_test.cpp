#include "gateway/agent/tool_runner.hpp"

#include "engine_fixture.hpp"

#include "gateway/tools/digest.hpp"

using namespace engine_test;
using verdict = agent::tool_runner::verdict;

BOOST_AUTO_TEST_SUITE(tool_runner_suite)

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
