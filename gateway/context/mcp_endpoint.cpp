#include "gateway/context/mcp_endpoint.hpp"

#include "gateway/context/mcp_session.hpp"
#include "gateway/http/request_values.hpp"

#include "gateway/agent/run_state.hpp"
#include "gateway/clock.hpp"
#include "gateway/error.hpp"
#include "gateway/http/response.hpp"
#include "gateway/ids.hpp"
#include "gateway/json_fields.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/tools/tool.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

namespace gateway::context {

namespace json = boost::json;
namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using namespace mcp_rpc;
using http::reply;

namespace {

// The protocol versions this server speaks, newest first; a client asking for another one is
// offered the newest.
constexpr std::array<std::string_view, 3> versions{"2025-11-25", "2025-06-18", "2025-03-26"};
constexpr std::size_t max_sessions = 1024;
constexpr auto session_idle = 1h;

bool supported(std::string_view version) {
    return std::find(versions.begin(), versions.end(), version) != versions.end();
}

reply accepted() {
    reply r;
    r.status = 202;
    r.content_type = "";
    return r;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

mcp_endpoint::mcp_endpoint(const config::context_config& context,
                           const config::mcp_serve_config& config, store::state_store& store,
                           agent::run_registry& runs, agent::run_journal& journal,
                           const agent::system_prompts& prompts,
                           const tools::workspace_roots& roots,
                           const workflows::registry& workflows, workflows::runner& workflow_runs)
    : config_(config),
      store_(store),
      runs_(runs),
      prompts_(prompts),
      roots_(roots),
      workflows_(workflows),
      workflow_runs_(workflow_runs),
      streams_(context, store, journal),
      workspace_(config.workspace.empty() && !roots.paths().empty() ? roots.paths().front()
                                                                    : config.workspace),
      system_prompt_(config.system_prompt.empty() ? context.default_prompt : config.system_prompt) {
}

http::handler mcp_endpoint::route(method m) {
    return [this, m](http::request_context& ctx) -> net::awaitable<void> {
        auto answer = co_await (this->*m)(ctx);
        co_await http::write_reply(ctx, std::move(answer));
    };
}

std::string mcp_endpoint::check() const {
    if (!prompts_.find(system_prompt_))
        return "mcp.system_prompt: no system prompt `" + system_prompt_ + "`";
    if (!workspace_.empty())
        if (auto opened = roots_.open(workspace_); !opened.error.empty())
            return "mcp.workspace: " + opened.error;
    return {};
}

std::shared_ptr<mcp_endpoint::session> mcp_endpoint::open_session(std::string version, bool can_ask,
                                                                  std::string& id) {
    auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    // Sessions idle for an hour go; at the cap, the least recently used one with no call.
    std::erase_if(sessions_, [&](const auto& entry) {
        return entry.second->runs.empty() && now - entry.second->used > session_idle;
    });
    if (sessions_.size() >= max_sessions) {
        auto oldest = sessions_.end();
        for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
            if (it->second->runs.empty() &&
                (oldest == sessions_.end() || it->second->used < oldest->second->used))
                oldest = it;
        if (oldest == sessions_.end()) return nullptr;
        sessions_.erase(oldest);
    }
    auto s = std::make_shared<session>();
    s->version = std::move(version);
    s->can_ask = can_ask;
    s->used = now;
    id = random_id("mcp_", 16);
    sessions_[id] = s;
    return s;
}

net::awaitable<reply> mcp_endpoint::post(http::request_context& ctx) {
    const auto& req = ctx.req;
    auto type = lower(req[bhttp::field::content_type]);
    if (!type.starts_with("application/json"))
        co_return rpc(
            415, rpc_error(nullptr, invalid_request, "Content-Type must be application/json."));
    json::error_code ec;
    auto parsed = json::parse(req.body(), ec);
    if (ec) co_return rpc(400, rpc_error(nullptr, parse_error, "Parse error: " + ec.message()));
    if (http::holds_nul(parsed))
        co_return rpc(400, rpc_error(nullptr, invalid_params,
                                     "A string holds a NUL character (\\u0000), which the gateway "
                                     "does not store; remove it."));
    if (parsed.is_array())
        co_return rpc(400, rpc_error(nullptr, invalid_request,
                                     "Batches are not supported: send one message per request."));
    if (!parsed.is_object() || string_of(parsed.as_object(), "jsonrpc") != "2.0")
        co_return rpc(400, rpc_error(nullptr, invalid_request,
                                     "Not a JSON-RPC 2.0 message (`\"jsonrpc\": \"2.0\"`)."));
    const auto& message = parsed.as_object();
    auto method = string_of(message, "method");
    const auto* id = message.if_contains("id");
    if (id && !valid_id(*id))
        co_return rpc(400,
                      rpc_error(nullptr, invalid_request, "`id` must be a string or an integer."));

    if (method == "initialize") {
        if (!id)
            co_return rpc(
                400, rpc_error(nullptr, invalid_request, "`initialize` is a request: give an id."));
        json::object none;
        const auto* params = object_of(message, "params");
        if (!params) params = &none;
        auto asked = string_of(*params, "protocolVersion");
        auto version = supported(asked) ? asked : std::string(versions.front());
        bool can_ask = false;
        if (const auto* caps = object_of(*params, "capabilities"))
            if (const auto* elicitation = object_of(*caps, "elicitation"))
                can_ask = elicitation->empty() || elicitation->contains("form");
        std::string sid;
        auto s = open_session(version, can_ask, sid);
        if (!s)
            co_return rpc(503, rpc_error(*id, server_error,
                                         "Too many MCP sessions with calls under way; try again "
                                         "later."));
        json::object result{
            {"protocolVersion", version},
            {"capabilities",
             {{"tools", {{"listChanged", false}}}, {"prompts", {{"listChanged", false}}}}},
            {"serverInfo",
             {{"name", "contextgate"},
              {"title", "contextgate workflows"},
              {"version", CONTEXTGATE_VERSION}}},
            {"instructions",
             "Each tool runs one of the gateway's workflows in a chat of its own and returns its "
             "output. Steps that change files ask for an approval."}};
        auto r = rpc(200, rpc_result(*id, std::move(result)));
        r.header("Mcp-Session-Id", sid);
        co_return r;
    }

    auto sid = req["Mcp-Session-Id"];
    if (sid.empty())
        co_return rpc(400, rpc_error(nullptr, invalid_request,
                                     "`Mcp-Session-Id` is required: send `initialize` first."));
    std::shared_ptr<session> s;
    {
        std::lock_guard lock(mutex_);
        if (auto it = sessions_.find(std::string(sid)); it != sessions_.end()) {
            s = it->second;
            s->used = std::chrono::steady_clock::now();
        }
    }
    if (!s)
        co_return rpc(404, rpc_error(nullptr, session_not_found,
                                     "Session not found: it ended or the gateway restarted; "
                                     "send `initialize` again."));
    if (auto v = req["MCP-Protocol-Version"]; !v.empty() && !supported(v))
        co_return rpc(400, rpc_error(nullptr, invalid_request,
                                     "Unsupported MCP-Protocol-Version `" + std::string(v) + "`."));

    if (!method.empty() && id) {
        auto answer = co_await request(ctx, s, message);
        co_return answer;
    }
    if (!method.empty()) {  // a notification
        if (method == "notifications/cancelled") {
            std::string run_id;
            if (const auto* params = object_of(message, "params"))
                if (const auto* request_id = params->if_contains("requestId")) {
                    std::lock_guard lock(mutex_);
                    if (auto it = s->runs.find(json::serialize(*request_id)); it != s->runs.end())
                        run_id = it->second;
                }
            if (!run_id.empty()) co_await runs_.cancel(run_id);
        }
        co_return accepted();
    }
    if (id && (message.contains("result") || message.contains("error"))) {
        co_await answered(s, message);
        co_return accepted();
    }
    co_return rpc(400, rpc_error(nullptr, invalid_request,
                                 "Neither a request, a notification nor a response."));
}

net::awaitable<reply> mcp_endpoint::request(http::request_context& ctx, std::shared_ptr<session> s,
                                            const json::object& message) {
    const auto& id = message.at("id");
    auto method = string_of(message, "method");
    json::object none;
    const auto* params = object_of(message, "params");
    if (!params) params = &none;
    if (method == "ping") co_return rpc(200, rpc_result(id, json::object{}));
    if (method == "tools/list") {
        json::array tools;
        for (const auto& w : *workflows_.all()) {
            json::object tool{{"name", w.id},
                              {"title", w.name},
                              {"description", w.description},
                              {"inputSchema", w.parameters}};
            tools.push_back(std::move(tool));
        }
        co_return rpc(200, rpc_result(id, json::object{{"tools", std::move(tools)}}));
    }
    if (method == "tools/call") {
        auto answer = co_await call_tool(ctx, std::move(s), id, *params);
        co_return answer;
    }
    if (method == "prompts/list") {
        json::array list;
        for (const auto& p : prompts_.all())
            list.push_back(
                json::object{{"name", p.id}, {"title", p.title}, {"description", p.description}});
        co_return rpc(200, rpc_result(id, json::object{{"prompts", std::move(list)}}));
    }
    if (method == "prompts/get") {
        auto name = string_of(*params, "name");
        const auto* p = prompts_.find(name);
        if (!p) co_return rpc(200, rpc_error(id, invalid_params, "No prompt `" + name + "`."));
        json::object text{{"type", "text"}, {"text", p->body}};
        json::array messages{json::object{{"role", "user"}, {"content", std::move(text)}}};
        co_return rpc(200, rpc_result(id, json::object{{"description", p->description},
                                                       {"messages", std::move(messages)}}));
    }
    co_return rpc(200, rpc_error(id, method_not_found, "Method not found: `" + method + "`."));
}

net::awaitable<reply> mcp_endpoint::get(http::request_context&) {
    auto r =
        reply::error(errc::method_not_allowed,
                     "This server sends nothing unasked: there is no stream to open with GET.");
    r.header("Allow", "POST, DELETE");
    co_return r;
}

net::awaitable<reply> mcp_endpoint::remove(http::request_context& ctx) {
    auto sid = ctx.req["Mcp-Session-Id"];
    if (sid.empty())
        co_return rpc(400, rpc_error(nullptr, invalid_request, "`Mcp-Session-Id` is required."));
    std::vector<std::string> runs;
    {
        std::lock_guard lock(mutex_);
        auto it = sessions_.find(std::string(sid));
        if (it == sessions_.end())
            co_return rpc(404, rpc_error(nullptr, session_not_found, "Session not found."));
        for (const auto& [key, run] : it->second->runs) runs.push_back(run);
        sessions_.erase(it);
    }
    // The client ended the session: what it started and still waits for is not wanted.
    for (const auto& run : runs) co_await runs_.cancel(run);
    reply r;
    r.status = 200;
    r.content_type = "";
    co_return r;
}

}  // namespace gateway::context
