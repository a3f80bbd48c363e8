#include "gateway/agent/run_registry.hpp"

#include "engine_fixture.hpp"

#include <condition_variable>
#include <mutex>

namespace agent_run_registry_test {

using namespace engine_test;

namespace {

// The registry on an engine thread of its own, beside the fixture's parts; the test's thread
// calls it as a worker would.
struct registry_fixture {
    engine_fixture f;
    agent::system_prompts prompts{{}, gateway::tools::registry::standard()};
    net::io_context engine;
    std::unique_ptr<agent::run_registry> runs;
    std::mutex mutex;
    std::condition_variable woken;
    std::size_t wakes = 0;

    void start() {
        runs = std::make_unique<agent::run_registry>(engine, f.limits, *f.store, *f.journal,
                                                     *f.runner, *f.gate, *f.loop, prompts, f.model);
        runs->start([this](agent::live_run&) -> agent::run_registry::driver {
            return [this](agent::live_run& r) { return f.loop->run(r); };
        });
    }
    ~registry_fixture() {
        if (runs) runs->stop();
    }

    // Waits (bounded) until the run's stored status satisfies `done`, woken by its commits.
    std::string wait_status(const std::string& run_id,
                            const std::function<bool(const std::string&)>& done) {
        auto handle = f.journal->subscribe(run_id, [this](auto) {
            std::lock_guard lock(mutex);
            ++wakes;
            woken.notify_all();
        });
        std::string status;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            std::size_t before;
            {
                std::lock_guard lock(mutex);
                before = wakes;
            }
            auto stored = f.wait(f.store->run_status(run_id));
            status = stored ? std::string(gateway::status_name(*stored)) : "";
            if (done(status)) break;
            std::unique_lock lock(mutex);
            woken.wait_until(lock, deadline, [&] { return wakes != before; });
        }
        f.journal->unsubscribe(run_id, handle);
        return status;
    }
    // Whether the registry let go of every run within 5 s. A run is released after its final
    // commit (so the store may already say "completed") and before its watchers are woken; no
    // event marks the moment itself, so this checks at short intervals.
    bool released_all() {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (runs->live_runs() != 0) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::unique_lock lock(mutex);
            woken.wait_for(lock, std::chrono::milliseconds(5));
        }
        return true;
    }
    std::string run_of(const agent::started_run& started) {
        BOOST_TEST_REQUIRE(std::holds_alternative<std::string>(started));
        return std::get<std::string>(started);
    }
    gateway::store::chat_record chat() { return *f.wait(f.store->chat("chat_1")); }
};

bool final(const std::string& s) {
    auto status = gateway::parse_run_status(s);
    return status && gateway::is_final(*status);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_registry_suite)

BOOST_AUTO_TEST_CASE(a_chat_run_is_admitted_alone_and_runs_to_its_end) {
    registry_fixture r;
    r.f.model.replies = {{"", "stop", "", true, false}};  // the first run hangs in its model call
    r.start();
    auto first = r.run_of(r.f.wait(r.runs->start_chat_run(r.chat(), "hello")));
    auto second = r.f.wait(r.runs->start_chat_run(r.chat(), "again"));
    BOOST_TEST_REQUIRE(std::holds_alternative<gateway::refusal>(second));
    BOOST_TEST((std::get<gateway::refusal>(second).code == gateway::errc::run_in_progress));
    BOOST_TEST(r.runs->live_runs() == 1u);

    BOOST_TEST(!r.f.wait(r.runs->cancel(first)));
    BOOST_TEST(r.wait_status(first, final) == "cancelled");
    // The ended status is stored a moment before the registry lets the run go: a cancel in
    // between still finds it live. Wait for that (bounded) so the next cancel meets an ended run.
    auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (r.runs->live_runs() != 0 && std::chrono::steady_clock::now() < gone_by)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    BOOST_TEST(r.runs->live_runs() == 0u);
    auto again = r.f.wait(r.runs->cancel(first));
    BOOST_TEST((again && again->code == gateway::errc::run_ended));
    BOOST_TEST((r.f.wait(r.runs->cancel("run_nope"))->code == gateway::errc::not_found));

    // The chat is free again: the next run is admitted and answers.
    r.f.model.replies = {{"Hello."}};
    auto next = r.run_of(r.f.wait(r.runs->start_chat_run(r.chat(), "hello again")));
    BOOST_TEST(r.wait_status(next, final) == "completed");
    BOOST_TEST(r.f.wait(r.f.store->run(next))->output == "Hello.");
    // The model was sent the chat's earlier turns that fit, and the new message.
    auto sent = r.f.model.messages(1);
    BOOST_TEST(sent.back().at("content").as_string() == "hello again");
    BOOST_TEST(r.released_all());
}

BOOST_AUTO_TEST_CASE(decisions_reach_the_run_or_say_why_not) {
    registry_fixture r;
    r.f.model.replies = {{call("append_file", {{"path", "log.txt"}, {"content", "x\n"}})},
                         {"Appended."}};
    r.start();
    auto run = r.run_of(r.f.wait(r.runs->start_chat_run(r.chat(), "append")));
    BOOST_TEST(r.wait_status(run, [](auto& s) { return s == "awaiting_approval"; }) ==
               "awaiting_approval");
    auto calls = r.f.wait(r.f.store->tool_calls(run));
    BOOST_TEST_REQUIRE(calls.size() == 1u);
    auto unknown = r.f.wait(r.runs->decide(run, "call_nope", {true, {}, "", false}));
    BOOST_TEST((unknown && unknown->code == gateway::errc::not_found));
    auto no_run = r.f.wait(r.runs->decide("run_nope", calls[0].id, {true, {}, "", false}));
    BOOST_TEST((no_run && no_run->code == gateway::errc::not_found));
    BOOST_TEST(!r.f.wait(r.runs->decide(run, calls[0].id, {true, {}, "", false})));
    BOOST_TEST(r.wait_status(run, final) == "completed");
    auto late = r.f.wait(r.runs->decide(run, calls[0].id, {true, {}, "", false}));
    BOOST_TEST((late && late->code == gateway::errc::call_not_pending));
    BOOST_TEST(late->message.find("it is done") != std::string::npos, late->message);
    BOOST_TEST(text_of(r.f.workspace / "log.txt") == "start\nx\n");
}

BOOST_AUTO_TEST_CASE(runs_awaiting_approval_are_resumed_at_start) {
    registry_fixture r;
    // A run stored as a stopped gateway left it: asked for approval of an append.
    agent::run_state state;
    agent::pending_call p;
    p.call_id = "call_stored";
    p.tool = "append_file";
    p.parameters = {{"path", "log.txt"}, {"content", "resumed\n"}};
    p.asked = true;
    p.requested_at = gateway::now_ms();
    state.pending = p;
    state.turn_start = 0;
    gateway::store::write_batch b;
    b.runs.push_back({"run_stored", "chat_1", gateway::run_status::awaiting_approval, 1, 10, "", "",
                      agent::serialize_state(state), 1, 1});
    // The conversation as an older build stored it (format 1): read on.
    b.run_messages.push_back({"run_stored", 0, "user", "append something", 1});
    b.tool_calls.push_back({"call_stored", "run_stored", 1, "append_file",
                            json::serialize(p.parameters),
                            gateway::tool_call_status::awaiting_approval, "", 1, ""});
    b.events.push_back({"run_stored", 1, "run.started", "{}", 1});
    r.f.wait(r.f.store->commit(std::move(b)));
    r.f.model.replies = {{"Appended."}};
    r.start();
    BOOST_TEST(r.runs->live_runs() == 1u);
    BOOST_TEST(!r.f.wait(r.runs->decide("run_stored", "call_stored", {true, {}, "", false})));
    BOOST_TEST(r.wait_status("run_stored", final) == "completed");
    BOOST_TEST(text_of(r.f.workspace / "log.txt") == "start\nresumed\n");
    // Its events went on after the stored one.
    auto events = r.f.wait(r.f.store->events_after("run_stored", 0, 100, SIZE_MAX));
    BOOST_TEST(events.at(1).seq == 2);
    BOOST_TEST(events.at(1).type == "approval.resolved");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_run_registry_test
