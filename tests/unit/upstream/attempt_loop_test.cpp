#include "gateway/upstream/attempt_loop.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <deque>
#include <string>
#include <vector>

namespace upstream_attempt_loop_test {

using namespace gateway::upstream;
namespace config = gateway::config;
using namespace std::chrono_literals;

namespace {

using end = attempt_outcome::end;

config::route_config route_of(std::vector<std::string> targets, unsigned max_attempts = 3) {
    config::route_config r;
    r.model = "smart";
    r.max_attempts = max_attempts;
    for (std::size_t i = 0; i < targets.size(); ++i) r.targets.push_back({targets[i], "", 1, i});
    return r;
}

// A face that answers each attempt from a script and writes down what the loop asked of it.
class scripted_face final : public attempt_face {
public:
    explicit scripted_face(std::deque<attempt_outcome> script) : script_(std::move(script)) {}

    std::vector<std::string> told;  // "attempt up0 last", "again up0 500ms", "fall_back up1"
    bool stop_in_wait = false;

    bool stopped() const override { return stopped_; }
    net::awaitable<bool> again(const config::route_target& t, config::duration wait) override {
        told.push_back("again " + t.upstream + " " + std::to_string(wait.count()) + "ms");
        if (stop_in_wait) stopped_ = true;
        co_return !stopped_;
    }
    net::awaitable<void> fall_back(const config::route_target& t) override {
        told.push_back("fall_back " + t.upstream);
        co_return;
    }
    net::awaitable<attempt_outcome> attempt(const config::route_target& t,
                                            const attempt_terms& terms) override {
        told.push_back("attempt " + t.upstream + (terms.last ? " last" : "") +
                       (terms.may_move ? " may_move" : ""));
        BOOST_TEST_REQUIRE(!script_.empty());
        auto out = script_.front();
        script_.pop_front();
        co_return out;
    }

private:
    std::deque<attempt_outcome> script_;
    bool stopped_ = false;
};

attempts_end run(attempt_plan& plan, attempt_face& face) {
    boost::asio::io_context io;
    auto done = boost::asio::co_spawn(io, run_attempts(plan, face), boost::asio::use_future);
    io.run();
    return done.get();
}

attempt_outcome held(verdict v, std::optional<config::duration> retry_after = {}) {
    return {end::held, v, retry_after};
}

const attempt_outcome success{end::committed, verdict::success, std::nullopt, 10ms};

}  // namespace

BOOST_AUTO_TEST_SUITE(upstream_attempt_loop)

BOOST_AUTO_TEST_CASE(a_held_failure_falls_back_and_a_success_restores_health) {
    health_board h({5s, 60s});
    auto r = route_of({"up0", "up1"});
    attempt_plan plan(r, h);
    scripted_face face({held(verdict::failed), success});
    BOOST_TEST((run(plan, face) == attempts_end::committed));
    BOOST_TEST(
        face.told == (std::vector<std::string>{"attempt up0", "fall_back up1", "attempt up1"}),
        boost::test_tools::per_element());
    BOOST_TEST((h.of(0, "smart")->now == health_board::state::cooled));
    BOOST_TEST((h.of(1, "smart")->now == health_board::state::healthy));
    BOOST_TEST(h.of(1, "smart")->in_flight == 0);
}

BOOST_AUTO_TEST_CASE(the_same_target_again_waits_and_the_last_attempt_is_told_so) {
    auto r = route_of({"up0"}, 2);
    attempt_plan plan(r);
    scripted_face face({held(verdict::declined, config::duration(1500ms)),
                        {end::committed, verdict::client_error}});
    BOOST_TEST((run(plan, face) == attempts_end::committed));
    BOOST_TEST(face.told == (std::vector<std::string>{"attempt up0", "again up0 1500ms",
                                                      "attempt up0 last"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_context_window_refusal_moves_once_to_on_context_window) {
    health_board h({5s, 60s});
    auto r = route_of({"up0", "up1"});
    r.on_context_window.push_back({"big", "", 1, 2});
    attempt_plan plan(r, h);
    scripted_face face({held(verdict::context_window), held(verdict::context_window)});
    BOOST_TEST((run(plan, face) == attempts_end::exhausted));
    // The first refusal moves to `big`; there a second cannot move again (may_move is off), and
    // nothing else is left; up1 is never tried. No target's health changed.
    BOOST_TEST(face.told == (std::vector<std::string>{"attempt up0 may_move", "fall_back big",
                                                      "attempt big"}),
               boost::test_tools::per_element());
    BOOST_TEST((h.of(0, "smart")->now == health_board::state::healthy));
}

BOOST_AUTO_TEST_CASE(a_target_that_cannot_take_the_request_is_skipped_once) {
    auto r = route_of({"up0", "up1"}, 3);
    health_board h({5s, 60s});
    attempt_plan plan(r, h);
    scripted_face face({{end::skipped}, held(verdict::failed), {end::skipped}});
    BOOST_TEST((run(plan, face) == attempts_end::exhausted));
    // up0 skipped, up1 failed: the third attempt would be up0 again, which cannot take it.
    BOOST_TEST(
        face.told == (std::vector<std::string>{"attempt up0", "fall_back up1", "attempt up1"}),
        boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_request_that_stops_in_a_wait_makes_no_further_attempt) {
    auto r = route_of({"up0"}, 3);
    attempt_plan plan(r);
    scripted_face face({held(verdict::failed), success});
    face.stop_in_wait = true;
    BOOST_TEST((run(plan, face) == attempts_end::stopped));
    BOOST_TEST(face.told == (std::vector<std::string>{"attempt up0", "again up0 500ms"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace upstream_attempt_loop_test
