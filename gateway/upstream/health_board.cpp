// The health board (routes.hpp): each target's state, cooldown and requests in flight.
#include "gateway/upstream/routes.hpp"

#include "gateway/clock.hpp"
#include "gateway/observability/metrics.hpp"

#include <algorithm>

namespace gateway::upstream {

namespace {

// A failure noted in `r` at `at_ms`; `starts` when it begins a run of failures.
void note_failure(health_board::record& r, std::string_view error, std::int64_t at_ms,
                  bool starts) {
    if (starts || !r.judged) r.since = at_ms;
    r.judged = true;
    r.last_error = error.empty() ? std::string("failed") : std::string(error);
    r.last_error_at = at_ms;
}

void note_success(health_board::record& r, std::int64_t at_ms, bool restores) {
    if (restores || !r.judged) r.since = at_ms;
    r.judged = true;
}

}  // namespace

std::string_view health_status_name(health_status s) {
    static constexpr std::string_view names[] = {"unknown", "healthy", "cooling", "down",
                                                 "probing"};
    return names[static_cast<int>(s)];
}

health_status health_board::status_of(const std::optional<target_state>& t, clock::time_point now) {
    if (!t || !t->seen.judged) return health_status::unknown;
    switch (t->now) {
        case state::healthy:
            return health_status::healthy;
        case state::probing:
            return health_status::probing;
        case state::cooled:
        case state::unusable:
            break;
    }
    // Its cooldown over, nothing has shown it back yet: the next request probes it.
    return now < t->until ? health_status::cooling : health_status::down;
}

health_status health_board::status_of(const upstream_state& u, clock::time_point now) {
    if (!u.seen.judged) return health_status::unknown;
    if (!u.failing) return health_status::healthy;
    if (u.probes > 0) return health_status::probing;
    return now < u.until ? health_status::cooling : health_status::down;
}

health_board::health_board(config::health_config settings, std::vector<std::string> names)
    : settings_(settings),
      names_(std::move(names)),
      upstreams_(names_.size()),
      healthy_(std::make_unique<std::atomic<bool>[]>(names_.size())) {
    auto& m = observability::metrics();
    for (const auto& name : names_)
        series_.push_back(
            {&m.route_attempts.with({name, "success"}), &m.route_attempts.with({name, "failed"}),
             &m.route_attempts.with({name, "unusable"}),
             &m.route_attempts.with({name, "not_judged"}), &m.route_cooldowns.with({name})});
}

void health_board::count(std::size_t upstream, outcome o) const {
    if (upstream < series_.size()) {
        series_[upstream][o]->inc();
        return;
    }
    static constexpr const char* names[] = {"success", "failed", "unusable", "not_judged"};
    auto& m = observability::metrics();
    if (o == cooldown)
        m.route_cooldowns.with({name_of(upstream)}).inc();
    else
        m.route_attempts.with({name_of(upstream), names[o]}).inc();
}

health_board::view health_board::look(std::size_t upstream, const std::string& model) const {
    std::lock_guard lock(mutex_);
    auto it = targets_.find({upstream, model});
    if (it == targets_.end()) return {};
    const auto& t = it->second;
    return {t.now, t.until, t.in_flight, t.first_byte_ms.value_or(-1)};
}

health_board::slot health_board::slot_of(std::size_t upstream, const std::string& model) {
    std::lock_guard lock(mutex_);
    return &entry(upstream, model);
}

health_board::view health_board::look(slot t) const {
    std::lock_guard lock(mutex_);
    return {t->now, t->until, t->in_flight, t->first_byte_ms.value_or(-1)};
}

bool health_board::take(std::size_t upstream, const std::string& model, clock::time_point now,
                        bool force) {
    return take(slot_of(upstream, model), now, force);
}

void health_board::succeeded(std::size_t upstream, const std::string& model,
                             clock::duration first_byte) {
    succeeded(slot_of(upstream, model), first_byte);
}

void health_board::failed(std::size_t upstream, const std::string& model, clock::time_point now,
                          std::optional<config::duration> retry_after, std::string_view error) {
    failed(slot_of(upstream, model), now, retry_after, error);
}

void health_board::refused_key(std::size_t upstream, const std::string& model,
                               clock::time_point now, std::string_view error) {
    refused_key(slot_of(upstream, model), now, error);
}

void health_board::abandoned(std::size_t upstream, const std::string& model) {
    abandoned(slot_of(upstream, model));
}

bool health_board::take(slot t, clock::time_point now, bool force) {
    std::lock_guard lock(mutex_);
    bool ok = force || t->now == state::healthy;
    if (!ok && available(t->now, t->until, now)) {
        t->now = state::probing;  // this caller is the one probe
        ok = true;
    }
    if (ok) ++t->in_flight;
    return ok;
}

health_board::target_state& health_board::entry(std::size_t upstream, const std::string& model) {
    auto [it, added] = targets_.try_emplace({upstream, model});
    if (added) {
        it->second.upstream = upstream;
        it->second.model = model;
    }
    return it->second;
}

bool health_board::available(std::size_t upstream, const std::string& model,
                             clock::time_point now) const {
    auto t = look(upstream, model);
    return available(t.now, t.until, now);
}

void health_board::ended(target_state& t, outcome o) const {
    t.in_flight = std::max(0, t.in_flight - 1);
    count(t.upstream, o);
}

void health_board::succeeded(slot at, clock::duration first_byte) {
    std::optional<change> restored;
    {
        std::lock_guard lock(mutex_);
        auto& t = *at;
        ended(t, success);
        auto at_ms = now_ms();
        note_success(t.seen, at_ms, t.now != state::healthy);
        if (t.upstream < upstreams_.size() && !healthy_[t.upstream].load(std::memory_order_relaxed))
            upstream_success(t.upstream, at_ms);
        if (t.now != state::healthy) restored = change{t.upstream, t.model, state::healthy, {}, 0};
        t.now = state::healthy;
        t.failures = 0;
        double ms = std::chrono::duration<double, std::milli>(first_byte).count();
        // A decaying average: recent answers weigh most.
        t.first_byte_ms = t.first_byte_ms ? *t.first_byte_ms * 0.8 + ms * 0.2 : ms;
    }
    told(std::move(restored));
}

clock::duration health_board::cooldown_after(int failures,
                                             std::optional<config::duration> retry_after) const {
    auto cooldown = std::chrono::duration_cast<clock::duration>(settings_.cooldown);
    auto cap = std::chrono::duration_cast<clock::duration>(settings_.max_cooldown);
    for (int i = 1; i < failures && cooldown < cap; ++i) cooldown *= 2;
    cooldown = std::min(cooldown, cap);
    // A retry-after lengthens the cooldown, never past max_cooldown: what one answer asks for
    // must not keep a target out for longer than the operator allows.
    if (retry_after)
        cooldown = std::max(
            cooldown, std::min(cap, std::chrono::duration_cast<clock::duration>(*retry_after)));
    return cooldown;
}

void health_board::upstream_success(std::size_t u, std::int64_t at_ms) {
    if (u >= upstreams_.size()) return;
    auto& r = upstreams_[u];
    note_success(r.seen, at_ms, r.failing);
    r.failing = false;
    r.failures = 0;
    healthy_[u].store(true, std::memory_order_relaxed);
}

void health_board::upstream_failure(std::size_t u, std::optional<clock::time_point> now,
                                    std::optional<config::duration> retry_after,
                                    std::string_view error, std::int64_t at_ms) {
    if (u >= upstreams_.size()) return;
    auto& r = upstreams_[u];
    note_failure(r.seen, error, at_ms, !r.failing);
    ++r.failures;
    // A failed probe keeps nothing out: it sets no cooldown (one running goes on).
    auto until = now ? *now + cooldown_after(r.failures, retry_after) : clock::time_point{};
    r.until = r.failing ? std::max(r.until, until) : until;
    r.failing = true;
    healthy_[u].store(false, std::memory_order_relaxed);
}

void health_board::upstream_succeeded(std::size_t upstream) {
    if (upstream >= upstreams_.size()) return;
    // Nothing to change: no lock on a request's path.
    if (healthy_[upstream].load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mutex_);
    upstream_success(upstream, now_ms());
}

void health_board::upstream_failed(std::size_t upstream, clock::time_point now,
                                   std::string_view error,
                                   std::optional<config::duration> retry_after) {
    if (upstream >= upstreams_.size()) return;
    std::lock_guard lock(mutex_);
    upstream_failure(upstream, now, retry_after, error, now_ms());
}

void health_board::probe_started(std::size_t upstream) {
    if (upstream >= upstreams_.size()) return;
    std::lock_guard lock(mutex_);
    ++upstreams_[upstream].probes;
}

void health_board::probe_ended(std::size_t upstream, std::string_view error) {
    if (upstream >= upstreams_.size()) return;
    std::lock_guard lock(mutex_);
    auto& r = upstreams_[upstream];
    r.probes = std::max(0, r.probes - 1);
    auto at = now_ms();
    r.last_probe_at = at;
    if (error.empty())
        upstream_success(upstream, at);
    else
        upstream_failure(upstream, std::nullopt, std::nullopt, error, at);
}

void health_board::carry_upstream(std::size_t upstream, const upstream_state& from) {
    if (upstream >= upstreams_.size()) return;
    std::lock_guard lock(mutex_);
    upstreams_[upstream] = from;
    upstreams_[upstream].probes = 0;
    healthy_[upstream].store(from.seen.judged && !from.failing, std::memory_order_relaxed);
}

void health_board::carry_target(std::size_t upstream, const target_state& from) {
    std::lock_guard lock(mutex_);
    auto& t = entry(upstream, from.model);
    t.now = from.now == state::probing ? state::cooled : from.now;
    t.failures = from.failures;
    t.until = from.until;
    t.first_byte_ms = from.first_byte_ms;
    t.seen = from.seen;
}

void health_board::probe_cancelled(std::size_t upstream) {
    if (upstream >= upstreams_.size()) return;
    std::lock_guard lock(mutex_);
    upstreams_[upstream].probes = std::max(0, upstreams_[upstream].probes - 1);
}

std::optional<health_board::upstream_state> health_board::upstream_of(std::size_t upstream) const {
    std::lock_guard lock(mutex_);
    if (upstream >= upstreams_.size()) return std::nullopt;
    return upstreams_[upstream];
}

void health_board::failed(slot at, clock::time_point now,
                          std::optional<config::duration> retry_after, std::string_view error) {
    std::optional<change> cooled;
    {
        std::lock_guard lock(mutex_);
        auto& t = *at;
        ended(t, failure);
        auto at_ms = now_ms();
        upstream_failure(t.upstream, now, retry_after, error, at_ms);
        note_failure(t.seen, error, at_ms, t.failures == 0);
        // An attempt begun before the target's key was refused does not shorten that.
        if (t.now == state::unusable && now < t.until) return;
        count(t.upstream, cooldown);
        ++t.failures;
        t.now = state::cooled;
        t.until = now + cooldown_after(t.failures, retry_after);
        cooled = change{t.upstream, t.model, state::cooled, t.until, t.failures};
    }
    told(std::move(cooled));
}

void health_board::refused_key(slot at, clock::time_point now, std::string_view error) {
    change out;
    {
        std::lock_guard lock(mutex_);
        auto& t = *at;
        ended(t, refused);
        auto why = error.empty() ? std::string_view("the gateway's key was refused") : error;
        auto at_ms = now_ms();
        note_failure(t.seen, why, at_ms, t.failures == 0 && t.now != state::unusable);
        t.now = state::unusable;
        t.until = now + std::chrono::duration_cast<clock::duration>(settings_.max_cooldown);
        upstream_failure(t.upstream, now, settings_.max_cooldown, why, at_ms);
        out = change{t.upstream, t.model, state::unusable, t.until, t.failures};
    }
    told(std::move(out));
}

void health_board::apply(const change& c) {
    std::lock_guard lock(mutex_);
    auto& t = entry(c.upstream, c.model);
    if (c.now == state::cooled || c.now == state::unusable)
        note_failure(t.seen, "another replica found it failing", now_ms(), t.now == state::healthy);
    else if (c.now == state::healthy)
        note_success(t.seen, now_ms(), t.now != state::healthy);
    switch (c.now) {
        case state::cooled:
        case state::unusable: {
            // The later end wins; a refused key outranks a cooldown while it lasts.
            bool out = t.now == state::cooled || t.now == state::unusable;
            t.until = out ? std::max(t.until, c.until) : c.until;
            if (!out || c.now == state::unusable) t.now = c.now;
            t.failures = std::max(t.failures, c.failures);
            break;
        }
        case state::healthy:
            t.now = state::healthy;
            t.failures = 0;
            break;
        case state::probing:
            break;  // never told
    }
}

void health_board::abandoned(slot at) {
    std::lock_guard lock(mutex_);
    ended(*at, not_judged);
    // The probe did not tell: another request probes again.
    if (at->now == state::probing) at->now = state::cooled;
}

std::optional<health_board::target_state> health_board::of(std::size_t upstream,
                                                           const std::string& model) const {
    std::lock_guard lock(mutex_);
    auto it = targets_.find({upstream, model});
    if (it == targets_.end()) return std::nullopt;
    return it->second;
}

void health_board::show_out(clock::time_point now) const {
    std::vector<std::array<int, 2>> out(names_.size());  // cooled, unusable
    {
        std::lock_guard lock(mutex_);
        for (const auto& [key, t] : targets_) {
            if (t.upstream >= out.size()) continue;
            if (t.now == state::unusable) ++out[t.upstream][1];
            if (t.now != state::healthy && t.now != state::unusable &&
                !available(t.now, t.until, now))
                ++out[t.upstream][0];
        }
    }
    auto& m = observability::metrics();
    for (std::size_t i = 0; i < out.size(); ++i) {
        m.route_targets_out.with({names_[i], "cooled"}).set(out[i][0]);
        m.route_targets_out.with({names_[i], "unusable"}).set(out[i][1]);
    }
}

std::vector<health_board::target_state> health_board::snapshot() const {
    std::lock_guard lock(mutex_);
    std::vector<target_state> out;
    for (const auto& [key, t] : targets_) out.push_back(t);
    return out;
}

}  // namespace gateway::upstream
