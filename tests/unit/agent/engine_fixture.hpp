#pragma once

// The engine's parts in memory for unit tests: a real SQLite store in a temporary folder, a
// temporary workspace, the standard tools, and a scripted model port instead of an upstream. The
// test's io_context plays the engine's thread: run() drives one coroutine to its end on it.

#include "gateway/agent/agent_loop.hpp"
#include "gateway/agent/approval_gate.hpp"
#include "gateway/agent/live_run.hpp"
#include "gateway/agent/model_port.hpp"
#include "gateway/agent/run_journal.hpp"
#include "gateway/agent/system_prompts.hpp"
#include "gateway/agent/tool_runner.hpp"
#include "gateway/ids.hpp"
#include "gateway/providers/adapter.hpp"
#include "gateway/store/sqlite_store.hpp"
#include "gateway/tools/registry.hpp"
#include "gateway/tools/workspace_roots.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

namespace engine_test {

namespace fs = std::filesystem;
namespace net = boost::asio;
namespace json = boost::json;
namespace agent = gateway::agent;
namespace store = gateway::store;
namespace tools = gateway::tools;
namespace config = gateway::config;

// One scripted reply of the model.
struct scripted {
    std::string content;
    std::string finish_reason = "stop";  // or "length"
    std::string error;                   // set: the call fails with this
    bool hang = false;                   // the call waits until it is cancelled
    bool retry = false;  // the port reports a retry (awaiting the hook) before answering
    // Native turns: the calls of the reply, after `content` as its text.
    std::vector<gateway::providers::tool_call> calls;
    // What the call is charged (the port settles it; unknown usage and unpriced by default).
    gateway::providers::usage used;
    gateway::request_cost cost;
};

// A model port that answers from a script and keeps every request, and its body as an OpenAI
// upstream would be sent it.
class scripted_model final : public agent::model_port {
public:
    std::deque<scripted> replies;
    std::vector<gateway::providers::request> requests;
    std::vector<std::string> bodies;
    config::upstream_config upstream;

    net::awaitable<agent::model_result<agent::model_answer>> converse(
        gateway::providers::request request, std::string, agent::call_canceller& cancel,
        agent::retry_hook on_retry, agent::text_hook = {},
        const gateway::observability::trace_context* = nullptr) override {
        namespace pv = gateway::providers;
        std::string refused;
        bodies.push_back(pv::adapter_for(pv::provider::openai).encode(request, refused));
        requests.push_back(std::move(request));
        if (replies.empty())
            co_return agent::model_failure{gateway::errc::upstream_bad_response, false,
                                           "script exhausted"};
        auto next = replies.front();
        replies.pop_front();
        if (next.retry && on_retry) {
            agent::model_retry retry{1, 3, "upstream answered 429", std::chrono::milliseconds(5)};
            co_await on_retry(retry);
        }
        if (next.hang) {
            auto executor = co_await net::this_coro::executor;
            net::steady_timer wait(executor, std::chrono::steady_clock::time_point::max());
            cancel.on_cancel([&wait] { wait.cancel(); });
            if (!cancel.cancelled()) {
                [[maybe_unused]] auto [ec] =
                    co_await wait.async_wait(net::as_tuple(net::use_awaitable));
            }
            cancel.on_cancel(nullptr);
            co_return agent::model_failure{gateway::errc::run_ended, true, "cancelled"};
        }
        if (!next.error.empty())
            co_return agent::model_failure{gateway::errc::upstream_bad_response, false, next.error};
        agent::settled_call settled{upstream.name, requests.back().model, next.used, next.cost};
        pv::reply reply;
        if (!next.content.empty()) reply.content.parts.push_back(pv::part::of_text(next.content));
        for (const auto& c : next.calls) reply.content.parts.push_back(pv::part::of_call(c));
        reply.why = !next.calls.empty()              ? pv::finish::tool_calls
                    : next.finish_reason == "length" ? pv::finish::length
                                                     : pv::finish::stop;
        co_return agent::model_answer{std::move(reply), std::move(settled)};
    }
    config::upstream_config upstream_for(std::string_view) const override { return upstream; }
    void shutdown() override {}

    // The messages of request `n` as Chat Completions has them (the system prompt first).
    json::array messages(std::size_t n) const {
        return json::parse(bodies.at(n)).at("messages").as_array();
    }
};

inline std::string text_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write(const fs::path& p, std::string_view text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

inline std::string call(std::string_view tool, json::object parameters, bool terminate = false) {
    return json::serialize(json::object{
        {"tool", tool}, {"parameters", std::move(parameters)}, {"terminate", terminate}});
}

struct engine_fixture {
    fs::path base;
    fs::path workspace;
    config::context_config limits;
    const tools::registry& tools = tools::registry::standard();
    std::unique_ptr<store::sqlite_store> store;
    std::unique_ptr<tools::workspace_roots> roots;
    std::unique_ptr<agent::run_journal> journal;
    std::unique_ptr<agent::tool_runner> runner;
    std::unique_ptr<agent::approval_gate> gate;
    scripted_model model;
    std::unique_ptr<agent::agent_loop> loop;
    net::io_context io;

    engine_fixture() {
        char pattern[] = "/tmp/contextgate-engine-XXXXXX";
        base = ::mkdtemp(pattern);
        workspace = base / "ws";
        write(workspace / "README.md", "# Demo\n\nThis is teh readme.\n");
        write(workspace / "log.txt", "start\n");
        auto opened = store::sqlite_store::open((base / "contextgate.db").string());
        BOOST_TEST_REQUIRE(static_cast<bool>(opened), opened.error);
        store = std::move(*opened.value);
        roots = std::make_unique<tools::workspace_roots>(std::vector<std::string>{workspace});
        journal = std::make_unique<agent::run_journal>(*store, limits.event_excerpt_bytes);
        runner = std::make_unique<agent::tool_runner>(tools, *roots, *store, *journal);
        gate = std::make_unique<agent::approval_gate>(limits, tools, *journal, *runner);
        loop = std::make_unique<agent::agent_loop>(limits, tools, model, *gate, *journal);
        wait(store->insert_chat({"chat_1", 1, "coding", "m", workspace.string(), "editor"}));
    }
    ~engine_fixture() {
        runner->stop();
        store.reset();
        fs::remove_all(base);
    }

    // Runs the test's loop until one coroutine has ended (other work may still be pending, such
    // as a run waiting for approval), and returns its result.
    template <class T>
    T wait(net::awaitable<T> work) {
        auto done = net::co_spawn(io, std::move(work), net::use_future);
        io.restart();
        while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
        return done.get();
    }

    // Runs the agent loop as the run's driver does: until the loop returns and the commits it
    // sent without waiting (run_journal::send) have landed.
    void run_loop(agent::live_run& run) { wait(drive_loop(run)); }
    net::awaitable<void> drive_loop(agent::live_run& run) {
        co_await loop->run(run);
        co_await journal->settle(run);
    }

    // A new run of chat_1, stored with its run.started event, its workspace open.
    std::shared_ptr<agent::live_run> new_run(std::string message = "do it") {
        auto run = std::make_shared<agent::live_run>(io.get_executor());
        run->chat = *wait(store->chat("chat_1"));
        run->record = {gateway::new_id("run"),
                       "chat_1",
                       gateway::run_status::running,
                       0,
                       10,
                       "",
                       "",
                       "",
                       1,
                       1};
        run->system_prompt = "You are a test.";
        run->state.turn_start = 0;
        run->conversation.push_back(agent::user_text(std::move(message)));
        BOOST_TEST_REQUIRE(!runner->open_workspace(*run));
        auto b = journal->begin(*run);
        b.event("run.started", {});
        wait(journal->checkpoint(*run, std::move(b)));
        return run;
    }

    // `r` as an OpenAI upstream would be sent it.
    static std::string body_of(const gateway::providers::request& r) {
        namespace pv = gateway::providers;
        std::string refused;
        return pv::adapter_for(pv::provider::openai).encode(r, refused);
    }

    // The run's stored events: their types, and the data of each.
    std::vector<json::object> events(const std::string& run_id) {
        std::vector<json::object> out;
        for (const auto& e : wait(store->events_after(run_id, 0, 10000, SIZE_MAX)))
            out.push_back(json::parse(e.data).as_object());
        return out;
    }
    std::vector<std::string> types(const std::string& run_id) {
        std::vector<std::string> out;
        for (const auto& e : events(run_id)) out.emplace_back(e.at("type").as_string());
        return out;
    }
};

}  // namespace engine_test
