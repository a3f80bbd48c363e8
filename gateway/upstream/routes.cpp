#include "gateway/upstream/routes.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/observability/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gateway::upstream {

namespace {

bool contains_folded(std::string_view text, std::string_view lower_word) {
    auto it = std::search(
        text.begin(), text.end(), lower_word.begin(), lower_word.end(),
        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    return it != text.end();
}

// How the providers say a request is too long for the model (OpenAI's code and message,
// Anthropic's "prompt is too long", Gemini's "input token count … exceeds").
bool says_context_window(std::string_view body) {
    for (std::string_view phrase : {"context_length_exceeded", "maximum context length",
                                    "context window", "prompt is too long", "input token count"})
        if (contains_folded(body, phrase)) return true;
    return false;
}

thread_local std::minstd_rand random_bits{std::random_device{}()};

}  // namespace

std::optional<config::duration> retry_after(std::string_view retry_after_ms,
                                            std::string_view retry_after) {
    auto number = [](std::string_view text) -> std::optional<double> {
        while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || value < 0) return std::nullopt;
        return value;
    };
    if (auto ms = number(retry_after_ms))
        return std::chrono::duration_cast<config::duration>(
            std::chrono::duration<double, std::milli>(*ms));
    if (auto s = number(retry_after))
        return std::chrono::duration_cast<config::duration>(std::chrono::duration<double>(*s));
    return std::nullopt;
}

verdict judge_status(unsigned status, std::string_view body) {
    if (status >= 200 && status < 300) return verdict::success;
    if (status == 401 || status == 403) return verdict::unusable;
    if (status == 408 || status == 429 || status >= 500) return verdict::failed;
    if (status == 400 && says_context_window(body)) return verdict::context_window;
    return verdict::client_error;
}

health_board::health_board(config::health_config settings, std::vector<std::string> names)
    : settings_(settings), names_(std::move(names)) {
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
                          std::optional<config::duration> retry_after) {
    failed(slot_of(upstream, model), now, retry_after);
}

void health_board::refused_key(std::size_t upstream, const std::string& model) {
    refused_key(slot_of(upstream, model));
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
        if (t.now == state::unusable) return;
        if (t.now != state::healthy) restored = change{t.upstream, t.model, state::healthy, {}, 0};
        t.now = state::healthy;
        t.failures = 0;
        double ms = std::chrono::duration<double, std::milli>(first_byte).count();
        // A decaying average: recent answers weigh most.
        t.first_byte_ms = t.first_byte_ms ? *t.first_byte_ms * 0.8 + ms * 0.2 : ms;
    }
    told(std::move(restored));
}

void health_board::failed(slot at, clock::time_point now,
                          std::optional<config::duration> retry_after) {
    std::optional<change> cooled;
    {
        std::lock_guard lock(mutex_);
        auto& t = *at;
        ended(t, failure);
        if (t.now == state::unusable) return;
        count(t.upstream, cooldown);
        ++t.failures;
        auto cooldown = std::chrono::duration_cast<clock::duration>(settings_.cooldown);
        auto cap = std::chrono::duration_cast<clock::duration>(settings_.max_cooldown);
        for (int i = 1; i < t.failures && cooldown < cap; ++i) cooldown *= 2;
        cooldown = std::min(cooldown, cap);
        if (retry_after)
            cooldown =
                std::max(cooldown, std::chrono::duration_cast<clock::duration>(*retry_after));
        t.now = state::cooled;
        t.until = now + cooldown;
        cooled = change{t.upstream, t.model, state::cooled, t.until, t.failures};
    }
    told(std::move(cooled));
}

void health_board::refused_key(slot at) {
    bool first = false;
    {
        std::lock_guard lock(mutex_);
        ended(*at, refused);
        first = at->now != state::unusable;
        at->now = state::unusable;
    }
    if (first) told(change{at->upstream, at->model, state::unusable, {}, 0});
}

void health_board::apply(const change& c) {
    std::lock_guard lock(mutex_);
    auto& t = entry(c.upstream, c.model);
    if (t.now == state::unusable) return;
    switch (c.now) {
        case state::cooled:
            t.until = t.now == state::cooled ? std::max(t.until, c.until) : c.until;
            t.now = state::cooled;
            t.failures = std::max(t.failures, c.failures);
            break;
        case state::healthy:
            t.now = state::healthy;
            t.failures = 0;
            break;
        case state::unusable:
            t.now = state::unusable;
            break;
        case state::probing:
            break;  // never told
    }
}

void health_board::abandoned(slot at) {
    std::lock_guard lock(mutex_);
    ended(*at, not_judged);
    if (at->now == state::probing) at->now = state::cooled;  // the probe did not tell: again
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

route_table::route_table(const std::vector<config::upstream_config>& upstreams,
                         const std::vector<config::route_config>& routes,
                         const model_router& router)
    : upstreams_(upstreams), routes_(routes), router_(router) {}

const config::route_config* route_table::find(std::string_view model) const {
    for (const auto& r : routes_)
        if (config::glob_match(r.model, model)) return &r;
    return nullptr;
}

const config::route_config& route_table::route(std::optional<std::string_view> model,
                                               config::route_config& scratch) const {
    if (model)
        if (const auto* r = find(*model)) return *r;
    auto index = router_.route(model);
    scratch = config::route_config{};
    scratch.model = std::string(model.value_or(""));
    scratch.max_attempts = 1;  // the default route: one upstream, once, as without routes
    scratch.targets.push_back({upstreams_[index].name, "", 1, index});
    return scratch;
}

attempt_plan::attempt_plan(const config::route_config& route, health_board& health,
                           clock::time_point started)
    : route_(route), health_(&health), started_(started) {
    set_targets(route.targets);
}

attempt_plan::attempt_plan(const config::route_config& route, clock::time_point started)
    : route_(route), health_(nullptr), started_(started) {
    set_targets(route.targets);
}

void attempt_plan::set_targets(const std::vector<config::route_target>& targets) {
    targets_ = &targets;
    current_ = nullptr;  // its outcome was told before the switch
    again_ = false;
    tried_.clear();
    slots_.clear();
    if (health_)
        for (const auto& t : targets) slots_.push_back(health_->slot_of(t.index, key_of(&t)));
}

std::optional<clock::duration> attempt_plan::left(clock::time_point now) const {
    if (route_.deadline.count() == 0) return std::nullopt;
    auto end = started_ + std::chrono::duration_cast<clock::duration>(route_.deadline);
    return end > now ? end - now : clock::duration::zero();
}

void attempt_plan::succeeded(clock::duration first_byte) {
    if (!current_) return;
    if (health_) health_->succeeded(slot(current_), first_byte);
    why_ = "success";
}

void attempt_plan::failed(std::optional<config::duration> retry_after, clock::time_point now) {
    if (!current_) return;
    if (health_) health_->failed(slot(current_), now, retry_after);
    ++failures_;
    asked_ = retry_after;
    why_ = "failed";
}

void attempt_plan::refused_key() {
    if (!current_) return;
    if (health_) health_->refused_key(slot(current_));
    why_ = "unusable";
}

void attempt_plan::abandoned() {
    if (!current_) return;
    if (health_) health_->abandoned(slot(current_));
    why_ = "unsupported";  // the request was not for it (or the client left: no next attempt)
}

config::duration attempt_plan::backoff(clock::time_point now) const {
    using namespace std::chrono_literals;
    constexpr config::duration most = 60s;
    if (!again_ || failures_ == 0) return config::duration(0);  // nothing failed: no wait
    auto doubled = config::duration(500ms) * (1 << std::min(failures_ - 1, 7));
    auto wait = std::min(asked_.value_or(doubled), most);
    if (auto rest = left(now))
        wait = std::min(wait, std::chrono::ceil<config::duration>(*rest));
    return wait;
}

config::duration attempt_plan::first_byte_timeout(config::duration upstream_own,
                                                  clock::time_point now) const {
    auto wait = route_.first_byte_timeout.count() > 0 ? route_.first_byte_timeout : upstream_own;
    if (auto rest = left(now)) {
        // At least a millisecond: a zero would mean "the upstream's own".
        auto most =
            std::max(std::chrono::ceil<config::duration>(*rest), config::duration(1));
        if (wait.count() == 0 || most < wait) wait = most;
    }
    return wait;
}

void attempt_plan::to_context_window_targets() {
    set_targets(route_.on_context_window);
    why_ = "context_window";
}

const config::route_target* attempt_plan::pick(const target_list& from) {
    if (from.empty()) return nullptr;
    switch (route_.strategy) {
        case config::route_strategy::priority:
            return from.front();
        case config::route_strategy::weighted: {
            std::uint64_t total = 0;
            for (const auto* t : from) total += t->weight;
            auto at = std::uniform_int_distribution<std::uint64_t>(0, total - 1)(random_bits);
            for (const auto* t : from) {
                if (at < t->weight) return t;
                at -= t->weight;
            }
            return from.back();
        }
        case config::route_strategy::least_busy: {
            const config::route_target* best = nullptr;
            int fewest = 0;
            for (const auto* t : from) {
                int busy = health_->look(slot(t)).in_flight;
                if (!best || busy < fewest) {
                    best = t;
                    fewest = busy;
                }
            }
            return best;
        }
        case config::route_strategy::latency: {
            // The better of two at random: a target not measured yet counts as fastest, so
            // each gets measured.
            std::uniform_int_distribution<std::size_t> any(0, from.size() - 1);
            const auto* a = from[any(random_bits)];
            const auto* b = from[any(random_bits)];
            auto ms = [&](const config::route_target* t) {
                return std::max(0.0, health_->look(slot(t)).first_byte_ms);
            };
            return ms(b) < ms(a) ? b : a;
        }
    }
    return from.front();
}

const config::route_target* attempt_plan::next(clock::time_point now) {
    if (attempts_ >= static_cast<int>(route_.max_attempts)) return nullptr;
    if (auto rest = left(now); rest && rest->count() == 0) return nullptr;
    if (!health_) {
        if (targets_->empty()) return nullptr;
        const auto* only = &targets_->front();
        again_ = only == current_;
        current_ = only;
        ++attempts_;
        return only;
    }
    using state = health_board::state;
    target_list fresh, again, cooled;
    for (const auto& t : *targets_) {
        auto v = health_->look(slot(&t));
        if (v.now == state::unusable) continue;
        bool tried = std::find(tried_.begin(), tried_.end(), &t) != tried_.end();
        if (!health_board::available(v.now, v.until, now))
            cooled.push_back(&t);
        else
            (tried ? again : fresh).push_back(&t);
    }
    // Untried and available first, then available again; a cooled target only when nothing else
    // is left, the one whose cooldown ends first (it is not claimed as a probe: it is tried
    // because nothing else can be).
    const config::route_target* chosen = nullptr;
    for (auto* list : {&fresh, &again}) {
        while (!list->empty() && !chosen) {
            auto* t = pick(*list);
            if (health_->take(slot(t), now, false))
                chosen = t;
            else
                list->erase(std::find(list->begin(), list->end(), t));  // a probe was taken
        }
        if (chosen) break;
    }
    if (!chosen && !cooled.empty()) {
        chosen = *std::min_element(cooled.begin(), cooled.end(), [&](auto* a, auto* b) {
            return health_->look(slot(a)).until < health_->look(slot(b)).until;
        });
        health_->take(slot(chosen), now, true);
    }
    if (!chosen) return nullptr;
    again_ = chosen == current_;
    current_ = chosen;
    if (attempts_ > 0)
        observability::metrics()
            .route_fallbacks.with({route_.model, health_->name_of(chosen->index), why_})
            .inc();
    ++attempts_;
    tried_.push_back(chosen);
    return chosen;
}

}  // namespace gateway::upstream
