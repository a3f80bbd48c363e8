#include "gateway/tools/doc_edit.hpp"

#include "fixture.hpp"

namespace tools_doc_edit_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(doc_edit_suite)

BOOST_AUTO_TEST_CASE(view_and_ranges) {
    temp_workspace w;
    w.write("a.txt", "1\n2\n3\n4\n");
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"view","path":"a.txt","view_range":[2,-1]})j").text ==
        "File `a.txt` (4 lines)\n     2\t2\n     3\t3\n     4\t4\n");
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"view","path":"a.txt","view_range":[3,2]})j").error_code ==
        "INVALID_RANGE");
}

BOOST_AUTO_TEST_CASE(str_replace_codes) {
    temp_workspace w;
    w.write("a.py", "def f():\n    return 1\n\ndef g():\n    return 1\n");
    auto ambiguous = w.run(
        "doc_edit",
        R"j({"command":"str_replace","path":"a.py","old_str":"return 1","new_str":"return 2"})j");
    BOOST_TEST(ambiguous.error_code == "AMBIGUOUS_MATCH");
    BOOST_TEST(contains(ambiguous.text, "2 times (at lines 2, 5)"));
    auto none =
        w.run("doc_edit",
              R"j({"command":"str_replace","path":"a.py","old_str":"def h():","new_str":"x"})j");
    BOOST_TEST(none.error_code == "NO_MATCH");
    BOOST_TEST(contains(none.text, "not modified"));
    BOOST_TEST(contains(none.text, "\tdef f():"));
    BOOST_TEST(w.run("doc_edit",
                     R"j({"command":"str_replace","path":"a.py","old_str":"x","new_str":"x"})j")
                   .error_code == "NO_CHANGE");
    auto ok = w.run(
        "doc_edit",
        R"j({"command":"str_replace","path":"a.py","old_str":"def g():\n    return 1","new_str":"def g():\n    return 2"})j");
    BOOST_TEST_REQUIRE(ok.ok, ok.text);
    BOOST_TEST(w.read("a.py") == "def f():\n    return 1\n\ndef g():\n    return 2\n");
    auto tolerant = w.run(
        "doc_edit",
        R"j({"command":"str_replace","path":"a.py","old_str":"  def f():  \n      return 1","new_str":"  def f():\n      return 3"})j");
    BOOST_TEST_REQUIRE(tolerant.ok, tolerant.text);
    BOOST_TEST(contains(tolerant.text, "whitespace-tolerant"));
    BOOST_TEST(tolerant.data.at("tolerant_match").as_bool());
    BOOST_TEST(w.read("a.py") == "def f():\n    return 3\n\ndef g():\n    return 2\n");
    BOOST_TEST(w.run("doc_edit", R"j({"command":"str_replace","path":"a.py","new_str":"x"})j")
                   .error_code == "INVALID_PARAMETERS");
}

BOOST_AUTO_TEST_CASE(insert_append_create) {
    temp_workspace w;
    BOOST_TEST(w.run("doc_edit", R"j({"command":"create","path":"n.md","file_text":"# T\n"})j").ok);
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"create","path":"n.md","file_text":"x"})j").error_code ==
        "FILE_EXISTS");
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"insert","path":"n.md","insert_line":0,"new_str":"top"})j")
            .ok);
    BOOST_TEST(w.run("doc_edit", R"j({"command":"append","path":"n.md","new_str":"end\n"})j").ok);
    BOOST_TEST(w.read("n.md") == "top\n# T\nend\n");
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"insert","path":"n.md","insert_line":9,"new_str":"x"})j")
            .error_code == "INVALID_RANGE");
}

BOOST_AUTO_TEST_CASE(unix_style_project_paths) {
    temp_workspace w;
    w.write("Chapter 5.md", "It was night.\n");
    w.write("characters/protagonist.md", "Ada\n");
    // A leading / is the workspace root.
    auto chapter = w.run("doc_edit", R"j({"command":"view","path":"/Chapter 5.md"})j");
    BOOST_TEST_REQUIRE(chapter.ok, chapter.text);
    BOOST_TEST(contains(chapter.text, "It was night."));
    auto edited = w.run(
        "doc_edit",
        R"j({"command":"str_replace","path":"/characters/protagonist.md","old_str":"Ada","new_str":"Ada Lovelace"})j");
    BOOST_TEST_REQUIRE(edited.ok, edited.text);
    BOOST_TEST(w.read("characters/protagonist.md") == "Ada Lovelace\n");
    // A path ending in / views the folder.
    auto root = w.run("doc_edit", R"j({"command":"view","path":"/"})j");
    BOOST_TEST_REQUIRE(root.ok, root.text);
    BOOST_TEST(contains(root.text, "Chapter 5.md"));
    BOOST_TEST(contains(root.text, "characters/"));
    auto folder = w.run("doc_edit", R"j({"command":"view","path":"/characters/"})j");
    BOOST_TEST_REQUIRE(folder.ok, folder.text);
    BOOST_TEST(contains(folder.text, "protagonist.md"));
    BOOST_TEST(w.run("doc_edit", R"j({"command":"append","path":"/characters/","new_str":"x"})j")
                   .error_code == "INVALID_PARAMETERS");
    // Never the file system's root, and never outside the workspace.
    BOOST_TEST(w.run("doc_edit", R"j({"command":"view","path":"/etc/passwd"})j").error_code ==
               "NOT_FOUND");
    BOOST_TEST(w.run("doc_edit", R"j({"command":"view","path":"/../outside.md"})j").error_code ==
               "PATH_OUTSIDE_WORKSPACE");
    BOOST_TEST(w.run("doc_edit", R"j({"command":"view","path":"/../"})j").error_code ==
               "PATH_OUTSIDE_WORKSPACE");
}

BOOST_AUTO_TEST_CASE(the_open_document_is_named_by_document) {
    temp_workspace w;
    tools::open_document doc{"Chapter 5", "It was a dark night.\nThe end.\n", {}, {}};
    w.context.document = &doc;
    auto view = w.run("doc_edit", R"j({"command":"view","document":"Chapter 5"})j");
    BOOST_TEST_REQUIRE(view.ok, view.text);
    BOOST_TEST(contains(view.text, "Document `Chapter 5` (2 lines)"));
    auto edit = w.run(
        "doc_edit",
        R"j({"command":"str_replace","document":"Chapter 5","old_str":"dark","new_str":"stormy"})j");
    BOOST_TEST_REQUIRE(edit.ok, edit.text);
    BOOST_TEST(doc.content == "It was a stormy night.\nThe end.\n");
    BOOST_TEST(contains(edit.data.at("diff").as_string().c_str(), "+It was a stormy night."));
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"append","document":"Chapter 5","new_str":"P.S.\n"})j")
            .ok);
    BOOST_TEST(doc.content == "It was a stormy night.\nThe end.\nP.S.\n");

    // Errors: another name, no document, both or neither target, create on the document.
    auto unknown = w.run("doc_edit", R"j({"command":"view","document":"Chapter 6"})j");
    BOOST_TEST(unknown.error_code == "DOC_NOT_FOUND");
    BOOST_TEST(contains(unknown.text, "`Chapter 5`"));
    BOOST_TEST(
        w.run("doc_edit", R"j({"command":"view","document":"Chapter 5","path":"a"})j").error_code ==
        "INVALID_PARAMETERS");
    BOOST_TEST(w.run("doc_edit", R"j({"command":"view"})j").error_code == "INVALID_PARAMETERS");
    BOOST_TEST(w.run("doc_edit", R"j({"command":"create","document":"Chapter 5","file_text":"x"})j")
                   .error_code == "INVALID_PARAMETERS");
    w.context.document = nullptr;
    BOOST_TEST(w.run("doc_edit", R"j({"command":"view","document":"Chapter 5"})j").error_code ==
               "DOC_NOT_FOUND");
    // Only a change needs approval; naming the document makes the caller load it.
    tools::doc_edit_tool tool;
    BOOST_TEST(
        tool.uses_document(boost::json::parse(R"({"command":"view","document":"x"})").as_object()));
    BOOST_TEST(
        !tool.uses_document(boost::json::parse(R"({"command":"view","path":"x"})").as_object()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_doc_edit_test
