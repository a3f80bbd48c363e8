#include "gateway/tools/registry.hpp"

#include "fixture.hpp"

#include <boost/json/serialize.hpp>

#include <sys/stat.h>

#include <set>

namespace tools_registry_test {

using namespace tools_test;
using gateway::tools::registry;
using gateway::tools::role;

BOOST_AUTO_TEST_SUITE(registry_suite)

BOOST_AUTO_TEST_CASE(the_seventeen_tools_in_catalogue_order) {
    std::vector<std::string> names;
    for (const auto* t : registry::standard().for_role(role::editor))
        names.emplace_back(t->spec().name);
    std::vector<std::string> expected = {
        "list_files",    "find_files",       "search_files", "find_definition", "find_importers",
        "read_file",     "create_file",      "edit_file",    "append_file",     "replace_in_file",
        "edit_lines",    "doc_edit",         "delete_file",  "read_document",   "search_document",
        "edit_document", "get_document_info"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reader_role_gets_read_tools_only) {
    std::set<std::string> names;
    for (const auto* t : registry::standard().for_role(role::reader)) {
        names.emplace(t->spec().name);
        BOOST_TEST(!t->spec().needs_approval);
    }
    BOOST_TEST(names.size() == 9u);
    BOOST_TEST(!names.count("edit_file"));
    BOOST_TEST(!names.count("delete_file"));
    BOOST_TEST(!names.count("edit_document"));
    BOOST_TEST(names.count("read_document"));
}

BOOST_AUTO_TEST_CASE(writes_need_approval_by_default_reads_do_not) {
    const auto& r = registry::standard();
    for (const auto* t : r.for_role(role::editor)) {
        bool writes = (t->spec().permissions & ~gateway::tools::read_files) != 0;
        BOOST_TEST(t->spec().needs_approval == writes, t->spec().name);
    }
    const auto* doc_edit = r.find("doc_edit");
    BOOST_TEST(!doc_edit->needs_approval_for(
        boost::json::parse(R"j({"command":"view","path":"a"})j").as_object()));
    BOOST_TEST(doc_edit->needs_approval_for(
        boost::json::parse(R"j({"command":"create","path":"a"})j").as_object()));
}

BOOST_AUTO_TEST_CASE(catalogue_is_grouped_and_deterministic) {
    const auto& r = registry::standard();
    auto text = r.catalogue(role::editor);
    BOOST_TEST(text == r.catalogue(role::editor));
    auto search = text.find("### Search & Discovery");
    auto reading = text.find("### File Reading");
    auto writing = text.find("### File Writing");
    auto management = text.find("### File Management");
    auto document = text.find("### Document");
    BOOST_TEST(search < reading);
    BOOST_TEST(reading < writing);
    BOOST_TEST(writing < management);
    BOOST_TEST(management < document);
    BOOST_TEST(contains(text, "- `replace_in_file`:"));
    BOOST_TEST(contains(text, R"j("required":["path","find","replace"])j"));
    auto reader = r.catalogue(role::reader);
    BOOST_TEST(!contains(reader, "### File Writing"));
    BOOST_TEST(!contains(reader, "`edit_file`"));
}

BOOST_AUTO_TEST_CASE(validation_names_the_failing_path) {
    const auto& r = registry::standard();
    BOOST_TEST(r.validate("read_file", boost::json::parse(R"j({"path":"a"})j")).empty());
    auto wrong_type =
        r.validate("read_file", boost::json::parse(R"j({"path":"a","start_line":"x"})j"));
    BOOST_TEST(wrong_type.starts_with("/start_line: "), wrong_type);
    auto missing = r.validate("read_file", boost::json::parse(R"j({})j"));
    BOOST_TEST(contains(missing, "path"), missing);
    auto extra = r.validate("read_file", boost::json::parse(R"j({"path":"a","bogus":1})j"));
    BOOST_TEST(contains(extra, "bogus"), extra);
    auto bad_enum = r.validate(
        "edit_lines", boost::json::parse(R"j({"path":"a","operation":"move","start_line":1})j"));
    BOOST_TEST(bad_enum.starts_with("/operation: "), bad_enum);
    auto nested = r.validate(
        "doc_edit", boost::json::parse(R"j({"command":"view","path":"a","view_range":[1,"x"]})j"));
    BOOST_TEST(nested.starts_with("/view_range/1: "), nested);
}

BOOST_AUTO_TEST_CASE(execute_reports_unknown_tools_permissions_and_bad_parameters) {
    temp_workspace w;
    auto unknown = w.run("rm_rf", "{}");
    BOOST_TEST(unknown.error_code == "UNKNOWN_TOOL");
    BOOST_TEST(contains(unknown.text, "read_file"));
    auto invalid = w.run("read_file", R"j({"path":42})j");
    BOOST_TEST(invalid.error_code == "INVALID_PARAMETERS");
    BOOST_TEST(contains(invalid.text, "/path"));
    auto not_object = w.run("read_file", "[1]");
    BOOST_TEST(not_object.error_code == "INVALID_PARAMETERS");
    auto denied = registry::standard().execute(
        "create_file", boost::json::parse(R"j({"path":"x","content":"y"})j"), w.context,
        gateway::tools::mode::execute, role::reader);
    BOOST_TEST(denied.error_code == "PERMISSION_DENIED");
    BOOST_TEST(!w.exists("x"));
}

BOOST_AUTO_TEST_CASE(tools_without_a_workspace_or_document_say_so) {
    gateway::tools::tool_context empty;
    auto files = registry::standard().execute("read_file", boost::json::parse(R"j({"path":"a"})j"),
                                              empty, gateway::tools::mode::execute);
    BOOST_TEST(files.error_code == "NO_WORKSPACE");
    auto doc = registry::standard().execute("read_document", boost::json::parse("{}"), empty,
                                            gateway::tools::mode::execute);
    BOOST_TEST(doc.error_code == "NO_DOCUMENT");
}

// Every tool that takes a path, against every attack, on both resolvers: refused with the
// sandbox's codes, and nothing outside the workspace read, created or changed.
BOOST_AUTO_TEST_CASE(sandbox_attacks_through_every_path_tool) {
    for (auto mode : {gateway::tools::sandbox::resolution::openat2,
                      gateway::tools::sandbox::resolution::walk}) {
        temp_workspace w(mode);
        w.write("inside.txt", "inside\n");
        fs::create_symlink(w.base / "outside.txt", w.root / "link-out");
        fs::create_symlink("/etc/passwd", w.root / "passwd");
        fs::create_symlink(w.base, w.root / "dir-out");
        fs::create_symlink("link-out", w.root / "chain");
        fs::create_symlink("/proc/self/root/etc/passwd", w.root / "proc");
        ::mkfifo((w.root / "fifo").c_str(), 0600);
        std::vector<std::string> attacks = {"/etc/passwd",
                                            "../outside.txt",
                                            "a/../../outside.txt",
                                            "link-out",
                                            "passwd",
                                            "dir-out/outside.txt",
                                            "chain",
                                            "proc",
                                            "/proc/self/environ",
                                            std::string("inside.txt\0../x", 15),
                                            "fifo",
                                            "dir-out/new.txt",
                                            "dir-out/sub/new.txt"};
        std::vector<std::pair<std::string, std::string>> calls = {
            {"read_file", R"j({"path":%})j"},
            {"list_files", R"j({"path":%})j"},
            {"search_files", R"j({"pattern":"x","path":%})j"},
            {"create_file", R"j({"path":%,"content":"pwned"})j"},
            {"edit_file", R"j({"path":%,"content":"pwned"})j"},
            {"append_file", R"j({"path":%,"content":"pwned"})j"},
            {"replace_in_file", R"j({"path":%,"find":"o","replace":"0"})j"},
            {"edit_lines", R"j({"path":%,"operation":"insert","start_line":1,"content":"pwned"})j"},
            {"doc_edit", R"j({"command":"create","path":%,"file_text":"pwned"})j"},
            {"doc_edit", R"j({"command":"str_replace","path":%,"old_str":"o","new_str":"0"})j"},
            {"delete_file", R"j({"path":%})j"},
        };
        for (const auto& attack : attacks) {
            for (const auto& [name, shape] : calls) {
                auto parameters = shape;
                parameters.replace(parameters.find('%'), 1,
                                   boost::json::serialize(boost::json::value(attack)));
                auto result = w.run(name, parameters);
                // doc_edit reads a leading / as the workspace root (a project path): it may
                // create /etc/passwd *inside* the workspace, which is what it means there.
                if (name == "doc_edit" && attack.starts_with('/')) {
                    if (result.ok)
                        BOOST_TEST(fs::exists(w.root / attack.substr(1)), name << " " << attack);
                    else
                        BOOST_TEST(
                            (result.error_code == "NOT_FOUND" || result.error_code == "NO_MATCH" ||
                             result.error_code == "PATH_OUTSIDE_WORKSPACE" ||
                             result.error_code == "NOT_A_DIRECTORY"),
                            name << " " << attack << ": " << result.error_code);
                    BOOST_TEST(!contains(result.text, "root:x:0"));
                    continue;
                }
                BOOST_TEST(!result.ok, name << " " << attack);
                BOOST_TEST((result.error_code == "PATH_OUTSIDE_WORKSPACE" ||
                            result.error_code == "NOT_A_REGULAR_FILE" ||
                            result.error_code == "NOT_A_DIRECTORY"),
                           name << " " << attack << ": " << result.error_code);
                BOOST_TEST(!contains(result.text, "root:x:0"));
                BOOST_TEST(!contains(result.text, "outside\n"));
            }
        }
        std::ifstream outside(w.base / "outside.txt");
        std::string content((std::istreambuf_iterator<char>(outside)), {});
        BOOST_TEST(content == "outside");
        BOOST_TEST(!fs::exists(w.base / "new.txt"));
        BOOST_TEST(!fs::exists(w.base / "sub"));
        BOOST_TEST(fs::is_symlink(w.root / "link-out"));  // links are never replaced
        BOOST_TEST(w.read("inside.txt") == "inside\n");
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_registry_test
