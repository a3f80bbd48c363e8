#include "gateway/app/cli.hpp"

#include "gateway/app/mcp_command.hpp"
#include "gateway/app/prices_command.hpp"
#include "gateway/app/server.hpp"
#include "gateway/app/tool_command.hpp"
#include "gateway/config/config.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/pricing/price_table.hpp"
#include "gateway/workflows/registry.hpp"

#include <iostream>

namespace gateway::app {

namespace {

constexpr const char* usage = R"(contextgate - an OpenAI-compatible gateway

Usage:
  contextgate serve [--config FILE]          run the gateway (default FILE: config/gateway.yaml)
  contextgate check-config [--config FILE]   validate FILE and print the effective configuration,
                                             secrets masked
  contextgate tool list|run ...              list the agent's tools or run one (see `tool --help`)
  contextgate mcp tools|call ...             list or call an MCP server's tools (see `mcp --help`)
  contextgate prices import FILE ...         a price table from LiteLLM's price map (see
                                             `prices --help`)
  contextgate --help                         this text
  contextgate --version                      the version

The gateway forwards /v1/* to the configured upstreams unchanged; see README.md.
Signals: SIGTERM or SIGINT drains in-flight requests (server.drain_time), a second one exits.
)";

}  // namespace

int run_cli(const std::vector<std::string>& args) {
    if (args.empty()) {
        std::cerr << usage;
        return 2;
    }
    const std::string& command = args[0];
    if (command == "--help" || command == "-h" || command == "help") {
        std::cout << usage;
        return 0;
    }
    if (command == "--version" || command == "-V") {
        std::cout << "contextgate " CONTEXTGATE_VERSION "\n";
        return 0;
    }
    if (command == "tool") return run_tool_command({args.begin() + 1, args.end()});
    if (command == "mcp") return run_mcp_command({args.begin() + 1, args.end()});
    if (command == "prices") return run_prices_command({args.begin() + 1, args.end()});
    if (command != "serve" && command != "check-config") {
        std::cerr << "contextgate: unknown command `" << command << "`\n\n" << usage;
        return 2;
    }
    std::string path = "config/gateway.yaml";
    for (std::size_t i = 1; i < args.size(); ++i) {
        if ((args[i] == "--config" || args[i] == "-c") && i + 1 < args.size()) {
            path = args[++i];
        } else if (args[i].starts_with("--config=")) {
            path = args[i].substr(9);
        } else if (args[i] == "--help" || args[i] == "-h") {
            std::cout << usage;
            return 0;
        } else {
            std::cerr << "contextgate: unexpected argument `" << args[i] << "`\n\n" << usage;
            return 2;
        }
    }
    auto loaded = config::load_file(path);
    if (!loaded) {
        std::cerr << "contextgate: " << loaded.error << "\n";
        return 1;
    }
    if (command == "check-config") {
        auto files = load_context_files(*loaded.value);
        if (!files) {
            std::cerr << "contextgate: " << files.error << "\n";
            return 1;
        }
        auto prices = pricing::build_prices(loaded.value->pricing);
        if (!prices) {
            std::cerr << "contextgate: " << prices.error << "\n";
            return 1;
        }
        std::cout << "# " << path << ": valid; " << files.value->prompts.size() << " prompt(s), "
                  << files.value->workflows->all()->size() << " workflow(s), "
                  << (*prices.value)->size() << " price(s) of " << (*prices.value)->date() << "\n"
                  << config::to_yaml(*loaded.value);
        return 0;
    }
    observability::set_level(loaded.value->logging.level);
    observability::set_format(loaded.value->logging.format);
    return serve(*loaded.value);
}

}  // namespace gateway::app
