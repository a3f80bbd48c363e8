#include "gateway/upstream/routes.hpp"

#include "gateway/config/glob.hpp"
#include "gateway/observability/metrics.hpp"
#include "gateway/upstream/prober.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

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
    // What an upstream may ask for at most; a larger (or unreadable) number is ignored, never
    // converted: 1e300 seconds has no duration.
    constexpr double most_seconds = 24 * 60 * 60;
    auto number = [](std::string_view text, double scale) -> std::optional<double> {
        while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
        while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
            value < 0 || value / scale > most_seconds)
            return std::nullopt;
        return value;
    };
    if (auto ms = number(retry_after_ms, 1000))
        return std::chrono::duration_cast<config::duration>(
            std::chrono::duration<double, std::milli>(*ms));
    if (auto s = number(retry_after, 1))
        return std::chrono::duration_cast<config::duration>(std::chrono::duration<double>(*s));
    return std::nullopt;
}

verdict judge_status(unsigned status, std::string_view body, credential presented) {
    if (status >= 200 && status < 300) return verdict::success;
    bool gateways = presented == credential::gateway;
    if (status == 401) return gateways ? verdict::key_refused : verdict::client_error;
    if (status == 403) return gateways ? verdict::refused : verdict::client_error;
    if (status == 429 && presented == credential::client) return verdict::declined;
    if (status == 408 || status == 429 || status >= 500) return verdict::failed;
    if (status == 400 && says_context_window(body)) return verdict::context_window;
    return verdict::client_error;
}

route_table::route_table(const std::vector<config::upstream_config>& upstreams,
                         const std::vector<config::route_config>& routes,
                         const model_router& router)
    : upstreams_(upstreams), routes_(routes), router_(router) {}

routing::routing(const std::vector<config::upstream_config>& upstreams,
                 const std::vector<config::route_config>& routes, config::health_config health,
                 const std::vector<std::shared_ptr<token_source>>& tokens)
    : upstreams_(upstreams),
      settings_(health),
      router_(upstreams),
      table_(upstreams, routes, router_),
      health_(health, names(upstreams)) {
    bool probed = std::any_of(upstreams_.begin(), upstreams_.end(), [&](const auto& u) {
        return probe_interval_of(u, settings_).count() > 0;
    });
    if (probed) prober_ = std::make_unique<prober>(upstreams_, settings_, health_, tokens);
}

routing::~routing() {
    stop();
}

void routing::stop() {
    if (prober_) prober_->stop();
    catalog_.stop();
}

const config::route_config* route_table::find(std::string_view model) const {
    for (const auto& r : routes_)
        if (config::glob_match(r.model, model)) return &r;
    return nullptr;
}

route_table::takers route_table::takers_of(std::string_view model) const {
    takers t;
    t.route = find(model);
    if (!t.route) t.matched = router_.match(model);
    return t;
}

const config::route_config& route_table::route(std::optional<std::string_view> model,
                                               config::route_config& scratch) const {
    std::size_t index = 0;  // no model, or no upstream's glob takes it: the first upstream
    if (model) {
        auto t = takers_of(*model);
        if (t.route) return *t.route;
        index = t.matched.value_or(0);
    }
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

attempt_plan::attempt_plan(const config::route_config& route, health_board& health, reporting,
                           clock::time_point started)
    : route_(route), health_(nullptr), reports_(&health), started_(started) {
    set_targets(route.targets);
}

void attempt_plan::set_targets(const std::vector<config::route_target>& targets) {
    targets_ = &targets;
    current_ = nullptr;  // its outcome was told before the switch
    again_ = false;
    tried_.clear();
    refused_.clear();
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
    if (reports_) reports_->upstream_succeeded(current_->index);
    why_ = "success";
}

void attempt_plan::failed(std::optional<config::duration> retry_after, clock::time_point now,
                          std::string_view error) {
    if (!current_) return;
    if (health_) health_->failed(slot(current_), now, retry_after, error);
    if (reports_) reports_->upstream_failed(current_->index, now, error, retry_after);
    ++failures_;
    asked_ = retry_after;
    why_ = "failed";
}

void attempt_plan::refused_key(clock::time_point now, std::string_view error) {
    if (!current_) return;
    if (health_) health_->refused_key(slot(current_), now, error);
    if (reports_)
        reports_->upstream_failed(current_->index, now,
                                  error.empty() ? "the gateway's key was refused" : error,
                                  reports_->max_cooldown());
    refused_.push_back(current_);
    why_ = "unusable";
}

void attempt_plan::declined(std::optional<config::duration> retry_after) {
    if (!current_) return;
    if (health_) health_->abandoned(slot(current_));
    ++failures_;
    asked_ = retry_after;
    why_ = "declined";
}

void attempt_plan::refused() {
    if (!current_) return;
    if (health_) health_->abandoned(slot(current_));
    refused_.push_back(current_);
    why_ = "refused";
}

void attempt_plan::abandoned() {
    if (!current_) return;
    if (health_) health_->abandoned(slot(current_));
    why_ = "unsupported";  // the request was not for it (or the client left: no next attempt)
}

void attempt_plan::judged(verdict v, std::optional<config::duration> retry_after,
                          std::string_view error) {
    switch (v) {
        case verdict::failed:
            failed(retry_after, clock::now(), error);
            break;
        case verdict::key_refused:
            refused_key(clock::now(), error);
            break;
        case verdict::declined:
            declined(retry_after);
            break;
        case verdict::refused:
            refused();
            break;
        case verdict::success:
        case verdict::client_error:
        case verdict::context_window:
            abandoned();
            break;
    }
}

bool attempt_plan::spend_resend(clock::time_point now) {
    if (attempts_ >= static_cast<int>(route_.max_attempts)) return false;
    if (auto rest = left(now); rest && rest->count() == 0) return false;
    ++attempts_;
    return true;
}

config::duration attempt_plan::backoff(clock::time_point now) const {
    using namespace std::chrono_literals;
    constexpr config::duration most = 60s;
    if (!again_ || failures_ == 0) return config::duration(0);  // nothing failed: no wait
    auto doubled = config::duration(500ms) * (1 << std::min(failures_ - 1, 7));
    auto wait = std::min(asked_.value_or(doubled), most);
    if (auto rest = left(now)) wait = std::min(wait, std::chrono::ceil<config::duration>(*rest));
    return wait;
}

config::duration attempt_plan::first_byte_timeout(config::duration upstream_own,
                                                  clock::time_point now) const {
    auto wait = route_.first_byte_timeout.count() > 0 ? route_.first_byte_timeout : upstream_own;
    if (auto rest = left(now)) {
        // At least a millisecond: a zero would mean "the upstream's own".
        auto most = std::max(std::chrono::ceil<config::duration>(*rest), config::duration(1));
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
        if (targets_->empty() || !refused_.empty()) return nullptr;
        const auto* only = &targets_->front();
        again_ = only == current_;
        current_ = only;
        ++attempts_;
        return only;
    }
    using state = health_board::state;
    target_list fresh, again, cooled;
    for (const auto& t : *targets_) {
        if (std::find(refused_.begin(), refused_.end(), &t) != refused_.end()) continue;
        auto v = health_->look(slot(&t));
        // Its key refused: out until that ends, then probed like a cooled target.
        if (v.now == state::unusable && now < v.until) continue;
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
