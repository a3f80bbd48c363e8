#include "gateway/app/tool_command.hpp"

#include "gateway/config/config.hpp"
#include "gateway/mcp/hub.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/tools/registry.hpp"
#include "gateway/tools/workspace.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <climits>
#include <cstdlib>
#include <iostream>

namespace gateway::app {

namespace {

constexpr const char* usage = R"(Usage:
  contextgate tool list [--role reader|editor] [--config FILE]
  contextgate tool run NAME --workspace DIR --params JSON [--json] [--preview] [--config FILE]

`list` prints the tool catalogue as the model sees it (default role: editor). With --config, the
tools of the MCP servers FILE configures (mcp_servers) are included: they are started and asked
for their tools first.
`run` runs one tool directly, without an approval step, in the workspace DIR. It prints the text
the model would read, or with --json the whole result ({ok, error_code, text, data}); --preview
computes a write's diff without writing. The exit status is 1 when the tool failed.
)";

int usage_error(const std::string& message) {
    std::cerr << "contextgate tool: " << message << "\n\n" << usage;
    return 2;
}

}  // namespace

int run_tool_command(const std::vector<std::string>& given) {
    if (given.empty() || given[0] == "--help" || given[0] == "-h") {
        (given.empty() ? std::cerr : std::cout) << usage;
        return given.empty() ? 2 : 0;
    }
    // --config FILE: the MCP servers it configures join the registry.
    std::vector<std::string> args;
    std::string config_path;
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i] == "--config" && i + 1 < given.size())
            config_path = given[++i];
        else
            args.push_back(given[i]);
    }
    if (args.empty()) return usage_error("missing subcommand (list or run)");
    std::unique_ptr<mcp::hub> servers;
    if (!config_path.empty()) {
        auto loaded = config::load_file(config_path);
        if (!loaded) {
            std::cerr << "contextgate tool: " << loaded.error << "\n";
            return 2;
        }
        observability::set_level(config::log_level::error);
        servers = std::make_unique<mcp::hub>(loaded.value->mcp_servers);
        servers->start(true);
    }
    tools::registry tools(servers.get());
    if (args[0] == "list") {
        auto role = tools::role::editor;
        for (std::size_t i = 1; i < args.size(); ++i) {
            if (args[i] == "--role" && i + 1 < args.size()) {
                auto parsed = tools::parse_role(args[++i]);
                if (!parsed) return usage_error("unknown role `" + args[i] + "`");
                role = *parsed;
            } else {
                return usage_error("unexpected argument `" + args[i] + "`");
            }
        }
        std::cout << tools.catalogue(role);
        return 0;
    }
    if (args[0] != "run") return usage_error("unknown subcommand `" + args[0] + "`");
    if (args.size() < 2) return usage_error("missing tool name");
    std::string name = args[1], root, params = "{}";
    bool as_json = false, preview = false;
    for (std::size_t i = 2; i < args.size(); ++i) {
        if (args[i] == "--workspace" && i + 1 < args.size()) {
            root = args[++i];
        } else if (args[i] == "--params" && i + 1 < args.size()) {
            params = args[++i];
        } else if (args[i] == "--json") {
            as_json = true;
        } else if (args[i] == "--preview") {
            preview = true;
        } else {
            return usage_error("unexpected argument `" + args[i] + "`");
        }
    }
    boost::system::error_code ec;
    auto parameters = boost::json::parse(params, ec);
    if (ec) return usage_error("--params is not valid JSON: " + ec.message());

    tools::tool_context context;
    std::unique_ptr<tools::workspace> files;
    if (!root.empty()) {
        char resolved[PATH_MAX];
        if (!::realpath(root.c_str(), resolved)) {
            std::cerr << "contextgate tool: workspace `" << root << "` does not exist\n";
            return 2;
        }
        std::string error;
        files = tools::workspace::open(resolved, error);
        if (!files) {
            std::cerr << "contextgate tool: " << error << "\n";
            return 2;
        }
        context.files = files.get();
    }
    auto result = tools.execute(name, parameters, context,
                                preview ? tools::mode::preview : tools::mode::execute);
    if (as_json) {
        boost::json::object out{{"ok", result.ok},
                                {"error_code", result.error_code},
                                {"text", result.text},
                                {"data", result.data}};
        std::cout << boost::json::serialize(out) << "\n";
    } else {
        if (!result.ok) std::cout << "error " << result.error_code << ": ";
        std::cout << result.text;
        if (!result.text.ends_with('\n')) std::cout << '\n';
    }
    return result.ok ? 0 : 1;
}

}  // namespace gateway::app
