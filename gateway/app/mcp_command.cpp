#include "gateway/app/mcp_command.hpp"

#include "gateway/config/config.hpp"
#include "gateway/mcp/client.hpp"
#include "gateway/mcp/http_transport.hpp"
#include "gateway/mcp/stdio_transport.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <iostream>
#include <optional>

namespace gateway::app {

namespace json = boost::json;
namespace net = boost::asio;

namespace {

constexpr const char* usage = R"(Usage:
  contextgate mcp tools (--url URL | --command "CMD ARGS") [--header "Name: value"]... [--timeout 60s]
  contextgate mcp call (--url URL | --command "CMD ARGS") --tool NAME [--params JSON]
                       [--header "Name: value"]... [--timeout 60s]

Talks to one MCP server directly: over Streamable HTTP (--url) or by starting it and speaking
over its stdin and stdout (--command, split like a shell would, without expansion). `tools`
prints its tool list as JSON; `call` calls one tool and prints its result as JSON. The exit
status is 1 when the server cannot be used (it has 30 s to start and initialize) or the call
fails (an error result, a JSON-RPC error, no answer within --timeout, after which the call is
cancelled).
)";

int usage_error(const std::string& message) {
    std::cerr << "contextgate mcp: " << message << "\n\n" << usage;
    return 2;
}

struct request {
    bool list = false;
    config::mcp_server_config server;
    std::string tool;
    json::object params;
};

// What the command prints and its exit status.
struct answer {
    std::string out;
    std::string err;
    int status = 1;
};

net::awaitable<answer> talk(gateway::io::task_group& tasks, request r,
                            std::shared_ptr<net::ssl::context> tls) {
    auto executor = tasks.executor();
    std::unique_ptr<mcp::transport> t;
    if (r.server.transport == config::mcp_transport::stdio)
        t = std::make_unique<mcp::stdio_transport>(tasks, "cli", r.server.command, r.server.args,
                                                   r.server.env);
    else
        t = std::make_unique<mcp::http_transport>(tasks, r.server, tls);
    auto session = std::make_shared<mcp::client>(executor, "cli", std::move(t));
    answer out;
    auto error = co_await session->connect(r.server.connect_timeout);
    if (!error.empty()) {
        out.err = "the MCP server cannot be used: " + error;
        co_return out;
    }
    if (r.list) {
        auto listed = co_await session->list_tools(r.server.call_timeout);
        session->close();
        if (!listed.error.empty()) {
            out.err = listed.error;
            co_return out;
        }
        out.out = json::serialize(json::object{{"tools", std::move(listed.tools)}});
        out.status = 0;
        co_return out;
    }
    std::string method = "tools/call";
    json::object params{{"name", r.tool}, {"arguments", std::move(r.params)}};
    auto o = co_await session->request(std::move(method), std::move(params), r.server.call_timeout);
    session->close();
    if (!o.ok()) {
        out.err = (o.what == mcp::outcome::kind::rpc_error
                       ? "the server answered with an error: " + o.message + " (JSON-RPC " +
                             std::to_string(o.code) + ")"
                       : "the call failed: " + o.message);
        if (o.what == mcp::outcome::kind::rpc_error)
            out.out = json::serialize(
                json::object{{"error", {{"code", o.code}, {"message", o.message}}}});
        co_return out;
    }
    out.out = json::serialize(o.result);
    const auto* result = o.result.if_object();
    const auto* failed = result ? result->if_contains("isError") : nullptr;
    out.status = failed && failed->is_bool() && failed->as_bool() ? 1 : 0;
    co_return out;
}

}  // namespace

std::optional<std::vector<std::string>> split_command(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                       (text[i + 1] == '"' || text[i + 1] == '\\')) {
                word += text[++i];
            } else {
                word += c;
            }
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quote) return std::nullopt;
    if (in_word) words.push_back(std::move(word));
    return words;
}

int run_mcp_command(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        (args.empty() ? std::cerr : std::cout) << usage;
        return args.empty() ? 2 : 0;
    }
    request r;
    if (args[0] == "tools")
        r.list = true;
    else if (args[0] != "call")
        return usage_error("unknown subcommand `" + args[0] + "`");
    r.server.name = "cli";
    std::string url, command, params = "{}";
    for (std::size_t i = 1; i < args.size(); ++i) {
        bool has_value = i + 1 < args.size();
        if (args[i] == "--url" && has_value) {
            url = args[++i];
        } else if (args[i] == "--command" && has_value) {
            command = args[++i];
        } else if (args[i] == "--tool" && has_value && !r.list) {
            r.tool = args[++i];
        } else if (args[i] == "--params" && has_value && !r.list) {
            params = args[++i];
        } else if (args[i] == "--header" && has_value) {
            auto header = args[++i];
            auto colon = header.find(':');
            if (colon == std::string::npos || colon == 0)
                return usage_error("--header must be \"Name: value\"");
            auto value = header.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.server.headers.emplace_back(header.substr(0, colon), value);
        } else if (args[i] == "--timeout" && has_value) {
            auto timeout = config::parse_duration(args[++i]);
            if (!timeout || timeout->count() == 0)
                return usage_error("--timeout must be a duration such as 30s");
            r.server.call_timeout = *timeout;
        } else {
            return usage_error("unexpected argument `" + args[i] + "`");
        }
    }
    if (url.empty() == command.empty()) return usage_error("give either --url or --command");
    if (!r.list && r.tool.empty()) return usage_error("missing --tool NAME");
    boost::system::error_code ec;
    auto parsed = json::parse(params, ec);
    if (ec || !parsed.is_object()) return usage_error("--params must be a JSON object");
    r.params = std::move(parsed.as_object());
    std::shared_ptr<net::ssl::context> tls;
    if (!command.empty()) {
        auto words = split_command(command);
        if (!words || words->empty()) return usage_error("--command has an unclosed quote");
        r.server.transport = config::mcp_transport::stdio;
        r.server.command = words->front();
        r.server.args.assign(words->begin() + 1, words->end());
    } else {
        auto endpoint = config::parse_base_url(url);
        if (!endpoint) return usage_error("--url: `" + url + "` " + endpoint.error);
        r.server.transport = config::mcp_transport::http;
        r.server.url = url;
        r.server.endpoint = *endpoint.value;
        if (r.server.endpoint.tls) {
            auto made = upstream::make_client_context(mcp::http_upstream(r.server));
            if (!made) {
                std::cerr << "contextgate mcp: " << made.error << "\n";
                return 1;
            }
            tls = *made.value;
        }
    }
    observability::set_level(config::log_level::error);
    // The transport's tasks outlive the io_context that may still hold their coroutines.
    std::optional<gateway::io::task_group> tasks;
    net::io_context io;
    tasks.emplace(io.get_executor(), nullptr);
    auto done = net::co_spawn(io, talk(*tasks, std::move(r), tls), net::use_future);
    io.run();
    auto result = done.get();
    if (!result.out.empty()) std::cout << result.out << "\n";
    if (!result.err.empty()) std::cerr << "contextgate mcp: " << result.err << "\n";
    return result.status;
}

}  // namespace gateway::app
