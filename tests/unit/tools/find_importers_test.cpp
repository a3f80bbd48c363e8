#include "gateway/tools/find_importers.hpp"

#include "fixture.hpp"

namespace tools_find_importers_test {

using namespace tools_test;

BOOST_AUTO_TEST_SUITE(find_importers_suite)

BOOST_AUTO_TEST_CASE(each_language) {
    temp_workspace w;
    w.write("src/services/db.ts", "export class Db {}\n");
    w.write("src/app.ts", "import { Db } from './services/db';\n");
    w.write("src/ui/view.tsx", "import Db from \"../services/db.ts\";\n");
    w.write("src/other.js", "const db = require('./services/db');\n");
    w.write("src/unrelated.ts", "import { x } from './services/dbx';\n");
    auto js = w.run("find_importers", R"j({"module_path":"src/services/db.ts"})j");
    BOOST_TEST(js.text ==
               "3 files import `src/services/db.ts`:\n"
               "src/app.ts:1: import { Db } from './services/db';\n"
               "src/other.js:1: const db = require('./services/db');\n"
               "src/ui/view.tsx:1: import Db from \"../services/db.ts\";\n");

    w.write("pkg/util/helpers.py", "def h(): pass\n");
    w.write("pkg/main.py", "from pkg.util.helpers import h\n");
    w.write("pkg/util/sibling.py", "from . import helpers\n");
    w.write("pkg/plain.py", "import pkg.util.helpers as hp\n");
    auto py = w.run("find_importers", R"j({"module_path":"pkg/util/helpers.py"})j");
    BOOST_TEST(contains(py.text, "3 files import"), py.text);
    BOOST_TEST(contains(py.text, "pkg/util/sibling.py:1:"));
    BOOST_TEST(
        contains(w.run("find_importers", R"j({"module_path":"os"})j").text, "No file imports"));

    w.write("include/net/socket.h", "#pragma once\n");
    w.write("src/net.cpp", "#include <vector>\n#include \"net/socket.h\"\n");
    auto c = w.run("find_importers", R"j({"module_path":"include/net/socket.h"})j");
    BOOST_TEST(contains(c.text, "src/net.cpp:2: #include \"net/socket.h\""), c.text);

    w.write("cmd/main.go",
            "package main\nimport (\n\t\"fmt\"\n\t\"example.com/app/internal/store\"\n)\n");
    auto go = w.run("find_importers", R"j({"module_path":"internal/store"})j");
    BOOST_TEST(contains(go.text, "cmd/main.go:4:"), go.text);

    w.write("src/parser/lexer.rs", "pub fn lex() {}\n");
    w.write("src/lib.rs", "use crate::parser::lexer::lex;\n");
    w.write("src/parser/mod.rs", "mod lexer;\n");
    auto rust = w.run("find_importers", R"j({"module_path":"src/parser/lexer.rs"})j");
    BOOST_TEST(contains(rust.text, "2 files import"), rust.text);

    w.write("src/main/java/com/acme/Store.java", "package com.acme;\n");
    w.write("src/main/java/com/acme/App.java", "import com.acme.Store;\n");
    auto java = w.run("find_importers", R"j({"module_path":"src/main/java/com/acme/Store.java"})j");
    BOOST_TEST(contains(java.text, "App.java:1:"), java.text);
}

BOOST_AUTO_TEST_CASE(refuses_paths_outside) {
    temp_workspace w;
    BOOST_TEST(w.run("find_importers", R"j({"module_path":"../x.h"})j").error_code ==
               "PATH_OUTSIDE_WORKSPACE");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tools_find_importers_test
