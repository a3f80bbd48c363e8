#pragma once

#include "gateway/config/config.hpp"
#include "gateway/store/records.hpp"

#include <boost/asio/awaitable.hpp>

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::store {
class key_store;
}

namespace gateway::admin {

class key_ring;
class limiter;

// A team as the gateway holds it: the configuration's `teams:` and those made through
// /admin/teams. Its model list and USD budget bound every key it owns.
struct team {
    config::team_config settings;
    bool declared = false;        // from the configuration: read-only through the API
    std::int64_t created_at = 0;  // Unix ms; 0 for a declared team

    bool allows_model(std::string_view model) const;
};

// The budget account a team's USD budget is counted in by the limiter, beside its keys' own:
// "team:<name>" (no key id has a colon).
std::string team_account(std::string_view name);

// Every team, found by name. A change replaces a team's entry whole, so a reader holds a
// consistent snapshot of it. Declared teams win over stored ones of the same name. Thread-safe.
class team_book {
public:
    explicit team_book(const std::vector<config::team_config>& declared);

    std::shared_ptr<const team> by_name(std::string_view name) const;
    std::vector<std::shared_ptr<const team>> all() const;

    // Adds or replaces a made team; false when a declared team has the name.
    bool put(team made);
    // Removes a made team; false when there is none of the name (or it is declared).
    bool remove(std::string_view name);
    // What the store holds (at start, and when another replica changed it): the made teams,
    // replaced whole; declared ones stay.
    void adopt(const std::vector<store::team_record>& records);
    // The configuration's teams after a reload: those it no longer names go, the others are
    // put as declared now; made ones stay.
    void declare(const std::vector<config::team_config>& declared);

private:
    mutable std::shared_mutex mutex_;
    std::map<std::string, std::shared_ptr<const team>, std::less<>> teams_;
};

// Seeds `limits` with what each team with a USD budget spent in its budget period of `now_ms`
// (the usage of every key it owns, revoked ones included) when it counts in memory, as
// seed_from_store does for keys. The usage ledger is flushed by the caller first.
boost::asio::awaitable<void> seed_teams_from_store(limiter& limits, store::key_store& store,
                                                   const team_book& teams, const key_ring& keys,
                                                   std::int64_t now_ms);

}  // namespace gateway::admin
