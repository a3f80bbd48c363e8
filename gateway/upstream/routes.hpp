#pragma once

#include "gateway/config/config.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/upstream/model_catalog.hpp"
#include "gateway/upstream/model_router.hpp"

#include <boost/container/small_vector.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Routes (docs/routing.md): which targets a model's requests may go to, in which order they are
// tried, and how the targets that failed are kept out. The attempt loops of the /v1 face and of
// the agent's model client ask these for the next target and tell them how each attempt ended.
namespace gateway::upstream {

using clock = std::chrono::steady_clock;

// Whose credential an attempt presented to its target: the gateway's own key (`auth: replace`, a
// virtual key, or the upstream's api_key where the client sent none), the client's (forwarded
// under `auth: forward`), or none at all. A refusal of the client's own credential is about that
// client, never about the target.
enum class credential { gateway, client, none };

// How an attempt ended, as the attempt loop judges it. Only `failed` and `key_refused` are the
// target's fault and change its health for every request; the others concern this request alone.
enum class verdict {
    success,         // 2xx: the answer is the client's
    client_error,    // another 4xx (and a 401/403 of the client's own credential): the client's
                     // answer, returned as it is, never retried
    context_window,  // a 400 that says the request is too long for the model's context window
    failed,          // connect error, reset, timeout, 408, 5xx, 529, or a 429 of the gateway's
                     // key (or of none): try another target; the target is cooled
    key_refused,     // 401 to the gateway's own key: cooled for health.max_cooldown, then probed
    declined,        // 429 to the client's own credential: its quota, not the target's; another
                     // target, or this one after its backoff; health unchanged
    refused,         // 403 to the gateway's key: this request's content or permission; another
                     // target, not this one again for the request; health unchanged
};

// Whether a verdict sends the request on to another target (or the same after its backoff): the
// failures the attempt loop holds back from the client while attempts are left.
inline bool tries_another(verdict v) {
    return v == verdict::failed || v == verdict::key_refused || v == verdict::declined ||
           v == verdict::refused;
}

// The verdict for an answer with `status` (its body for a 400, which may name the context window)
// to a request that presented `presented`.
verdict judge_status(unsigned status, std::string_view body = {},
                     credential presented = credential::gateway);

// What an upstream's or a target's health is called where people read it (GET /admin/health, the
// console's Health page; docs/routing.md).
enum class health_status {
    unknown,  // nothing has been judged yet: no request or probe has reached it since the start
    healthy,  // the last request or probe it got succeeded
    cooling,  // it failed: routes skip it until its cooldown ends
    down,     // it failed and nothing has succeeded since; no cooldown keeps it out any more (it
              // ended, or a failed probe set none): the next request or probe tries it
    probing,  // it was failing, and one request (half open) or probe is trying it now
};
std::string_view health_status_name(health_status s);

// The health of every target (an upstream and the model it hears), shared by all workers:
// a target that failed is cooled for `cooldown`, doubled while it keeps failing up to
// `max_cooldown` (and at least as long as a retry-after it was given, itself at most
// `max_cooldown`); when the cooldown ends, one request may probe it (half open) and one success
// restores it. A target whose key was refused is out for `max_cooldown`, then probed the same
// way: every state ends. Only failures that belong to the target reach the board (verdict).
// Thread-safe.
class health_board {
public:
    // `names`: the upstreams' names by index, for the metrics.
    explicit health_board(config::health_config settings, std::vector<std::string> names = {});
    std::string name_of(std::size_t upstream) const {
        return upstream < names_.size() ? names_[upstream] : std::to_string(upstream);
    }
    config::duration max_cooldown() const { return settings_.max_cooldown; }

    enum class state { healthy, cooled, probing, unusable };
    // Whether a target in state `s`, out until `until`, may be tried at `now`: healthy, or cooled
    // (or its key refused) no longer, its probe not yet taken.
    static bool available(state s, clock::time_point until, clock::time_point now) {
        return s == state::healthy ||
               ((s == state::cooled || s == state::unusable) && now >= until);
    }
    // The last failure seen and when (wall clock, Unix milliseconds), and since when the
    // current run of successes or failures lasts: what the Health page says beside a state.
    struct record {
        bool judged = false;  // something succeeded or failed (or another replica told)
        std::string last_error;
        std::int64_t last_error_at = 0;
        std::int64_t since = 0;
    };
    struct target_state {
        std::size_t upstream = 0;
        std::string model;
        state now = state::healthy;
        int failures = 0;                     // in a row
        clock::time_point until{};            // the end of the cooldown (or of `unusable`)
        std::optional<double> first_byte_ms;  // decaying average of time to first byte
        int in_flight = 0;
        record seen;
    };
    // What a target's state reads as at `now` (a cooldown that ended is `down`, not healthy).
    static health_status status_of(const std::optional<target_state>& t, clock::time_point now);

    // An upstream as a whole, whatever model it was asked for: every attempt judged on it (a
    // route's target, or a model without a route) and every probe of it.
    struct upstream_state {
        bool failing = false;
        int failures = 0;           // in a row
        clock::time_point until{};  // a failed request's cooldown (none after a failed probe)
        int probes = 0;             // in flight
        std::int64_t last_probe_at = 0;
        record seen;
    };
    static health_status status_of(const upstream_state& u, clock::time_point now);
    std::optional<upstream_state> upstream_of(std::size_t upstream) const;
    // Takes `from` as upstream's record (carried over from another board on a reload), without
    // its probes in flight.
    void carry_upstream(std::size_t upstream, const upstream_state& from);
    // Takes `from` (another board's target, on a reload) as the target of `upstream` (its index
    // on this board) and the same model: its state, failures, last error and average, without
    // its requests in flight (a probe in flight is cooled again: it reports to the other board).
    void carry_target(std::size_t upstream, const target_state& from);

    // A model without a route: its one upstream's attempts, told only to the upstream's record
    // (that upstream is never kept out: there is nowhere else to send the request). A success
    // while the upstream is healthy takes no lock.
    void upstream_succeeded(std::size_t upstream);
    void upstream_failed(std::size_t upstream, clock::time_point now, std::string_view error,
                         std::optional<config::duration> retry_after = std::nullopt);
    // A probe (prober.hpp) of `upstream` begins, and how it ended: `error` empty for a
    // success. A failed probe leaves the upstream down (routes do not skip it for a probe).
    void probe_started(std::size_t upstream);
    void probe_ended(std::size_t upstream, std::string_view error);
    // A probe cut short by the prober's stop: it tells nothing.
    void probe_cancelled(std::size_t upstream);

    // Whether take() would let it through (no probe is claimed).
    bool available(std::size_t upstream, const std::string& model, clock::time_point now) const;
    // What the attempt plan reads of a target, without copying it.
    struct view {
        state now = state::healthy;
        clock::time_point until{};
        int in_flight = 0;
        double first_byte_ms = -1;  // < 0: not measured
    };
    view look(std::size_t upstream, const std::string& model) const;
    // Takes the target for an attempt (one more request in flight) when it may be tried now: a
    // cooled target whose cooldown ended becomes `probing`, and this caller is its one probe.
    // `force` takes it whatever its state (nothing else is left).
    bool take(std::size_t upstream, const std::string& model, clock::time_point now, bool force);
    // The attempt's end: `first_byte` for a success (the latency strategy's average).
    void succeeded(std::size_t upstream, const std::string& model, clock::duration first_byte);
    // `error`: what failed, for the Health page ("connect: connection refused", "answered 503").
    void failed(std::size_t upstream, const std::string& model, clock::time_point now,
                std::optional<config::duration> retry_after = std::nullopt,
                std::string_view error = {});
    void refused_key(std::size_t upstream, const std::string& model,
                     clock::time_point now = clock::now(), std::string_view error = {});
    // An attempt that ended without a verdict (the client went away): only in_flight changes.
    void abandoned(std::size_t upstream, const std::string& model);

    // A target's place on the board, found once: the same calls without looking it up again
    // (an attempt plan holds one per target; the board never forgets a target).
    using slot = target_state*;
    slot slot_of(std::size_t upstream, const std::string& model);
    view look(slot t) const;
    bool take(slot t, clock::time_point now, bool force);
    void succeeded(slot t, clock::duration first_byte);
    void failed(slot t, clock::time_point now,
                std::optional<config::duration> retry_after = std::nullopt,
                std::string_view error = {});
    void refused_key(slot t, clock::time_point now = clock::now(), std::string_view error = {});
    void abandoned(slot t);

    std::optional<target_state> of(std::size_t upstream, const std::string& model) const;
    std::vector<target_state> snapshot() const;
    // Sets the metric of targets skipped now (cooled, or their key refused), per upstream; for
    // the scrape.
    void show_out(clock::time_point now = clock::now()) const;

    // A change of a target's state this board decided (cooled, restored, its key refused), for
    // the replicas that share health (health_share); a remote one is applied with apply().
    struct change {
        std::size_t upstream = 0;
        std::string model;
        state now = state::healthy;
        clock::time_point until{};  // cooled, unusable: when it ends
        int failures = 0;
    };
    // Called after each change, outside the board's lock, from the thread that made it. Set
    // before the board is used.
    void on_change(std::function<void(const change&)> tell) { tell_ = std::move(tell); }
    // Another replica's change: a cooldown (or a refused key's time out) is taken when it ends
    // later than this board's, a restore ends it. Not told back.
    void apply(const change& c);

private:
    target_state& entry(std::size_t upstream, const std::string& model);
    void told(std::optional<change> c) const {
        if (c && tell_) tell_(*c);
    }

    enum outcome { success, failure, refused, not_judged, cooldown, outcomes };
    void count(std::size_t upstream, outcome o) const;
    // An attempt at `t` ended as `o` (under the lock): one fewer in flight, and counted.
    void ended(target_state& t, outcome o) const;
    // The cooldown after `failures` failures in a row, at least `retry_after`, at most
    // max_cooldown.
    clock::duration cooldown_after(int failures, std::optional<config::duration> retry_after) const;
    // Under the lock: upstream `u` (when the board knows it) succeeded, or failed with `error`
    // at `now` (cooling as a target would, at least `retry_after`), or in a probe (nullopt: no
    // cooldown).
    void upstream_success(std::size_t u, std::int64_t at_ms);
    void upstream_failure(std::size_t u, std::optional<clock::time_point> now,
                          std::optional<config::duration> retry_after, std::string_view error,
                          std::int64_t at_ms);

    config::health_config settings_;
    std::vector<std::string> names_;
    // The metric series of each upstream and outcome, looked up once.
    std::vector<std::array<observability::counter*, outcomes>> series_;
    mutable std::mutex mutex_;
    std::map<std::pair<std::size_t, std::string>, target_state> targets_;
    std::vector<upstream_state> upstreams_;  // by index, as names_
    // Each upstream's record says healthy: read without the lock, so that a success of a model
    // without a route costs no lock while nothing is wrong.
    std::unique_ptr<std::atomic<bool>[]> healthy_;
    std::function<void(const change&)> tell_;
};

// The routes of a configuration: a model name goes to the first route whose glob matches it, or
// to the default route (the upstream its `models` globs pick, alone, tried once). Immutable.
class route_table {
public:
    route_table(const std::vector<config::upstream_config>& upstreams,
                const std::vector<config::route_config>& routes, const model_router& router);

    // The route for `model`; the default route's target is filled in per call (`scratch`).
    const config::route_config& route(std::optional<std::string_view> model,
                                      config::route_config& scratch) const;
    // The configured route for `model`, or null (the default route applies).
    const config::route_config* find(std::string_view model) const;
    // What takes `model`, looked up once a request: its configured route, else the first upstream
    // whose globs match it (looked up only when there is no route). Neither takes a model nobody
    // serves (model_catalog::serves says the same).
    struct takers {
        const config::route_config* route = nullptr;
        std::optional<std::size_t> matched;
        bool found() const { return route || matched; }
    };
    takers takers_of(std::string_view model) const;
    // The upstream whose globs match `model` (`t` its takers): looked up now when a route took it.
    std::optional<std::size_t> matching_upstream(const takers& t, std::string_view model) const {
        return t.route ? router_.match(model) : t.matched;
    }
    const std::vector<config::route_config>& routes() const { return routes_; }
    const std::vector<config::upstream_config>& upstreams() const { return upstreams_; }

private:
    const std::vector<config::upstream_config>& upstreams_;
    const std::vector<config::route_config>& routes_;
    const model_router& router_;
};

// The model a target hears for a client's `model`: the target's own name when it gives one.
// (Also each target's key on the health board.)
inline const std::string& target_model(const config::route_target& t, const std::string& model) {
    return t.model.empty() ? model : t.model;
}

// One request's way through its route: which target each attempt goes to, within max_attempts
// and the deadline. Not thread-safe; one per request.
class attempt_plan {
public:
    attempt_plan(const config::route_config& route, health_board& health,
                 clock::time_point started = clock::now());
    // A plan that keeps no health: its route's first target, as often as it allows.
    explicit attempt_plan(const config::route_config& route,
                          clock::time_point started = clock::now());
    // A model without a route (on /v1 and for the agent alike): its route's first target, as
    // often as it allows, never kept out for its health (with nothing to choose between there
    // is nowhere else to go); how each attempt ended is told to the upstream's record on
    // `health`, for the Health page.
    struct reporting {};
    attempt_plan(const config::route_config& route, health_board& health, reporting,
                 clock::time_point started = clock::now());

    // The next target, or nullopt when the attempts or the deadline are used up, or no target is
    // left (all refused their keys). A target not yet tried this request and available comes
    // first (by the strategy); a cooled one only when nothing else is left.
    const config::route_target* next(clock::time_point now = clock::now());

    // How the attempt on the target next() returned ended, told to the health board: a success
    // (its time to first byte), a failure (cooled; at least `retry_after` when given), a refused
    // key (out for max_cooldown), or no verdict (the client went away, or the request was not
    // for it). `declined` and `refused` concern this request only and leave the board as it was:
    // a declined target may be tried again after its backoff (`retry_after`), a refused one not
    // for this request.
    // `error` says what failed, for the Health page.
    void succeeded(clock::duration first_byte);
    void failed(std::optional<config::duration> retry_after = std::nullopt,
                clock::time_point now = clock::now(), std::string_view error = {});
    void refused_key(clock::time_point now = clock::now(), std::string_view error = {});
    void declined(std::optional<config::duration> retry_after = std::nullopt);
    void refused();
    void abandoned();
    // Tells the plan a verdict: the call above that it names; success, client_error and
    // context_window end the attempt unjudged (abandoned(): the caller tells a success with its
    // time through succeeded(), and the other two say nothing of the target).
    void judged(verdict v, std::optional<config::duration> retry_after = std::nullopt,
                std::string_view error = {});

    // Spends one attempt on sending the current target's request again on a new connection (a
    // reused one reset before answering: the upstream may have taken it). False, and nothing
    // spent, when max_attempts or the deadline leave none.
    bool spend_resend(clock::time_point now = clock::now());

    // The wait before the attempt on the target next() returned: none for another target; when
    // it is the one that just failed, again (nothing else is left), a backoff of 500 ms doubled
    // per failure of this request, or the retry-after it gave, at most 60 s, within the deadline.
    config::duration backoff(clock::time_point now = clock::now()) const;

    // How long an attempt may wait for its response head: the route's first_byte_timeout, else
    // `upstream_own` (the upstream's), never past the deadline.
    config::duration first_byte_timeout(config::duration upstream_own,
                                        clock::time_point now = clock::now()) const;

    // The targets for a request refused for its context window (the route's on_context_window);
    // the attempts still count.
    void to_context_window_targets();

    int attempts() const { return attempts_; }
    // When the plan was made (its deadline counts from then).
    clock::time_point started() const { return started_; }
    // The time left before the deadline (nullopt: none).
    std::optional<clock::duration> left(clock::time_point now = clock::now()) const;
    const config::route_config& route() const { return route_; }

private:
    // Target lists of one request: inline, without allocating, for the usual few targets (a
    // plan is in the frame of the coroutine that runs the attempts: four, not more).
    using target_list = boost::container::small_vector<const config::route_target*, 4>;
    const config::route_target* pick(const target_list& from);
    // A target's health key: the model it hears.
    const std::string& key_of(const config::route_target* t) const {
        return target_model(*t, route_.model);
    }
    health_board::slot slot(const config::route_target* t) const {
        return slots_[static_cast<std::size_t>(t - targets_->data())];
    }
    void set_targets(const std::vector<config::route_target>& targets);

    const config::route_config& route_;
    health_board* health_;             // null: none kept
    health_board* reports_ = nullptr;  // a model without a route: told, never asked
    const std::vector<config::route_target>* targets_;
    clock::time_point started_;
    int attempts_ = 0;
    int failures_ = 0;  // attempts of this request that failed
    const config::route_target* current_ = nullptr;
    bool again_ = false;                     // current_ is the target that just failed
    std::optional<config::duration> asked_;  // the last failure's retry-after
    std::string_view why_ = "failed";        // how the last attempt ended, for the fallbacks
    target_list tried_;
    target_list refused_;  // not to be tried again for this request
    boost::container::small_vector<health_board::slot, 4> slots_;  // each target's, with health
};

class prober;
class token_source;

// How often `u` is probed (prober.hpp): its own probe_interval, else health.probe_interval; 0:
// never.
inline config::duration probe_interval_of(const config::upstream_config& u,
                                          const config::health_config& health) {
    // Bedrock's model list is its control-plane API's, on another host, and Vertex AI has none
    // below a project: not asked yet.
    if (u.provider == config::provider_kind::bedrock || u.host == config::hosting::vertex)
        return config::duration(0);
    return u.probe_interval.value_or(health.probe_interval);
}

// Where a model's requests go, for every path that calls a model: the upstreams' globs, the
// routes, the health of every upstream and target, and the probes that keep it when the
// configuration asks for them (health.probe_interval, an upstream's probe_interval: they start
// with the routing, on a thread of their own). One per configuration; shared by the workers.
class routing {
public:
    // `tokens`: by upstream index, the access tokens its requests carry (prober.hpp).
    routing(const std::vector<config::upstream_config>& upstreams,
            const std::vector<config::route_config>& routes, config::health_config health,
            const std::vector<std::shared_ptr<token_source>>& tokens = {});
    ~routing();
    routing(const routing&) = delete;
    routing& operator=(const routing&) = delete;

    const model_router& router() const { return router_; }
    const route_table& table() const { return table_; }
    // Which models are served, and what /v1/models lists (its lists asked of the upstreams).
    model_catalog& catalog() { return catalog_; }
    const model_catalog& catalog() const { return catalog_; }
    health_board& health() { return health_; }
    const config::health_config& health_settings() const { return settings_; }

    // Cancels the active probes (prober.hpp) and the model catalogue's asks, and waits for them
    // to end; the routing keeps serving, unprobed (a listing gets the names it declares). Safe
    // to call twice, and without probes; the destructor calls it (a configuration no longer
    // used should be stopped by its owner, off the workers' threads: the wait may last until a
    // probe's connect gives up).
    void stop();

private:
    static std::vector<std::string> names(const std::vector<config::upstream_config>& ups) {
        std::vector<std::string> out;
        for (const auto& u : ups) out.push_back(u.name);
        return out;
    }

    const std::vector<config::upstream_config>& upstreams_;
    config::health_config settings_;
    model_router router_;
    route_table table_;
    model_catalog catalog_{table_.upstreams(), table_.routes()};
    health_board health_;
    std::unique_ptr<prober> prober_;  // while probes run
};

// Seconds or milliseconds to wait from retry-after-ms / retry-after (delta seconds); nullopt
// when neither is present or readable, or when it is not a finite number in range (negative,
// inf, nan, past a day: ignored). The health board caps what it takes at health.max_cooldown.
std::optional<config::duration> retry_after(std::string_view retry_after_ms,
                                            std::string_view retry_after);

}  // namespace gateway::upstream
