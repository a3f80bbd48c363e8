#include "gateway/admin/api.hpp"

#include "gateway/admin/limiter.hpp"
#include "gateway/admin/teams.hpp"
#include "gateway/admin/usage_ledger.hpp"
#include "gateway/admin/usage_report.hpp"
#include "gateway/clock.hpp"
#include "gateway/http/request_values.hpp"
#include "gateway/http/streaming.hpp"
#include "gateway/observability/log.hpp"
#include "gateway/providers/conversation.hpp"
#include "gateway/store/state_store.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>

#include <charconv>
#include <cmath>
#include <map>

namespace gateway::admin {

namespace json = boost::json;
namespace bhttp = boost::beast::http;

namespace {

http::reply bad(std::string message) {
    return http::reply::error(errc::invalid_parameters, message);
}

// Two keys of one name would share their metric series and be told apart nowhere.
http::reply name_taken(const std::string& name) {
    return http::reply::error(errc::conflict, "Another key is named `" + name +
                                                  "`: key names are unique, those in the "
                                                  "configuration included.");
}

}  // namespace

std::optional<std::uint64_t> usd_of(const json::value& v) {
    if (v.is_string()) return config::parse_usd(v.get_string());
    if (v.is_int64() || v.is_uint64()) return config::parse_usd(json::serialize(v));
    if (!v.is_double() || !std::isfinite(v.get_double()) || v.get_double() < 0) return std::nullopt;
    char text[64];
    auto [end, ec] =
        std::to_chars(text, text + sizeof text, v.get_double(), std::chars_format::fixed);
    if (ec != std::errc()) return std::nullopt;
    return config::parse_usd(std::string_view(text, static_cast<std::size_t>(end - text)));
}

namespace {

// Applies the members of `body` that describe a key to `key`; the error names the member.
std::string apply(const json::object& body, virtual_key& key, bool creating) {
    static constexpr std::string_view known[] = {
        "name", "models", "rpm", "tpm", "max_parallel", "budget", "expires_at", "team", "user"};
    for (const auto& [name, value] : body) {
        bool ok = false;
        for (auto k : known) ok = ok || name == k;
        if (!ok) return "unknown member `" + std::string(name) + "`";
    }
    // The owner is chosen once, when the key is made (api::create_key reads it).
    if (!creating && (body.contains("team") || body.contains("user")))
        return "a key's owner (`team`, `user`) is fixed when it is made";
    if (const auto* v = body.if_contains("name")) {
        if (!v->is_string() || !config::valid_key_name(v->get_string()))
            return "`name` must be " + std::string(config::key_name_rule);
        key.name = std::string(v->get_string());
    } else if (creating) {
        return "`name` is required";
    }
    if (const auto* v = body.if_contains("models")) {
        if (!v->is_array()) return "`models` must be a list of model name globs";
        key.models.clear();
        for (const auto& m : v->get_array()) {
            if (!m.is_string() || m.get_string().empty())
                return "`models` must be a list of non-empty strings";
            key.models.emplace_back(m.get_string());
        }
    }
    auto count = [&](const json::object& o, std::string_view name,
                     std::uint64_t& into) -> std::string {
        const auto* v = o.if_contains(name);
        if (!v || v->is_null()) return {};
        if (v->is_int64() && v->get_int64() >= 0) {
            into = static_cast<std::uint64_t>(v->get_int64());
            return {};
        }
        if (v->is_uint64()) {
            into = v->get_uint64();
            return {};
        }
        return "`" + std::string(name) + "` must be a whole number, 0 or more (0: no limit)";
    };
    for (auto [name, into] : {std::pair<std::string_view, std::uint64_t*>{"rpm", &key.rpm},
                              {"tpm", &key.tpm},
                              {"max_parallel", &key.max_parallel}})
        if (auto error = count(body, name, *into); !error.empty()) return error;
    if (const auto* v = body.if_contains("budget"); v && !v->is_null()) {
        if (!v->is_object()) return "`budget` must be {usd, tokens, period}";
        const auto& b = v->get_object();
        for (const auto& [name, value] : b)
            if (name != "usd" && name != "tokens" && name != "period")
                return "unknown member `budget." + std::string(name) + "`";
        if (const auto* usd = b.if_contains("usd"); usd && !usd->is_null()) {
            auto nano = usd_of(*usd);
            if (!nano)
                return "`budget.usd` must be an amount of USD such as 25.00 (0: no budget), "
                       "up to 9 decimals";
            key.budget_usd_nano = *nano;
        }
        if (auto error = count(b, "tokens", key.budget_tokens); !error.empty())
            return "`budget." + error.substr(1);
        if (const auto* p = b.if_contains("period")) {
            auto period = p->is_string() ? config::budget_period_of(p->get_string()) : std::nullopt;
            if (!period) return "`budget.period` must be day, week or month";
            key.budget_period = *period;
        }
    }
    if (const auto* v = body.if_contains("expires_at")) {
        if (v->is_null()) {
            key.expires_at = 0;
        } else if (v->is_string()) {
            auto at = config::parse_time(v->get_string());
            if (!at) return "`expires_at` must be a time such as 2027-01-31T12:00:00Z";
            key.expires_at = *at;
        } else {
            return "`expires_at` must be a time such as 2027-01-31T12:00:00Z, or null";
        }
    }
    return {};
}

struct key_usage {
    std::int64_t requests = 0;
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t budget_used = 0;  // tokens in the budget period
    std::int64_t spent_nano = 0;   // USD in the budget period
};

json::object key_json(const virtual_key& k, const key_usage& used) {
    json::array models;
    for (const auto& m : k.models) models.emplace_back(m);
    json::object o{
        {"id", k.id},
        {"object", "virtual_key"},
        {"name", k.name},
        {"models", std::move(models)},
        {"rpm", k.rpm},
        {"tpm", k.tpm},
        {"max_parallel", k.max_parallel},
        {"budget",
         {{"usd", static_cast<double>(k.budget_usd_nano) / 1e9},
          {"tokens", k.budget_tokens},
          {"period", config::budget_period_name(k.budget_period)}}},
        {"source", k.declared ? "config" : "api"},
        {"usage",
         {{"requests", used.requests},
          {"input_tokens", used.input},
          {"output_tokens", used.output},
          {"total_tokens", used.input + used.output},
          {"budget_used", used.budget_used},
          {"spent_usd", static_cast<double>(used.spent_nano) / 1e9}}},
    };
    o["team"] = k.team.empty() ? json::value(nullptr) : json::value(k.team);
    o["user"] = k.user.empty() ? json::value(nullptr) : json::value(k.user);
    o["expires_at"] = k.expires_at ? json::value(config::format_time(k.expires_at)) : nullptr;
    o["created_at"] = k.created_at ? json::value(config::format_time(k.created_at)) : nullptr;
    return o;
}

}  // namespace

api::api(key_ring& keys, team_book& teams, store::state_store& store, usage_ledger& ledger,
         limiter& limits, routing_now routing)
    : keys_(keys),
      teams_(teams),
      store_(store),
      ledger_(ledger),
      limits_(limits),
      routing_(std::move(routing)) {}

namespace {

std::int64_t ms_between(upstream::clock::time_point from, upstream::clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// What a record adds beside a state: since when, and the last failure (kept after a recovery).
void describe(json::object& o, upstream::health_status status,
              const upstream::health_board::record& seen) {
    o["health"] = upstream::health_status_name(status);
    o["since"] = seen.since ? json::value(config::format_time(seen.since)) : nullptr;
    o["last_error"] = seen.last_error_at ? json::value(seen.last_error) : nullptr;
    o["last_error_at"] =
        seen.last_error_at ? json::value(config::format_time(seen.last_error_at)) : nullptr;
}

}  // namespace

net::awaitable<http::reply> api::health(http::request_context&) {
    using state = upstream::health_board::state;
    using board = upstream::health_board;
    auto now = upstream::clock::now();
    auto routing = routing_();
    const auto& table = routing->table();
    auto& health = routing->health();
    json::array routes;
    for (const auto& r : table.routes()) {
        json::array targets;
        for (const auto* list : {&r.targets, &r.on_context_window})
            for (const auto& t : *list) {
                auto model = upstream::target_model(t, r.model);
                auto s = health.of(t.index, model);
                auto now_state = s ? s->now : state::healthy;
                static constexpr std::string_view names[] = {"healthy", "cooled", "probing",
                                                             "unusable"};
                json::object o{
                    {"upstream", t.upstream},
                    {"model", t.model.empty() ? json::value(nullptr) : json::value(t.model)},
                    {"state", names[static_cast<int>(now_state)]},
                    {"failures_in_a_row", s ? s->failures : 0},
                    {"in_flight", s ? s->in_flight : 0}};
                if (list == &r.on_context_window) o["on_context_window"] = true;
                // A cooldown that ended reads 0: the target stays out of `healthy` until a
                // request shows it back (its `health` says `down`).
                if (now_state == state::unusable)
                    o["unusable_for_ms"] = std::max<std::int64_t>(0, ms_between(now, s->until));
                if (now_state == state::cooled)
                    o["cooled_for_ms"] = std::max<std::int64_t>(0, ms_between(now, s->until));
                if (s && s->first_byte_ms) o["first_byte_ms"] = *s->first_byte_ms;
                describe(o, board::status_of(s, now), s ? s->seen : board::record{});
                targets.push_back(std::move(o));
            }
        routes.push_back(json::object{{"model", r.model},
                                      {"strategy", config::route_strategy_name(r.strategy)},
                                      {"targets", std::move(targets)}});
    }
    // Every upstream, whether a route names it or a model reaches it by its globs.
    json::array upstreams;
    const auto& ups = table.upstreams();
    for (std::size_t i = 0; i < ups.size(); ++i) {
        auto u = health.upstream_of(i).value_or(board::upstream_state{});
        auto status = board::status_of(u, now);
        json::object o{{"name", ups[i].name},
                       {"provider", providers::provider_name(ups[i].provider)},
                       {"failures_in_a_row", u.failures}};
        describe(o, status, u.seen);
        if (status == upstream::health_status::cooling)
            o["cooling_for_ms"] = ms_between(now, u.until);
        auto interval = upstream::probe_interval_of(ups[i], routing->health_settings());
        o["probe_interval_ms"] =
            interval.count() ? json::value(interval.count()) : json::value(nullptr);
        o["last_probe_at"] =
            u.last_probe_at ? json::value(config::format_time(u.last_probe_at)) : nullptr;
        upstreams.push_back(std::move(o));
    }
    co_return http::reply::json(
        200, json::object{{"upstreams", std::move(upstreams)}, {"routes", std::move(routes)}});
}

namespace {

using namespace net::experimental::awaitable_operators;

// How often a followed log looks for new lines: a human reads it, and a timer per follower is
// cheaper than waking followers on every worker's thread for every request.
constexpr auto log_poll = std::chrono::milliseconds(200);

// The last event of a follower dropped for falling behind (see access_follower), for the
// console to show why its log stopped.
const std::string dropped_event =
    "event: dropped\ndata: {\"reason\":\"slow_reader\",\"message\":\"This follower fell more "
    "than " +
    std::to_string(observability::follow_queue_bytes) +
    " bytes of access lines behind and was dropped; lines were lost. Follow again to go "
    "on.\"}\n\n";

// Writes the access lines as `data:` events (one chunk per batch) until a write fails, or until
// the follower is dropped for not reading: then an `event: dropped` ends the stream.
net::awaitable<void> follow_log(http::request_context& ctx, observability::access_follower& f,
                                http::body_stream& body) {
    co_await net::this_coro::throw_if_cancelled(false);
    net::steady_timer timer(ctx.stream.get_executor());
    auto quiet = std::chrono::steady_clock::now();
    auto heartbeat = http::heartbeat(ctx.server);
    for (;;) {
        std::string frames;
        auto taken = f.take();
        for (const auto& line : taken.lines) frames += "data: " + line + "\n\n";
        if (taken.dropped) frames += dropped_event;
        if (frames.empty() && std::chrono::steady_clock::now() - quiet >= heartbeat)
            frames = ": keep-alive\n\n";
        if (!frames.empty()) {
            if (!co_await body.write(frames)) co_return;
            quiet = std::chrono::steady_clock::now();
        }
        if (taken.dropped) {
            co_await body.end();
            co_return;
        }
        timer.expires_after(log_poll);
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;  // the client left
    }
}

}  // namespace

net::awaitable<http::reply> api::request_log(http::request_context&) {
    co_return http::reply::streamed([](http::request_context& ctx) -> net::awaitable<void> {
        // Following from now: the lines of requests that end after this one began.
        observability::access_follower follower;
        http::body_stream body(ctx);
        const std::vector<std::pair<std::string, std::string>> fields{
            {"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}};
        if (!co_await body.begin(200, fields)) co_return;
        co_await (follow_log(ctx, follower, body) || http::client_leaves(ctx));
        ctx.keep_alive = false;
    });
}

http::guard api::guard() const {
    return {
        "/admin",
        [](const bhttp::request_header<>&, const auth::principal* who) { return who != nullptr; },
        errc::unauthorized,
        "The admin API needs `Authorization: Bearer <admin.api_key>` or a signed-in "
        "session (GET /auth/login)."};
}

namespace {

// Usage per key: all time, and in each key's current budget period (tokens and USD).
net::awaitable<std::map<std::string, key_usage>> usage_by_key(store::key_store& store,
                                                              usage_ledger& ledger,
                                                              const key_ring& keys) {
    co_await ledger.flush();
    std::map<std::string, key_usage> out;
    store::usage_query all;
    auto totals = co_await store.usage(all);
    for (const auto& r : totals) {
        auto& u = out[r.key_id];
        u.requests += r.requests;
        u.input += r.input_tokens;
        u.output += r.output_tokens;
    }
    // Every period that holds today starts within this month or this ISO week (which may have
    // begun last month).
    auto now = now_ms();
    store::usage_query recent;
    recent.from_day = utc_day(std::min(period_start(config::budget_period::month, now),
                                       period_start(config::budget_period::week, now)));
    recent.by_day = true;
    auto days = co_await store.usage(recent);
    for (const auto& r : days) {
        auto key = keys.by_id(r.key_id);
        if (!key || r.day < utc_day(period_start(key->budget_period, now))) continue;
        auto& u = out[r.key_id];
        u.budget_used += r.input_tokens + r.output_tokens;
        u.spent_nano += r.usd_nano;
    }
    co_return out;
}

}  // namespace

net::awaitable<http::reply> api::create_key(http::request_context& ctx) {
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    if (!body) co_return bad(error);
    virtual_key key;
    if (auto problem = apply(*body, key, true); !problem.empty()) co_return bad(problem);
    auto owner = key_owner_asked(*body, *ctx.principal);
    if (!owner.team.empty() && !owner.user.empty())
        co_return bad("a key has one owner: `team` or `user`, not both");
    if (!owner.team.empty() && !teams_.by_name(owner.team))
        co_return bad("`team`: no team is named `" + owner.team + "` (GET /admin/teams)");
    if (!owner.user.empty()) {
        auto user = co_await store_.user(owner.user);
        if (!user) co_return bad("`user`: no user has the id `" + owner.user + "`");
    }
    key.team = owner.team;
    key.user = owner.user;
    key.id = new_key_id();
    auto secret = new_secret();
    key.digest = config::key_digest(secret);
    key.created_at = now_ms();
    // Into the ring first, where taking the name is one step with adding the key.
    if (keys_.put_named(key) == key_ring::named_put::name_taken) co_return name_taken(key.name);
    co_await store_.save_key(key);
    auto view = key_json(key, {});
    view["key"] = secret;
    co_return http::reply::json(201, view);
}

net::awaitable<http::reply> api::list_keys(http::request_context& ctx) {
    auto used = co_await usage_by_key(store_, ledger_, keys_);
    json::array data;
    // A named list: a temporary's lifetime across a co_await in the loop is a GCC 12 trap.
    auto live = keys_.all();
    for (const auto& k : live) {
        auto of = co_await owner_of_key(*k);
        if (sees(*ctx.principal, of)) data.push_back(key_json(*k, used[k->id]));
    }
    co_return http::reply::json(200, json::object{{"object", "list"}, {"data", std::move(data)}});
}

net::awaitable<http::reply> api::get_key(http::request_context& ctx) {
    auto key = keys_.by_id(ctx.path_params.at(0));
    if (!key) co_return http::reply::error(errc::not_found, "No such key.");
    auto used = co_await usage_by_key(store_, ledger_, keys_);
    co_return http::reply::json(200, key_json(*key, used[key->id]));
}

net::awaitable<http::reply> api::update_key(http::request_context& ctx) {
    auto found = keys_.by_id(ctx.path_params.at(0));
    if (!found) co_return http::reply::error(errc::not_found, "No such key.");
    if (found->declared)
        co_return http::reply::error(errc::conflict,
                                     "This key is declared in the configuration; change it there.");
    std::string error;
    auto body = http::body_object(ctx.req.body(), error);
    if (!body) co_return bad(error);
    auto key = *found;
    if (auto problem = apply(*body, key, false); !problem.empty()) co_return bad(problem);
    // Into the ring first, where taking a new name is one step with the change; a key revoked
    // meanwhile is refused. A DELETE that answers while the store writes still wins: the store's
    // upsert leaves revoked_at alone.
    switch (keys_.put_named(key)) {
        case key_ring::named_put::name_taken:
            co_return name_taken(key.name);
        case key_ring::named_put::refused:
            co_return http::reply::error(errc::not_found, "No such key.");
        case key_ring::named_put::done:
            break;
    }
    co_await store_.save_key(key);
    // A budget period the limiter does not count yet for the key starts from what it spent.
    auto used = co_await usage_by_key(store_, ledger_, keys_);
    std::vector<std::shared_ptr<const virtual_key>> changed{keys_.by_id(key.id)};
    co_await seed_from_store(limits_, store_, std::move(changed), now_ms());
    co_return http::reply::json(200, key_json(key, used[key.id]));
}

net::awaitable<http::reply> api::delete_key(http::request_context& ctx) {
    auto id = ctx.path_params.at(0);
    auto found = keys_.by_id(id);
    if (!found) co_return http::reply::error(errc::not_found, "No such key.");
    if (found->declared)
        co_return http::reply::error(errc::conflict,
                                     "This key is declared in the configuration; remove it there.");
    // Out of the ring first: the next request with it is refused even while the store writes.
    keys_.remove(id);
    co_await store_.revoke_key(id);
    co_return http::reply::json(
        200, json::object{{"id", id}, {"object", "virtual_key"}, {"deleted", true}});
}

net::awaitable<http::reply> api::usage(http::request_context& ctx) {
    usage_request asked;
    if (auto error = usage_request_of(ctx.req.target(), asked); !error.empty())
        co_return bad(error);
    co_await ledger_.flush();
    const auto& who = *ctx.principal;
    // Anyone but an admin sees the usage of the keys they may see; a team's is its keys'.
    if (asked.team.empty() && !asked.by_team && who.is_admin()) {
        auto rows = co_await store_.usage(asked.query);
        co_return usage_reply(rows, asked, keys_, now_ms());
    }
    auto per_key = asked.query;
    per_key.by_key = true;
    auto rows = co_await store_.usage(per_key);
    // Each key's owner, revoked keys' too (their usage stays their owner's).
    std::map<std::string, auth::owner> owners;
    auto stored = co_await store_.keys();
    for (const auto& r : stored) {
        auto of = co_await owner_of_key(r.key);
        owners[r.key.id] = std::move(of);
    }
    auto live = keys_.all();
    for (const auto& k : live) {
        auto of = co_await owner_of_key(*k);
        owners[k->id] = std::move(of);
    }
    std::vector<store::usage_row> kept;
    for (auto& r : rows) {
        auto of = owners.find(r.key_id);
        auto owner = of == owners.end() ? auth::owner{} : of->second;
        if (!sees(who, owner) || (!asked.team.empty() && owner.team != asked.team)) continue;
        r.team = owner.team;
        kept.push_back(std::move(r));
    }
    co_return usage_reply(regroup(kept, asked), asked, keys_, now_ms());
}

}  // namespace gateway::admin
