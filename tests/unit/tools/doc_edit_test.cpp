#include "gateway/tools/doc_edit.hpp"

#include "fixture.hpp"

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

BOOST_AUTO_TEST_SUITE_END()
