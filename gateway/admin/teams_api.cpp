// /admin/teams: teams, whose budget and models bound every key they own (teams.hpp).
#include "gateway/admin/api.hpp"

#include "gateway/admin/limiter.hpp"
#include "gateway/admin/teams.hpp"
#include "gateway/admin/usage_ledger.hpp"
#include "gateway/clock.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/json.hpp>

#include <map>

namespace gateway::admin {

namespace json = boost::json;

namespace {

http::reply bad(std::string message) {
    return http::reply::error(errc::invalid_parameters, std::move(message));
}

// Applies the members of `body` that describe a team to `t`; the error names the member.
std::string apply(const json::object& body, config::team_config& t, bool creating) {
    for (const auto& [name, value] : body)
        if (name != "name" && name != "budget" && name != "models")
            return "unknown member `" + std::string(name) + "`";
    if (const auto* v = body.if_contains("name")) {
        if (!v->is_string() || !config::valid_key_name(v->get_string()))
            return "`name` must be " + std::string(config::key_name_rule);
        if (!creating && v->get_string() != t.name) return "a team's `name` cannot change";
        t.name = std::string(v->get_string());
    } else if (creating) {
        return "`name` is required";
    }
    if (const auto* v = body.if_contains("models")) {
        if (!v->is_array()) return "`models` must be a list of model name globs";
        t.models.clear();
        for (const auto& m : v->get_array()) {
            if (!m.is_string() || m.get_string().empty())
                return "`models` must be a list of non-empty strings";
            t.models.emplace_back(m.get_string());
        }
    }
    if (const auto* v = body.if_contains("budget"); v && !v->is_null()) {
        if (!v->is_object()) return "`budget` must be {usd, period}";
        const auto& b = v->get_object();
        for (const auto& [name, value] : b)
            if (name != "usd" && name != "period")
                return "unknown member `budget." + std::string(name) + "`";
        if (const auto* usd = b.if_contains("usd"); usd && !usd->is_null()) {
            auto nano = usd_of(*usd);
            if (!nano)
                return "`budget.usd` must be an amount of USD such as 500.00 (0: no budget), "
                       "up to 9 decimals";
            t.budget_usd_nano = *nano;
        }
        if (const auto* p = b.if_contains("period")) {
            auto period = p->is_string() ? config::budget_period_of(p->get_string()) : std::nullopt;
            if (!period) return "`budget.period` must be day, week or month";
            t.budget_period = *period;
        }
    }
    return {};
}

json::object team_json(const team& t, std::int64_t spent_nano, std::size_t keys) {
    const auto& s = t.settings;
    json::array models;
    for (const auto& m : s.models) models.emplace_back(m);
    return json::object{
        {"object", "team"},
        {"name", s.name},
        {"budget",
         {{"usd", static_cast<double>(s.budget_usd_nano) / 1e9},
          {"period", config::budget_period_name(s.budget_period)}}},
        {"models", std::move(models)},
        {"source", t.declared ? "config" : "api"},
        {"keys", keys},
        {"spent_usd", static_cast<double>(spent_nano) / 1e9},
        {"created_at", t.created_at ? json::value(config::format_time(t.created_at)) : nullptr},
    };
}

}  // namespace

// What each team spent in its current budget period (the usage of every key it owns, revoked
// ones included) and how many live keys it owns.
net::awaitable<http::reply> api::list_teams(http::request_context& ctx) {
    const auto& who = *ctx.principal;
    co_await ledger_.flush();
    auto stored = co_await store_.keys();
    std::map<std::string, std::string> team_of_key;
    for (const auto& r : stored) team_of_key[r.key.id] = r.key.team;
    std::map<std::string, std::size_t> live_keys;
    for (const auto& k : keys_.all()) {
        team_of_key[k->id] = k->team;
        ++live_keys[k->team];
    }
    auto now = now_ms();
    store::usage_query recent;
    recent.from_day = utc_day(std::min(period_start(config::budget_period::month, now),
                                       period_start(config::budget_period::week, now)));
    recent.by_day = true;
    recent.by_model = false;
    auto days = co_await store_.usage(recent);
    json::array data;
    for (const auto& t : teams_.all()) {
        if (!sees(who, {t->settings.name, ""})) continue;
        auto from = utc_day(period_start(t->settings.budget_period, now));
        std::int64_t spent = 0;
        for (const auto& r : days)
            if (r.day >= from && team_of_key[r.key_id] == t->settings.name) spent += r.usd_nano;
        data.push_back(team_json(*t, spent, live_keys[t->settings.name]));
    }
    co_return http::reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<http::reply> api::create_team(http::request_context& ctx) {
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    if (!body) co_return bad(error);
    team made;
    if (auto problem = apply(*body, made.settings, true); !problem.empty()) co_return bad(problem);
    made.created_at = now_ms();
    if (teams_.by_name(made.settings.name))
        co_return http::reply::error(errc::conflict,
                                     "A team is named `" + made.settings.name + "` already.");
    if (!teams_.put(made))
        co_return http::reply::error(errc::conflict, "The team `" + made.settings.name +
                                                         "` is declared in the configuration.");
    store::team_record record{made.settings, made.created_at};
    co_await store_.save_team(std::move(record));
    co_await seed_teams_from_store(limits_, store_, teams_, keys_, now_ms());
    co_return http::reply::json(201, team_json(made, 0, 0));
}

net::awaitable<http::reply> api::update_team(http::request_context& ctx) {
    auto found = teams_.by_name(ctx.path_params.at(0));
    if (!found) co_return http::reply::error(errc::not_found, "No such team.");
    if (found->declared)
        co_return http::reply::error(
            errc::conflict, "This team is declared in the configuration; change it there.");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    if (!body) co_return bad(error);
    auto changed = *found;
    if (auto problem = apply(*body, changed.settings, false); !problem.empty())
        co_return bad(problem);
    teams_.put(changed);
    store::team_record record{changed.settings, changed.created_at};
    co_await store_.save_team(std::move(record));
    // A budget new to the limiter starts from what the team's keys spent.
    co_await ledger_.flush();
    co_await seed_teams_from_store(limits_, store_, teams_, keys_, now_ms());
    co_return http::reply::json(200, team_json(changed, 0, 0));
}

net::awaitable<http::reply> api::delete_team(http::request_context& ctx) {
    const auto& name = ctx.path_params.at(0);
    auto found = teams_.by_name(name);
    if (!found) co_return http::reply::error(errc::not_found, "No such team.");
    if (found->declared)
        co_return http::reply::error(
            errc::conflict, "This team is declared in the configuration; remove it there.");
    // A key's owner is fixed when it is made: a team that owns live keys stays until they go.
    for (const auto& k : keys_.all())
        if (k->team == name)
            co_return http::reply::error(errc::conflict, "The team `" + name +
                                                             "` owns live keys (such as `" +
                                                             k->name + "`): revoke them first.");
    teams_.remove(name);
    co_await store_.delete_team(name);
    co_return http::reply::json(
        200, json::object{{"name", name}, {"object", "team"}, {"deleted", true}});
}

}  // namespace gateway::admin
