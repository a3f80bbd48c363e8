#include "gateway/workflows/runner.hpp"

#include "tests/unit/agent/engine_fixture.hpp"

#include <condition_variable>
#include <mutex>

namespace workflows_runner_test {

using namespace engine_test;
namespace workflows = gateway::workflows;

namespace {

// The shipped workflows run by the workflow runner over a run registry on its own engine thread.
struct runner_fixture {
    engine_fixture f;
    agent::system_prompts prompts{{}, gateway::tools::registry::standard()};
    workflows::registry definitions{CONTEXTGATE_SOURCE_DIR "/workflows",
                                    gateway::tools::registry::standard(), false};
    net::io_context engine;
    std::unique_ptr<agent::run_registry> runs;
    std::unique_ptr<workflows::runner> runner;

    runner_fixture() { BOOST_TEST_REQUIRE(definitions.reload().empty()); }
    void start() {
        runs = std::make_unique<agent::run_registry>(engine, f.limits, *f.store, *f.journal,
                                                     *f.runner, *f.gate, *f.loop, prompts, f.model);
        runner = std::make_unique<workflows::runner>(f.limits, definitions, f.tools, *runs, *f.loop,
                                                     *f.gate, *f.journal, prompts, f.model);
        runs->start([this](agent::live_run& r) { return runner->resume(r); });
    }
    ~runner_fixture() {
        if (runs) runs->stop();
    }
    std::shared_ptr<const workflows::workflow> definition(std::string_view id) {
        auto all = definitions.all();
        return {all, workflows::registry::find(all, id)};
    }
    // Waits (bounded) for the run's final event, woken by its commits.
    std::vector<json::object> run_to_end(const std::string& run_id) {
        std::mutex mutex;
        std::condition_variable woken;
        std::size_t wakes = 0;
        auto handle = f.journal->subscribe(run_id, [&](auto) {
            std::lock_guard lock(mutex);
            ++wakes;
            woken.notify_all();
        });
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            std::size_t before;
            {
                std::lock_guard lock(mutex);
                before = wakes;
            }
            auto status = f.wait(f.store->run_status(run_id));
            if (status && gateway::is_final(*status)) break;
            std::unique_lock lock(mutex);
            woken.wait_until(lock, deadline, [&] { return wakes != before; });
        }
        f.journal->unsubscribe(run_id, handle);
        return f.events(run_id);
    }
};

std::vector<std::string> types(const std::vector<json::object>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.emplace_back(e.at("type").as_string());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(workflow_runner_suite)

BOOST_AUTO_TEST_CASE(a_tool_step_and_a_prompt_step_give_the_workflows_output) {
    runner_fixture r;
    r.f.model.replies = {{"README.md says hello, with a typo."}};
    r.start();
    auto chat = *r.f.wait(r.f.store->chat("chat_1"));
    auto started = r.f.wait(
        r.runner->start(chat, r.definition("explain_file"),
                        json::object{{"path", "README.md"}, {"audience", "newcomer"}}, ""));
    BOOST_TEST_REQUIRE(std::holds_alternative<std::string>(started));
    auto events = r.run_to_end(std::get<std::string>(started));
    std::vector<std::string> expected{"run.started",     "step.started",   "tool.call",
                                      "tool.result",     "step.completed", "step.started",
                                      "model.requested", "model.replied",  "step.completed",
                                      "message",         "run.completed"};
    BOOST_TEST(types(events) == expected, boost::test_tools::per_element());
    BOOST_TEST(events.back().at("output").as_string() == "README.md says hello, with a typo.");
    // The prompt step was rendered with the tool step's output.
    auto prompt = r.f.model.messages(0).back().at("content").as_string();
    BOOST_TEST(std::string(prompt).find("teh readme") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(free_text_is_turned_into_parameters_first) {
    runner_fixture r;
    r.f.model.replies = {{R"({"path": "README.md", "audience": "maintainer"})"}, {"Explained."}};
    r.start();
    auto chat = *r.f.wait(r.f.store->chat("chat_1"));
    auto started = r.f.wait(r.runner->start(chat, r.definition("explain_file"), std::nullopt,
                                            "explain README.md to a maintainer"));
    auto events = r.run_to_end(std::get<std::string>(started));
    BOOST_TEST(events.back().at("type").as_string() == "run.completed");
    const json::object* parameters = nullptr;
    for (const auto& e : events)
        if (e.at("type").as_string() == "workflow.parameters") parameters = &e;
    BOOST_TEST_REQUIRE(parameters);
    BOOST_TEST(parameters->at("parameters").at("audience").as_string() == "maintainer");
}

BOOST_AUTO_TEST_CASE(a_step_that_fails_fails_the_run_with_its_name) {
    runner_fixture r;
    r.start();
    auto chat = *r.f.wait(r.f.store->chat("chat_1"));
    auto started = r.f.wait(
        r.runner->start(chat, r.definition("explain_file"),
                        json::object{{"path", "missing.md"}, {"audience", "newcomer"}}, ""));
    auto events = r.run_to_end(std::get<std::string>(started));
    BOOST_TEST(events.back().at("type").as_string() == "run.failed");
    auto error = std::string(events.back().at("error").as_string());
    BOOST_TEST(error.find("Step `read`") == 0u, error);
    BOOST_TEST(error.find("NOT_FOUND") != std::string::npos, error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace workflows_runner_test
