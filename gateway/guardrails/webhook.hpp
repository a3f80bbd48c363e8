#pragma once

// Policy webhooks (docs/operations.md "Guardrails"): a guardrail with `webhook: {url, timeout,
// fail}` has an HTTP service of the team's own (moderation, DLP) decide on a text. It is POSTed
// {"stage", "text", "model", "key"} and answers {"action": "allow"|"block"|"mask", "reason",
// "spans": [[begin, end], …]} (byte offsets in `text`). A call that does not answer in `timeout`
// (or fails, or answers something else) is decided by `fail`: open allows, closed blocks. A
// circuit breaker stops calling a webhook that failed breaker_failures times in a row for
// breaker_open_for; its `fail` decides meanwhile, and one call is tried again after that. An
// https:// webhook is verified against the system's CA store, as budget alerts' webhook is.
#include "gateway/config/config.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gateway::guardrails {

namespace net = boost::asio;

inline constexpr int breaker_failures = 5;
inline constexpr std::chrono::seconds breaker_open_for{30};

struct webhook_answer {
    enum class action { allow, block, mask };
    action what = action::allow;
    std::string reason;  // the webhook's, or why it was not asked / did not answer
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // mask: in order, within the text
    bool answered = false;  // false: `fail` decided (a failure, a timeout, an open breaker)
};

// The webhooks of one configuration generation, with a breaker each (by guardrail name).
// Thread-safe: ask() may run on any number of workers at once.
class webhooks {
public:
    // Makes the TLS context of each https:// webhook among `guardrails` once; one that cannot be
    // made is logged, and its calls fail (`fail` decides).
    explicit webhooks(const std::vector<config::guardrail_config>& guardrails = {});

    // Asks `g`'s webhook about `text` (`g.webhook` must be set), on a new connection closed
    // after it.
    net::awaitable<webhook_answer> ask(const config::guardrail_config& g,
                                       config::guardrail_stage stage, std::string_view text,
                                       std::string_view model, std::string_view key);

    // Whether `g`'s breaker is open now (for tests and the log).
    bool open(const config::guardrail_config& g) const;

private:
    struct breaker {
        int failures = 0;
        std::chrono::steady_clock::time_point open_until{};
    };
    // Whether a call may go now; false: the breaker is open.
    bool may_call(const std::string& name);
    void note(const std::string& name, bool failed);

    std::shared_ptr<net::ssl::context> tls_of(std::string_view name) const;

    // By guardrail name; made in the constructor, read only after.
    std::map<std::string, std::shared_ptr<net::ssl::context>, std::less<>> tls_;
    mutable std::mutex mutex_;
    std::map<std::string, breaker, std::less<>> breakers_;
};

// The answer `body` holds, or `answered` false with the reason when it holds none (not JSON, an
// unknown action, spans out of order or past `text_size`).
webhook_answer read_webhook_answer(std::string_view body, std::size_t text_size);

}  // namespace gateway::guardrails
