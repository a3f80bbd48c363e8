#include "gateway/agent/run_journal.hpp"

#include "engine_fixture.hpp"

#include <algorithm>

namespace agent_run_journal_test {

using namespace engine_test;

BOOST_AUTO_TEST_SUITE(run_journal_suite)

BOOST_AUTO_TEST_CASE(events_are_numbered_excerpted_and_stored_before_watchers_wake) {
    engine_fixture f;
    f.limits.event_excerpt_bytes = 16;  // not read by the fixture's journal: make one
    agent::run_journal journal(*f.store, 16);
    auto run = f.new_run();
    std::vector<std::size_t> seen_when_woken;
    auto handle = journal.subscribe(run->record.id, [&](auto) {
        // Woken after the commit: the store already has the events.
        net::co_spawn(f.io, f.store->events_after(run->record.id, 0, 100, SIZE_MAX),
                      [&](std::exception_ptr, std::vector<store::event_record> events) {
                          seen_when_woken.push_back(events.size());
                      });
    });
    auto b = journal.begin(*run);
    b.event("tool.call",
            {{"call_id", "call_1"}, {"parameters", {{"content", std::string(40, 'x')}}}});
    b.event("note", {{"text", "short"}});
    f.wait(journal.record(*run, std::move(b)));
    f.io.restart();
    f.io.run();
    BOOST_TEST_REQUIRE(seen_when_woken.size() == 1u);
    BOOST_TEST(seen_when_woken[0] == 3u);  // run.started and the two
    auto events = f.events(run->record.id);
    BOOST_TEST(events[1].at("type").as_string() == "tool.call");
    BOOST_TEST(events[1].at("parameters").at("content").as_string().size() == 16u);
    BOOST_TEST(events[1].at("truncated").as_array().at(0).as_string() == "/parameters/content");
    BOOST_TEST(events[1].at("full").as_string() ==
               "/context/runs/" + run->record.id + "/calls/call_1");
    BOOST_TEST(!events[2].contains("truncated"));
    BOOST_TEST(run->last_event == 3);
    journal.unsubscribe(run->record.id, handle);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_stores_the_state_and_each_message_once) {
    engine_fixture f;
    auto run = f.new_run("first");
    run->state.retries = 2;
    run->conversation.push_back(agent::assistant_text("second"));
    f.wait(f.journal->checkpoint(*run, f.journal->begin(*run)));
    run->conversation.push_back(agent::user_text("third"));
    f.wait(f.journal->checkpoint(*run, f.journal->begin(*run)));
    auto messages = f.wait(f.store->run_messages(run->record.id));
    BOOST_TEST_REQUIRE(messages.size() == 3u);
    BOOST_TEST(agent::message_of_row(messages[2]).value().text() == "third");
    auto stored = f.wait(f.store->run(run->record.id));
    auto state = agent::parse_state(stored->state);
    BOOST_TEST_REQUIRE(state.has_value());
    BOOST_TEST(state->retries == 2);
}

BOOST_AUTO_TEST_CASE(the_end_is_stored_the_chat_released_then_watchers_woken) {
    engine_fixture f;
    auto run = f.new_run("question");
    run->end(gateway::run_status::completed, "The answer.", "");
    std::vector<std::string> order;
    auto handle = f.journal->subscribe(run->record.id, [&](auto) { order.push_back("woken"); });
    f.wait(f.journal->finish(*run, [&] { order.push_back("released"); }));
    std::vector<std::string> expected{"released", "woken"};
    BOOST_TEST(order == expected, boost::test_tools::per_element());
    auto stored = f.wait(f.store->run(run->record.id));
    BOOST_TEST((stored->status == gateway::run_status::completed));
    BOOST_TEST(stored->output == "The answer.");
    auto types = f.types(run->record.id);
    std::vector<std::string> events{"run.started", "message", "run.completed"};
    BOOST_TEST(types == events, boost::test_tools::per_element());
    auto chat = f.wait(f.store->messages("chat_1", 0, 10));
    BOOST_TEST(chat.messages.back().content == "The answer.");
    f.journal->unsubscribe(run->record.id, handle);
}

BOOST_AUTO_TEST_CASE(a_sent_commit_lands_and_wakes_its_watchers_before_the_next_one) {
    engine_fixture f;
    auto run = f.new_run();
    std::vector<std::vector<std::string>> woken;
    auto handle = f.journal->subscribe(run->record.id, [&](agent::run_journal::committed events) {
        std::vector<std::string> types;
        for (const auto& e : *events) types.push_back(e.type);
        woken.push_back(types);
    });
    auto sent = f.journal->begin(*run);
    sent.event("model.requested", {});
    run->state.retries = 3;
    f.wait(f.journal->send(*run, std::move(sent), true));
    // Taken when sent: what the run does next is not in that commit.
    run->state.retries = 4;
    auto next = f.journal->begin(*run);
    next.event("tool.call", {});
    f.wait(f.journal->record(*run, std::move(next)));
    std::vector<std::vector<std::string>> expected{{"model.requested"}, {"tool.call"}};
    BOOST_TEST_REQUIRE(woken.size() == 2u);
    BOOST_TEST(woken[0] == expected[0], boost::test_tools::per_element());
    BOOST_TEST(woken[1] == expected[1], boost::test_tools::per_element());
    std::vector<std::string> types{"run.started", "model.requested", "tool.call"};
    BOOST_TEST(f.types(run->record.id) == types, boost::test_tools::per_element());
    auto state = agent::parse_state(f.wait(f.store->run(run->record.id))->state);
    BOOST_TEST_REQUIRE(state.has_value());
    BOOST_TEST(state->retries == 3);
    f.journal->unsubscribe(run->record.id, handle);
}

BOOST_AUTO_TEST_CASE(a_sent_commit_that_fails_fails_the_runs_commits_until_forgotten) {
    engine_fixture f;
    auto run = f.new_run();
    // The next event takes run.started's number: the store refuses the commit.
    run->last_event = 0;
    auto sent = f.journal->begin(*run);
    sent.event("model.requested", {});
    // Returns: nothing waited for the store.
    f.wait(f.journal->send(*run, std::move(sent), false));
    auto next = f.journal->begin(*run);
    next.event("tool.call", {});
    BOOST_CHECK_THROW(f.wait(f.journal->record(*run, std::move(next))), store::store_error);
    // It stays with the run: whoever commits next (an announcement, the driver) learns of it.
    BOOST_CHECK_THROW(f.wait(f.journal->settle(*run)), store::store_error);
    auto announced = f.journal->begin(*run);
    announced.event("session.resolved", {});
    BOOST_CHECK_THROW(f.wait(f.journal->record(*run, std::move(announced))), store::store_error);
    // Once the driver has handled it, the run's end can still be recorded.
    f.wait(f.journal->forget_failure(*run));
    f.wait(f.journal->settle(*run));
    auto after = f.journal->begin(*run);
    after.event("note", {});
    f.wait(f.journal->record(*run, std::move(after)));
    std::vector<std::string> types{"run.started", "note"};
    BOOST_TEST(f.types(run->record.id) == types, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_commit_queued_behind_a_failed_one_is_not_made) {
    engine_fixture f;
    auto run = f.new_run();
    run->last_event = 0;  // the first event below takes run.started's number
    auto failing = f.journal->begin(*run);
    failing.event("model.requested", {});
    f.wait(f.journal->send(*run, std::move(failing), false));
    auto queued = f.journal->begin(*run);
    queued.event("tool.call", {});  // a number of its own: storable alone
    f.wait(f.journal->send(*run, std::move(queued), true));
    BOOST_CHECK_THROW(f.wait(f.journal->settle(*run)), store::store_error);
    std::vector<std::string> types{"run.started"};
    BOOST_TEST(f.types(run->record.id) == types, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_commit_waits_once_enough_are_on_their_way) {
    engine_fixture f;
    auto run = f.new_run();
    std::vector<std::shared_ptr<agent::commit_in_flight>> sent;
    std::vector<std::string> types{"run.started"};
    for (std::size_t i = 0; i <= agent::run_journal::max_commits_on_way; ++i) {
        types.push_back("event." + std::to_string(i));
        auto b = f.journal->begin(*run);
        b.event(types.back(), {});
        f.wait(f.journal->send(*run, std::move(b), false));
        sent.push_back(run->on_way.back());
        auto unfinished = std::count_if(run->on_way.begin(), run->on_way.end(),
                                        [](const auto& c) { return !c->finished; });
        BOOST_TEST(static_cast<std::size_t>(unfinished) <= agent::run_journal::max_commits_on_way);
    }
    // The last one was sent only after the first had landed.
    BOOST_TEST(sent.front()->finished);
    f.wait(f.journal->settle(*run));
    BOOST_TEST(run->on_way.empty());
    for (const auto& s : sent) BOOST_TEST(s->finished);
    BOOST_TEST(f.types(run->record.id) == types, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace agent_run_journal_test
