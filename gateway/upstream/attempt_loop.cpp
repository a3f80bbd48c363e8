#include "gateway/upstream/attempt_loop.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>

namespace gateway::upstream {

net::awaitable<attempts_end> run_attempts(attempt_plan& plan, attempt_face& face) {
    co_await net::this_coro::throw_if_cancelled(false);
    using end = attempt_outcome::end;
    // Targets that cannot take the request: when the plan offers one again, none is left that
    // can (the plan offers untried targets first).
    boost::container::small_vector<const config::route_target*, 8> skipped;
    const config::route_target* previous = nullptr;
    bool moved = false;  // to on_context_window, once
    for (;;) {
        if (face.stopped()) co_return attempts_end::stopped;
        // The first target at the plan's own time (made just before: a reading of the clock
        // less a request), the later ones at their own.
        const auto* target = plan.next(previous ? clock::now() : plan.started());
        if (!target) co_return attempts_end::exhausted;
        if (std::find(skipped.begin(), skipped.end(), target) != skipped.end()) {
            plan.abandoned();
            co_return attempts_end::exhausted;
        }
        if (target == previous) {
            auto wait = plan.backoff();
            bool going_on = co_await face.again(*target, wait);
            if (!going_on) {
                plan.abandoned();
                co_return attempts_end::stopped;
            }
        } else if (previous) {
            co_await face.fall_back(*target);
        }
        previous = target;
        attempt_terms terms;
        terms.last = plan.attempts() >= static_cast<int>(plan.route().max_attempts);
        terms.may_move = !moved && !plan.route().on_context_window.empty() && !terms.last;
        auto outcome = co_await face.attempt(*target, terms);
        switch (outcome.how) {
            case end::skipped:
                plan.abandoned();
                skipped.push_back(target);
                continue;
            case end::stopped:
                plan.abandoned();
                co_return attempts_end::stopped;
            case end::held:
                if (outcome.judged == verdict::context_window) {
                    // Too long for this model: the route's on_context_window targets take it,
                    // once; after that no other target would.
                    plan.abandoned();
                    if (!terms.may_move) co_return attempts_end::exhausted;
                    moved = true;
                    plan.to_context_window_targets();
                    continue;
                }
                plan.judged(outcome.judged, outcome.retry_after, outcome.error);
                continue;
            case end::committed:
                if (outcome.judged == verdict::success)
                    plan.succeeded(outcome.first_byte);
                else
                    plan.judged(outcome.judged, outcome.retry_after, outcome.error);
                co_return attempts_end::committed;
        }
    }
}

}  // namespace gateway::upstream
