#include "gateway/admin/teams.hpp"

#include "gateway/admin/key_ring.hpp"
#include "gateway/admin/limiter.hpp"
#include "gateway/admin/usage_ledger.hpp"
#include "gateway/config/glob.hpp"
#include "gateway/store/state_store.hpp"

#include <mutex>

namespace gateway::admin {

bool team::allows_model(std::string_view model) const {
    for (const auto& glob : settings.models)
        if (config::glob_match(glob, model)) return true;
    return false;
}

std::string team_account(std::string_view name) {
    return "team:" + std::string(name);
}

team_book::team_book(const std::vector<config::team_config>& declared) {
    declare(declared);
}

std::shared_ptr<const team> team_book::by_name(std::string_view name) const {
    std::shared_lock lock(mutex_);
    auto it = teams_.find(name);
    return it == teams_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const team>> team_book::all() const {
    std::shared_lock lock(mutex_);
    std::vector<std::shared_ptr<const team>> out;
    for (const auto& [name, t] : teams_) out.push_back(t);
    return out;
}

bool team_book::put(team made) {
    std::unique_lock lock(mutex_);
    auto name = made.settings.name;
    auto it = teams_.find(name);
    if (it != teams_.end() && it->second->declared) return false;
    made.declared = false;
    teams_[name] = std::make_shared<const team>(std::move(made));
    return true;
}

bool team_book::remove(std::string_view name) {
    std::unique_lock lock(mutex_);
    auto it = teams_.find(name);
    if (it == teams_.end() || it->second->declared) return false;
    teams_.erase(it);
    return true;
}

void team_book::adopt(const std::vector<store::team_record>& records) {
    std::unique_lock lock(mutex_);
    std::erase_if(teams_, [](const auto& entry) { return !entry.second->declared; });
    for (const auto& r : records)
        if (!teams_.contains(r.team.name))
            teams_[r.team.name] = std::make_shared<const team>(team{r.team, false, r.created_at});
}

void team_book::declare(const std::vector<config::team_config>& declared) {
    std::unique_lock lock(mutex_);
    std::erase_if(teams_, [](const auto& entry) { return entry.second->declared; });
    for (const auto& t : declared) teams_[t.name] = std::make_shared<const team>(team{t, true, 0});
}

boost::asio::awaitable<void> seed_teams_from_store(limiter& limits, store::key_store& store,
                                                   const team_book& teams, const key_ring& keys,
                                                   std::int64_t now_ms) {
    if (!limits.counts_in_memory()) co_return;
    auto budgeted = teams.all();
    std::erase_if(budgeted, [](const auto& t) { return !t->settings.budget_usd_nano; });
    if (budgeted.empty()) co_return;
    std::map<std::string, std::string> team_of_key;
    auto stored = co_await store.keys();
    for (const auto& r : stored) team_of_key[r.key.id] = r.key.team;
    for (const auto& k : keys.all()) team_of_key[k->id] = k->team;
    for (const auto& t : budgeted) {
        auto start = period_start(t->settings.budget_period, now_ms);
        store::usage_query q;
        q.from_day = utc_day(start);
        q.by_model = false;
        auto rows = co_await store.usage(q);
        std::uint64_t usd_nano = 0;
        for (const auto& row : rows)
            if (team_of_key[row.key_id] == t->settings.name)
                usd_nano += static_cast<std::uint64_t>(std::max<std::int64_t>(row.usd_nano, 0));
        limits.seed(team_account(t->settings.name), start, 0, usd_nano);
    }
}

}  // namespace gateway::admin
