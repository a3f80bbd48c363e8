#pragma once

// A throwaway workspace for tool tests: <tmp>/ws is the root, <tmp>/outside.txt a file beside it
// that no tool may touch.

#include "gateway/tools/registry.hpp"
#include "gateway/tools/workspace.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tools_test {

namespace fs = std::filesystem;
namespace tools = gateway::tools;

struct temp_workspace {
    fs::path base;
    fs::path root;
    std::unique_ptr<tools::workspace> files;
    tools::tool_context context;

    explicit temp_workspace(tools::sandbox::resolution mode = tools::sandbox::resolution::openat2) {
        char pattern[] = "/tmp/contextgate-tools-XXXXXX";
        base = ::mkdtemp(pattern);
        root = base / "ws";
        fs::create_directories(root);
        std::ofstream(base / "outside.txt") << "outside";
        std::string error;
        files = tools::workspace::open(root.string(), error, mode);
        BOOST_TEST_REQUIRE(static_cast<bool>(files), error);
        context.files = files.get();
    }
    ~temp_workspace() { fs::remove_all(base); }

    void write(const std::string& relative, const std::string& content) {
        auto path = root / relative;
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << content;
    }
    std::string read(const std::string& relative) const {
        std::ifstream in(root / relative, std::ios::binary);
        std::stringstream out;
        out << in.rdbuf();
        return out.str();
    }
    bool exists(const std::string& relative) const {
        return fs::exists(fs::symlink_status(root / relative));
    }

    tools::tool_result run(const std::string& name, const std::string& parameters,
                           tools::mode how = tools::mode::execute) {
        return tools::registry::standard().execute(name, boost::json::parse(parameters), context,
                                                   how);
    }
};

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace tools_test
