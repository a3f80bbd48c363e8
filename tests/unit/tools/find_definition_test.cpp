#include "gateway/tools/find_definition.hpp"

#include "gateway/tools/symbol_index.hpp"

#include "fixture.hpp"

namespace tools_find_definition_test {

using namespace tools_test;

namespace {

void write_sources(temp_workspace& w) {
    w.write(
        "src/db.py",
        "import os\nclass DatabaseService:\n    def connect(self):\n        pass\nTIMEOUT = 5\n");
    w.write("src/util.ts",
            "import { x } from './x';\nexport function formatDate(d: Date) {\n  return "
            "d;\n}\nexport class Cache {}\nexport const limit = 3;\n");
    w.write("src/main.c",
            "#include \"db.h\"\nstruct point { int x; };\nstatic int add_points(int a, int b) {\n  "
            "return a + b;\n}\n#define MAX_POINTS 10\n");
    w.write("src/db.h", "int add_points(int a, int b);\n");
    w.write("cmd/main.go", "package main\nimport \"fmt\"\nfunc Serve() {}\ntype Server struct{}\n");
    w.write("lib/lib.rs", "use std::io;\npub fn parse_args() {}\npub struct Config;\n");
    w.write("App.java",
            "public class App {\n    public static void main(String[] args) {\n    }\n}\n");
}

std::string engine_of(temp_workspace& w, bool ctags) {
    w.files->symbols().set_ctags(ctags ? "/usr/bin/ctags" : "");
    return ctags ? "ctags" : "regex";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(find_definition_suite)

BOOST_AUTO_TEST_CASE(finds_definitions_with_both_engines) {
    for (bool ctags : {false, true}) {
        if (ctags && !fs::exists("/usr/bin/ctags")) continue;
        temp_workspace w;
        write_sources(w);
        auto engine = engine_of(w, ctags);
        auto find = [&](const std::string& params) { return w.run("find_definition", params); };
        auto service = find(R"j({"symbol":"DatabaseService"})j");
        BOOST_TEST(contains(service.text, "src/db.py:2:"), engine << service.text);
        BOOST_TEST(service.data.at("engine").as_string() == engine);
        BOOST_TEST(
            contains(find(R"j({"symbol":"connect","type":"function"})j").text, "src/db.py:3:"),
            engine);
        BOOST_TEST(contains(find(R"j({"symbol":"formatDate"})j").text, "src/util.ts:2:"), engine);
        BOOST_TEST(contains(find(R"j({"symbol":"Cache","type":"class"})j").text, "src/util.ts:5:"),
                   engine);
        // The C definition, not the declaration in the header.
        auto add = find(R"j({"symbol":"add_points","type":"function"})j");
        BOOST_TEST(contains(add.text, "src/main.c:3:"), engine << add.text);
        BOOST_TEST(!contains(add.text, "src/db.h"), engine << add.text);
        BOOST_TEST(contains(find(R"j({"symbol":"MAX_POINTS"})j").text, "src/main.c:6:"), engine);
        BOOST_TEST(contains(find(R"j({"symbol":"Serve"})j").text, "cmd/main.go:3:"), engine);
        BOOST_TEST(contains(find(R"j({"symbol":"Server","type":"class"})j").text, "cmd/main.go:4:"),
                   engine);
        BOOST_TEST(contains(find(R"j({"symbol":"parse_args"})j").text, "lib/lib.rs:2:"), engine);
        BOOST_TEST(contains(find(R"j({"symbol":"Config"})j").text, "lib/lib.rs:3:"), engine);
        BOOST_TEST(contains(find(R"j({"symbol":"App","type":"class"})j").text, "App.java:1:"),
                   engine);
        BOOST_TEST(contains(find(R"j({"symbol":"os","type":"import"})j").text, "src/db.py:1:"),
                   engine);
        BOOST_TEST(
            contains(find(R"j({"symbol":"TIMEOUT","type":"function"})j").text, "No definition"),
            engine);
        BOOST_TEST(contains(find(R"j({"symbol":"Nothing"})j").text, "No definition of `Nothing`"),
                   engine);
    }
}

BOOST_AUTO_TEST_CASE(index_follows_changes) {
    for (bool ctags : {false, true}) {
        if (ctags && !fs::exists("/usr/bin/ctags")) continue;
        temp_workspace w;
        write_sources(w);
        engine_of(w, ctags);
        auto& index = w.files->symbols();
        index.set_recheck(std::chrono::milliseconds(0));
        BOOST_TEST(
            contains(w.run("find_definition", R"j({"symbol":"Serve"})j").text, "cmd/main.go:3:"));
        index.wait_for_refresh();  // the re-check that lookup started saw the old tree
        // An outside edit moves the function; a new file adds one; a deleted file drops its own.
        w.write("cmd/main.go", "package main\n\n\nfunc Serve() {}\n");
        w.write("cmd/extra.go", "package main\nfunc Extra() {}\n");
        fs::remove(w.root / "lib/lib.rs");
        // This lookup starts a background re-check (the interval is 0) and answers at once.
        w.run("find_definition", R"j({"symbol":"Serve"})j");
        index.wait_for_refresh();
        BOOST_TEST(
            contains(w.run("find_definition", R"j({"symbol":"Serve"})j").text, "cmd/main.go:4:"));
        BOOST_TEST(
            contains(w.run("find_definition", R"j({"symbol":"Extra"})j").text, "cmd/extra.go:2:"));
        BOOST_TEST(contains(w.run("find_definition", R"j({"symbol":"parse_args"})j").text,
                            "No definition"));
        // A write through the workspace invalidates at once, whatever the recheck interval.
        index.set_recheck(std::chrono::hours(1));
        BOOST_TEST(
            w.run("create_file", R"j({"path":"late.py","content":"def late():\n    pass\n"})j").ok);
        BOOST_TEST(contains(w.run("find_definition", R"j({"symbol":"late"})j").text, "late.py:1:"));
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_find_definition_test
