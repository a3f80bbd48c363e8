#include "gateway/mcp/hub.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/io/thread_name.hpp"
#include "gateway/mcp/client.hpp"
#include "gateway/mcp/http_transport.hpp"
#include "gateway/mcp/naming.hpp"
#include "gateway/mcp/remote_tool.hpp"
#include "gateway/mcp/results.hpp"
#include "gateway/mcp/stdio_transport.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/tools/error_codes.hpp"
#include "gateway/upstream/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <set>

namespace gateway::mcp {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);
constexpr auto max_backoff = 60s;
// A session that lasted less than this before it ended counts as a failed start (backoff).
constexpr auto short_lived = 10s;

bool wanted(const config::mcp_server_config& server, std::string_view tool) {
    bool allowed = std::any_of(server.allow.begin(), server.allow.end(),
                               [&](const auto& g) { return config::glob_match(g, tool); });
    bool denied = std::any_of(server.deny.begin(), server.deny.end(),
                              [&](const auto& g) { return config::glob_match(g, tool); });
    return allowed && !denied;
}

// 1 s after the first failure, doubling up to a minute.
std::chrono::milliseconds backoff_for(int failures) {
    auto delay = std::chrono::milliseconds(1000) * (1 << std::clamp(failures, 0, 6));
    return std::min<std::chrono::milliseconds>(delay, max_backoff);
}

}  // namespace

struct hub::link {
    link(net::any_io_executor executor, config::mcp_server_config c)
        : config(std::move(c)), wake(executor) {}

    config::mcp_server_config config;
    std::shared_ptr<net::ssl::context> tls;
    // On the hub's thread only.
    std::shared_ptr<client> session;
    net::steady_timer wake;  // the supervisor sleeps on it; cancelled to make it look again
    bool connecting = false;
    std::vector<std::shared_ptr<net::steady_timer>> waiting;  // for the attempt in progress
    int failures = 0;                                         // failed starts in a row
    std::chrono::steady_clock::time_point up_since, retry_at;
    // Guarded by hub::mutex_.
    std::string state = "starting";  // starting | ready | down
    std::string last_error;
    std::string protocol_version;
    json::object server_info;
    std::vector<const remote_tool*> tools;
    std::vector<std::string> problems;
    std::uint64_t connects = 0;
    int pid = 0;  // stdio: the running child's
    bool tried = false;
};

hub::hub(std::vector<config::mcp_server_config> servers) {
    // Made here, not in the member list: it is declared before io_ (see hub.hpp).
    tasks_ = std::make_unique<io::task_group>(
        io_.get_executor(),
        [](const std::string& task, std::exception_ptr e) { observability::log_stray(e, task); });
    for (auto& s : servers) {
        auto l = std::make_unique<link>(io_.get_executor(), std::move(s));
        if (l->config.transport == config::mcp_transport::http && l->config.endpoint.tls) {
            auto made = upstream::make_client_context(http_upstream(l->config));
            if (made)
                l->tls = *made.value;
            else
                l->last_error = made.error;
        }
        links_.push_back(std::move(l));
    }
}

hub::~hub() {
    stop();
}

void hub::start(bool wait) {
    if (links_.empty() || thread_.joinable()) return;
    for (auto& l : links_) tasks_->spawn("MCP server " + l->config.name, supervise(*l));
    thread_ = std::thread([this] {
        io::name_this_thread("mcp");
        io_.run();
    });
    if (!wait) return;
    auto longest = config::duration(0);
    for (const auto& l : links_) longest = std::max(longest, l->config.connect_timeout);
    std::unique_lock lock(mutex_);
    settled_.wait_for(lock, longest + 2s, [this] {
        return std::all_of(links_.begin(), links_.end(), [](const auto& l) { return l->tried; });
    });
}

void hub::stop() {
    if (!thread_.joinable()) return;
    net::post(io_, [this] {
        stopped_ = true;
        for (auto& l : links_) {
            if (l->session) l->session->close("the gateway is stopping");
            l->wake.cancel();
        }
        // Children get their grace period to exit; then whatever is left is cut short (their
        // state's destructor kills and reaps them).
        auto cutoff = std::make_shared<net::steady_timer>(io_, 3s);
        cutoff->async_wait([this, cutoff](boost::system::error_code) { io_.stop(); });
    });
    thread_.join();
    for (auto& l : links_) l->session.reset();
}

std::vector<tools::tool_source::entry> hub::current() const {
    std::lock_guard lock(mutex_);
    return offered_;
}

const remote_tool* hub::find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    for (const auto& e : offered_)
        if (e.implementation->spec().name == name)
            return static_cast<const remote_tool*>(e.implementation);
    return nullptr;
}

net::awaitable<void> hub::supervise(link& l) {
    while (!stopped_) {
        bool up = l.session && l.session->open();
        if (!up && std::chrono::steady_clock::now() < l.retry_at) {
            l.wake.expires_at(l.retry_at);  // backing off; a refresh cuts it short
            co_await l.wake.async_wait(use_ec);
            continue;
        }
        if (!up) co_await connect(l);
        if (stopped_) co_return;
        up = l.session && l.session->open();
        if (!up) {
            l.retry_at = std::chrono::steady_clock::now() + backoff_for(l.failures - 1);
            continue;
        }
        l.wake.expires_at(net::steady_timer::time_point::max());
        co_await l.wake.async_wait(use_ec);  // until it goes down or is refreshed
    }
}

net::awaitable<void> hub::connect(link& l) {
    if (l.connecting) {
        auto t = std::make_shared<net::steady_timer>(io_, net::steady_timer::time_point::max());
        l.waiting.push_back(t);
        co_await t->async_wait(use_ec);
        co_return;
    }
    l.connecting = true;
    {
        std::lock_guard lock(mutex_);
        l.state = "starting";
    }
    std::unique_ptr<transport> t;
    stdio_transport* child = nullptr;
    if (l.config.transport == config::mcp_transport::stdio) {
        auto made = std::make_unique<stdio_transport>(*tasks_, l.config.name, l.config.command,
                                                      l.config.args, l.config.env);
        child = made.get();
        t = std::move(made);
    } else
        t = std::make_unique<http_transport>(*tasks_, l.config, l.tls);
    auto c = std::make_shared<client>(io_.get_executor(), l.config.name, std::move(t));
    auto* self = c.get();
    c->on_closed = [this, &l, self](std::string why) {
        if (l.session.get() != self) return;
        went_down(l, std::move(why));
        l.wake.cancel();
    };
    c->on_tools_changed = [this, &l] {
        tasks_->spawn("MCP server " + l.config.name + ": tools", relist(l));
    };
    std::string error;
    if (l.config.transport == config::mcp_transport::http && l.config.endpoint.tls && !l.tls)
        error = "no TLS context";
    if (error.empty()) error = co_await c->connect(l.config.connect_timeout);
    client::listing listed;
    if (error.empty()) {
        listed = co_await c->list_tools(l.config.connect_timeout);
        error = listed.error;
    }
    if (error.empty() && stopped_) error = "the gateway is stopping";
    if (!error.empty()) {
        c->on_closed = nullptr;
        c->close();
        ++l.failures;
        went_down(l, error);
        observability::log_warn("mcp " + l.config.name + ": not connected: " + error);
    } else {
        l.session = c;
        l.up_since = std::chrono::steady_clock::now();
        publish(l, listed.tools);
        std::lock_guard lock(mutex_);
        l.state = "ready";
        l.last_error.clear();
        l.protocol_version = c->protocol_version();
        l.server_info = c->server_info();
        l.pid = child ? child->pid() : 0;
        ++l.connects;
        observability::log_info("mcp " + l.config.name + ": connected (MCP " + l.protocol_version +
                                "), " + std::to_string(l.tools.size()) + " tool(s)");
    }
    {
        std::lock_guard lock(mutex_);
        l.tried = true;
    }
    settled_.notify_all();
    l.connecting = false;
    auto waiting = std::move(l.waiting);
    l.waiting.clear();
    for (auto& w : waiting) w->cancel();
}

void hub::went_down(link& l, std::string why) {
    if (l.session) {
        // A session that ended soon after it started counts as a failed start: backoff.
        // Otherwise the server is started again at once.
        auto now = std::chrono::steady_clock::now();
        if (now - l.up_since < short_lived) {
            ++l.failures;
            l.retry_at = now + backoff_for(l.failures - 1);
        } else {
            l.failures = 0;
            l.retry_at = now;
        }
        l.session->on_closed = nullptr;
        l.session->close(why);
        l.session.reset();
    }
    std::lock_guard lock(mutex_);
    l.state = "down";
    l.last_error = std::move(why);
}

net::awaitable<void> hub::relist(link& l) {
    auto session = l.session;
    if (!session || !session->open()) co_return;
    auto listed = co_await session->list_tools(l.config.connect_timeout);
    if (!listed.error.empty() || l.session != session) {
        if (!listed.error.empty())
            observability::log_warn("mcp " + l.config.name + ": " + listed.error);
        co_return;
    }
    publish(l, listed.tools);
    observability::log_info("mcp " + l.config.name + ": tool list changed, " +
                            std::to_string(l.tools.size()) + " tool(s)");
}

void hub::publish(link& l, const json::array& listed) {
    std::lock_guard lock(mutex_);
    std::vector<const remote_tool*> tools;
    std::vector<std::string> problems;
    std::set<std::string> taken;
    for (const auto& other : links_)
        if (other.get() != &l)
            for (const auto* t : other->tools) taken.insert(std::string(t->spec().name));
    for (const auto& v : listed) {
        const auto* definition = v.if_object();
        const auto* n = definition ? definition->if_contains("name") : nullptr;
        if (!n || !n->is_string() || n->as_string().empty()) {
            problems.push_back("a listed tool without a name was left out");
            continue;
        }
        std::string original(n->as_string());
        if (!wanted(l.config, original)) continue;
        auto exposed = exposed_name(l.config.name, original);
        if (!taken.insert(exposed).second) {
            problems.push_back("tool `" + original + "` was left out: its name `" + exposed +
                               "` is taken by another tool");
            observability::log_warn("mcp " + l.config.name + ": " + problems.back());
            continue;
        }
        const remote_tool* same = nullptr;
        for (const auto* t : l.tools)
            if (t->spec().name == exposed && t->definition() == *definition) same = t;
        if (!same) {
            kept_.push_back(std::make_unique<remote_tool>(*this, l.config, exposed, *definition));
            same = kept_.back().get();
        }
        if (!same->schema_problem().empty())
            problems.push_back("tool `" + original +
                               "`: its input schema is not checked by the gateway (" +
                               same->schema_problem() + "); the server checks it");
        tools.push_back(same);
    }
    l.tools = std::move(tools);
    l.problems = std::move(problems);
    offered_.clear();
    for (const auto& each : links_)
        for (const auto* t : each->tools) offered_.push_back({t, &t->schema(), t->compiled()});
}

net::awaitable<tools::tool_result> hub::call(std::string name, json::object arguments) {
    auto result = co_await net::co_spawn(io_, call_here(std::move(name), std::move(arguments)),
                                         net::use_awaitable);
    co_return result;
}

tools::tool_result hub::call_blocking(const std::string& name, const json::object& arguments) {
    auto done = net::co_spawn(io_, call_here(name, arguments), net::use_future);
    return done.get();
}

net::awaitable<tools::tool_result> hub::call_here(std::string name, json::object arguments) {
    const auto* tool = find(name);
    link* l = nullptr;
    for (auto& each : links_)
        if (tool && each->config.name == tool->server()) l = each.get();
    if (!tool || !l)
        co_return tools::tool_result::failure(tools::code::unknown_tool,
                                              "There is no MCP tool named `" + name + "`.");
    auto server = "the MCP server `" + l->config.name + "`";
    auto unavailable = [&](const std::string& why) {
        return tools::tool_result::failure(
            tools::code::mcp_unavailable,
            "`" + name + "` is unavailable: " + server + " is not connected (" + why +
                "). It is being reconnected; use other tools meanwhile, or tell the user.");
    };
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto session = l->session;
        if (!session || !session->open()) {
            std::string why;
            {
                std::lock_guard lock(mutex_);
                why = l->last_error.empty() ? "it is starting" : l->last_error;
            }
            co_return unavailable(why);
        }
        // Named locals: GCC 12 miscompiles a literal argument in a co_await expression.
        std::string method = "tools/call";
        json::object params{{"name", tool->original_name()}, {"arguments", arguments}};
        auto o =
            co_await session->request(std::move(method), std::move(params), l->config.call_timeout);
        switch (o.what) {
            case outcome::kind::ok: {
                auto result = to_tool_result(o.result, l->config.max_output_bytes);
                result.data["server"] = l->config.name;
                result.data["tool"] = tool->original_name();
                co_return result;
            }
            case outcome::kind::rpc_error:
                co_return tools::tool_result::failure(
                    tools::code::mcp_error, server + " answered `" + tool->original_name() +
                                                "` with an error: " + o.message + " (JSON-RPC " +
                                                std::to_string(o.code) + ")");
            case outcome::kind::timeout:
                co_return tools::tool_result::failure(
                    tools::code::mcp_timeout,
                    "`" + tool->original_name() + "` on " + server + " did not answer within " +
                        std::to_string(l->config.call_timeout.count()) +
                        " ms; the call was cancelled. Try again with a smaller request, or use "
                        "another tool.");
            case outcome::kind::session_gone:
                if (attempt == 0 && l->session == session) {
                    // The server forgot the session (it restarted): initialize again, once.
                    observability::log_info("mcp " + l->config.name + ": " + o.message +
                                            "; initializing again");
                    went_down(*l, o.message);
                    co_await connect(*l);
                    l->wake.cancel();
                    continue;
                }
                co_return unavailable(o.message);
            case outcome::kind::failed:
                if (l->session == session) {
                    went_down(*l, o.message);
                    l->wake.cancel();
                }
                co_return unavailable(o.message);
        }
    }
    co_return unavailable("the session could not be renewed");
}

json::object hub::status_of(const link& l) const {
    json::array tools;
    for (const auto* t : l.tools)
        tools.push_back({{"name", t->spec().name},
                         {"tool", t->original_name()},
                         {"description", t->spec().description},
                         {"read_only", t->read_only()},
                         {"destructive", t->destructive()},
                         {"approval", config::approval_name(t->policy())}});
    json::array problems;
    for (const auto& p : l.problems) problems.push_back(json::string(p));
    json::object out{
        {"name", l.config.name},
        {"transport", l.config.transport == config::mcp_transport::stdio ? "stdio" : "http"},
        {"state", l.state},
        {"protocol_version", l.protocol_version},
        {"server_info", l.server_info},
        {"approval", config::approval_name(l.config.approval)},
        {"tools", std::move(tools)},
        {"problems", std::move(problems)},
        {"last_error", l.last_error},
        {"connects", l.connects}};
    if (l.config.transport == config::mcp_transport::stdio) {
        out["command"] = l.config.command;
        if (l.state == "ready") out["pid"] = l.pid;
    } else
        out["url"] = config::mask_url_password(l.config.url);
    return out;
}

json::object hub::status() const {
    std::lock_guard lock(mutex_);
    json::array servers;
    for (const auto& l : links_) servers.push_back(status_of(*l));
    return {{"servers", std::move(servers)}};
}

net::awaitable<std::optional<json::object>> hub::refresh(std::string server) {
    auto work = [](hub* self, std::string name) -> net::awaitable<std::optional<json::object>> {
        link* l = nullptr;
        for (auto& each : self->links_)
            if (each->config.name == name) l = each.get();
        if (!l) co_return std::nullopt;
        if (l->session) self->went_down(*l, "refreshed by request");
        l->failures = 0;
        l->retry_at = {};
        co_await self->connect(*l);
        l->wake.cancel();
        std::lock_guard lock(self->mutex_);
        co_return self->status_of(*l);
    };
    auto result = co_await net::co_spawn(io_, work(this, std::move(server)), net::use_awaitable);
    co_return result;
}

}  // namespace gateway::mcp
