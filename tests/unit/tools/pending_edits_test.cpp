// Review mode at the tools' level: with pending edits the tools read the AI version, and in
// record mode writes land in the pending edits, never on disk.

#include "fixture.hpp"

namespace tools_pending_edits_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(pending_edits_suite)

BOOST_AUTO_TEST_CASE(recorded_writes_leave_the_disk_alone_and_are_read_back) {
    temp_workspace w;
    w.write("a.txt", "alpha\nbeta\n");
    tools::pending_edits pending;
    pending.record = true;
    w.context.pending = &pending;

    auto edit =
        w.run("doc_edit",
              R"j({"command":"str_replace","path":"a.txt","old_str":"beta","new_str":"gamma"})j");
    BOOST_TEST_REQUIRE(edit.ok, edit.text);
    BOOST_TEST(w.read("a.txt") == "alpha\nbeta\n");
    BOOST_TEST(pending.changed == std::vector<std::string>{"a.txt"});
    BOOST_TEST(**pending.find("a.txt") == "alpha\ngamma\n");

    // The next edit is matched against the pending version, not the disk.
    auto again =
        w.run("doc_edit",
              R"j({"command":"str_replace","path":"a.txt","old_str":"gamma","new_str":"delta"})j");
    BOOST_TEST_REQUIRE(again.ok, again.text);
    BOOST_TEST(**pending.find("a.txt") == "alpha\ndelta\n");
    auto missing = w.run(
        "doc_edit", R"j({"command":"str_replace","path":"a.txt","old_str":"beta","new_str":"x"})j");
    BOOST_TEST(missing.error_code == "NO_MATCH");

    auto read = w.run("read_file", R"j({"path":"a.txt"})j");
    BOOST_TEST(contains(read.text, "delta"));
    BOOST_TEST(!contains(read.text, "beta"));
    auto view = w.run("doc_edit", R"j({"command":"view","path":"/a.txt"})j");
    BOOST_TEST(contains(view.text, "delta"));
    auto search = w.run("search_files", R"j({"pattern":"delta"})j");
    BOOST_TEST(search.data.at("total").to_number<long long>() == 1);
    BOOST_TEST(
        w.run("search_files", R"j({"pattern":"beta"})j").data.at("total").to_number<long long>() ==
        0);
}

BOOST_AUTO_TEST_CASE(created_and_deleted_files_are_listed_as_pending) {
    temp_workspace w;
    w.write("old.txt", "bye\n");
    w.write("docs/keep.md", "keep\n");
    tools::pending_edits pending;
    pending.record = true;
    w.context.pending = &pending;

    BOOST_TEST_REQUIRE(w.run("create_file", R"j({"path":"docs/new.md","content":"fresh\n"})j").ok);
    BOOST_TEST(!w.exists("docs/new.md"));
    BOOST_TEST(w.run("create_file", R"j({"path":"docs/new.md","content":"again\n"})j").error_code ==
               "FILE_EXISTS");
    BOOST_TEST_REQUIRE(w.run("delete_file", R"j({"path":"old.txt"})j").ok);
    BOOST_TEST(w.exists("old.txt"));
    BOOST_TEST(w.run("read_file", R"j({"path":"old.txt"})j").error_code == "NOT_FOUND");

    auto root = w.run("list_files", R"j({"path":"."})j");
    BOOST_TEST(contains(root.text, "old.txt  (pending: deleted, awaiting review)"), root.text);
    auto docs = w.run("list_files", R"j({"path":"docs"})j");
    BOOST_TEST(contains(docs.text, "docs/new.md  (pending: created, awaiting review)"), docs.text);
    BOOST_TEST(docs.data.at("total").to_number<long long>() == 2);
    auto search = w.run("search_files", R"j({"pattern":"fresh","path":"docs"})j");
    BOOST_TEST(search.data.at("total").to_number<long long>() == 1);
    BOOST_TEST(
        w.run("search_files", R"j({"pattern":"bye"})j").data.at("total").to_number<long long>() ==
        0);
}

BOOST_AUTO_TEST_CASE(without_record_pending_edits_are_only_read) {
    temp_workspace w;
    w.write("a.txt", "disk\n");
    tools::pending_edits pending;
    pending.files["a.txt"] = std::string("suggested\n");
    w.context.pending = &pending;
    BOOST_TEST(contains(w.run("read_file", R"j({"path":"a.txt"})j").text, "suggested"));
    // Previews compute from the pending version without recording anything.
    auto preview =
        w.run("append_file", R"j({"path":"a.txt","content":"more\n"})j", tools::mode::preview);
    BOOST_TEST_REQUIRE(preview.ok, preview.text);
    BOOST_TEST(pending.changed.empty());
    BOOST_TEST(w.read("a.txt") == "disk\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_pending_edits_test
