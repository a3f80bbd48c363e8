#pragma once

#include "gateway/admin/limiter.hpp"
#include "gateway/config/config.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/json/object.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gateway::admin {

// The alert thresholds (percent of `budget`) that a spend going from `before` to `after` crossed:
// those with before < threshold <= after. Exact in integers.
std::vector<unsigned> crossed_thresholds(const std::vector<unsigned>& thresholds,
                                         std::uint64_t budget, std::uint64_t before,
                                         std::uint64_t after);

// Tells when a key's or a team's settled spend crosses a share of its USD budget
// (admin.budget_alerts): a warning in the log for each threshold crossed and, when a webhook is
// set, a JSON event posted to it from a thread of its own (never on the request's path). A
// settle() is one atomic step of the limiter (Redis' INCRBY on every replica), so each crossing is
// seen by one request only: an alert fires once per key or team, period and threshold. A post gets
// `timeout` for all of it (connecting included) and one more try a second later; then the failure
// is logged and the event dropped. Events wait in a bounded queue (past it they are logged as
// dropped). Thread-safe.
class budget_alerts {
public:
    explicit budget_alerts(const config::budget_alerts_config& settings);
    ~budget_alerts();
    budget_alerts(const budget_alerts&) = delete;
    budget_alerts& operator=(const budget_alerts&) = delete;

    // The settings of a reloaded configuration, for the alerts from now on.
    void configure(const config::budget_alerts_config& settings);

    // A settle() of `key`'s request changed its spend as `change` says.
    void observe(const config::virtual_key& key, const spend_change& change);
    // A settle() of a request charged to `team`'s budget changed its spend as `change` says.
    void observe(const config::team_config& team, const spend_change& change);

    // Posts what is queued (each within its timeout) and ends the thread. Idempotent.
    void stop();

    static constexpr std::size_t max_queued = 1000;

private:
    // Whose budget a spend counts against, as an alert names it: "Key `ci`", {"key_id": ...}.
    struct budget_holder {
        std::string named;            // in the text
        boost::json::object members;  // in the event
        std::uint64_t budget_usd_nano;
        config::budget_period period;
    };
    void alert(const budget_holder& holder, const spend_change& change);

    // The settings, and the webhook's TLS context when it is https.
    struct destination {
        config::budget_alerts_config settings;
        std::shared_ptr<boost::asio::ssl::context> tls;
    };
    struct event {
        std::string body;
        std::shared_ptr<const destination> to;
    };
    void run();
    std::shared_ptr<const destination> current() const;

    mutable std::mutex mutex_;
    std::shared_ptr<const destination> destination_;
    std::deque<event> queue_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace gateway::admin
